package wgpu

import (
	"strings"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// incWGSL is y = x + 1, compiled by our WGSL compiler: the validation layer must see what its SPIR-V reads and
// writes.
const incWGSL = `@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { y[g.x] = x[g.x] + 1u; }`

// TestSyncValidationSeesHazards records each kind of hazard the encoder's barriers prevent, with the barriers left
// out, and checks that the validation layer's synchronization validation (which every GPU test runs under) reports
// it: between two dispatches of a WGSL kernel, and between a dispatch and a copy. A layer that runs without it (a
// manifest that lists neither extension wgpu asks for it with), or that does not look at what shaders access (a
// newer layer without syncval_shader_accesses_heuristic), fails here.
func TestSyncValidationSeesHazards(t *testing.T) {
	type rec func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer)
	for _, h := range []struct {
		name, id string
		rec      rec
	}{
		{"dispatch_reads_dispatch", "SYNC-HAZARD-READ-AFTER-WRITE", func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer) {
			k(a, b)
			k(b, c)
		}},
		{"dispatch_overwrites_dispatch", "SYNC-HAZARD-WRITE-AFTER-WRITE", func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer) {
			k(a, b)
			k(c, b)
		}},
		{"dispatch_overwrites_dispatch_input", "SYNC-HAZARD-WRITE-AFTER-READ", func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer) {
			k(b, c)
			k(a, b)
		}},
		{"copy_reads_dispatch", "SYNC-HAZARD-READ-AFTER-WRITE", func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer) {
			k(a, b)
			e.CopyBufferToBuffer(b, 0, d, 0, b.Size())
		}},
		{"dispatch_reads_copy", "SYNC-HAZARD-READ-AFTER-WRITE", func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer) {
			e.CopyBufferToBuffer(d, 0, a, 0, a.Size())
			k(a, b)
		}},
		{"copy_overwrites_dispatch_input", "SYNC-HAZARD-WRITE-AFTER-READ", func(e *CommandEncoder, k func(x, y *Buffer), a, b, c, d *Buffer) {
			k(a, b)
			e.CopyBufferToBuffer(d, 0, a, 0, a.Size())
		}},
	} {
		t.Run(h.name, func(t *testing.T) {
			env := newEnv(t)
			if !env.inst.ValidationEnabled() {
				prereq.Missing(t, "validation", "the Khronos validation layer is not installed (Debian: vulkan-validationlayers)")
			}
			if !env.inst.SyncValidationEnabled() {
				t.Skip("the validation layer runs without synchronization validation") // a failure under CI: newEnv
			}
			if h.id == "SYNC-HAZARD-WRITE-AFTER-WRITE" && env.inst.validationSpec < vk.MakeAPIVersion(1, 3, 250) {
				t.Skipf("the %s validation layer does not report write-after-write between dispatches", vk.VersionString(env.inst.validationSpec))
			}
			info := env.ad.Info()
			t.Logf("%s (%s %s), validation layer %s", info.Name, info.DriverName, info.DriverInfo, vk.VersionString(env.inst.validationSpec))
			d := env.dev
			m := wgslModule(t, d, "inc.wgsl", incWGSL)
			p := wgslPipeline(t, d, m, "main", nil, [3]uint32{64, 1, 1})
			bgl, err := p.GetBindGroupLayout(0)
			if err != nil {
				t.Fatal(err)
			}
			const size = 4096
			a, b, c, dd := newBuffer(t, d, size, storageRW), newBuffer(t, d, size, storageRW), newBuffer(t, d, size, storageRW), newBuffer(t, d, size, storageRW)
			e, err := d.CreateCommandEncoder(nil)
			if err != nil {
				t.Fatal(err)
			}
			e.skipBarriers = true
			k := func(x, y *Buffer) {
				g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: x}, {Binding: 1, Buffer: y}}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				ps := e.BeginComputePass(nil)
				ps.SetPipeline(p)
				ps.SetBindGroup(0, g)
				ps.DispatchWorkgroups(size/4/64, 1, 1)
				ps.End()
			}
			h.rec(e, k, a, b, c, dd)
			cb, err := e.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Queue().Submit(cb); err != nil {
				t.Fatal(err)
			}
			if err := d.Queue().WaitIdle(); err != nil {
				t.Fatal(err)
			}
			env.mu.Lock()
			defer env.mu.Unlock()
			var ids []string
			for _, m := range env.msgs {
				ids = append(ids, m.ID)
			}
			if !strings.Contains(strings.Join(ids, " "), h.id) {
				t.Errorf("no %s message for the missing barrier; got %v", h.id, env.msgs)
			}
			env.msgs = nil
		})
	}
}

// TestSyncValidationSeesHazardsAcrossSubmits leaves out the barrier that opens every command buffer and checks
// that the layer reports the hazard between submissions: a dispatch reading what the previous submission's
// dispatch wrote, and a dispatch reading what WriteBuffer uploaded through a staging copy (device buffers kept out
// of host-visible memory, as on a discrete GPU), which is submitted with it. CPU drivers never take the second path
// in the GPU suites (all their memory is host-visible), so this is where it is checked. Layers that validate each
// command buffer alone (Debian 12's 1.3.239) skip.
func TestSyncValidationSeesHazardsAcrossSubmits(t *testing.T) {
	for _, staged := range []bool{false, true} {
		name := map[bool]string{false: "previous_submission", true: "staged_upload"}[staged]
		t.Run(name, func(t *testing.T) {
			env := newEnvStaged(t, staged)
			if !env.inst.ValidationEnabled() {
				prereq.Missing(t, "validation", "the Khronos validation layer is not installed (Debian: vulkan-validationlayers)")
			}
			if !env.inst.SyncValidationEnabled() {
				t.Skip("the validation layer runs without synchronization validation") // a failure under CI: newEnv
			}
			if env.inst.validationSpec < vk.MakeAPIVersion(1, 3, 250) {
				t.Skipf("the %s validation layer checks each command buffer alone", vk.VersionString(env.inst.validationSpec))
			}
			d := env.dev
			m := wgslModule(t, d, "inc.wgsl", incWGSL)
			p := wgslPipeline(t, d, m, "main", nil, [3]uint32{64, 1, 1})
			bgl, err := p.GetBindGroupLayout(0)
			if err != nil {
				t.Fatal(err)
			}
			const size = 4096
			a, b, c := newBuffer(t, d, size, storageRW), newBuffer(t, d, size, storageRW), newBuffer(t, d, size, storageRW)
			// The first submission's fence stays unasked until the last is submitted: the layer, seeing it
			// signaled, would take that submission as done before the next (flaky on SwiftShader under load).
			holdFences = true
			defer func() { holdFences = false }()
			submit := func(x, y *Buffer, opening bool) {
				g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: x}, {Binding: 1, Buffer: y}}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				noOpeningBarrier = !opening
				e, err := d.CreateCommandEncoder(nil)
				noOpeningBarrier = false
				if err != nil {
					t.Fatal(err)
				}
				ps := e.BeginComputePass(nil)
				ps.SetPipeline(p)
				ps.SetBindGroup(0, g)
				ps.DispatchWorkgroups(size/4/64, 1, 1)
				ps.End()
				cb, err := e.Finish()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Queue().Submit(cb); err != nil {
					t.Fatal(err)
				}
			}
			if staged {
				if a.bytes() != nil {
					t.Fatal("device buffer is host-visible despite StageTransfers")
				}
				if err := d.Queue().WriteBuffer(a, 0, make([]byte, size)); err != nil {
					t.Fatal(err)
				}
				submit(a, b, false) // the upload's copy and this dispatch go in one vkQueueSubmit
			} else {
				submit(a, b, true)
				submit(b, c, false)
			}
			if err := d.Queue().WaitIdle(); err != nil {
				t.Fatal(err)
			}
			env.mu.Lock()
			defer env.mu.Unlock()
			var ids []string
			for _, m := range env.msgs {
				ids = append(ids, m.ID)
			}
			if !strings.Contains(strings.Join(ids, " "), "SYNC-HAZARD-READ-AFTER-WRITE") {
				t.Errorf("no SYNC-HAZARD-READ-AFTER-WRITE message for the missing barrier; got %v", env.msgs)
			}
			env.msgs = nil
		})
	}
}

// TestSyncValidationOnVulkanImpls runs the two tests above on every other Vulkan implementation
// $WGPU_TEST_VULKAN_IMPLS lists, with its own validation layer (CI: SwiftShader with Chromium's newer one), so that
// the GPU suites' runs there are known to check synchronization.
func TestSyncValidationOnVulkanImpls(t *testing.T) {
	prereq.RunOnVulkanImpls(t, "^TestSyncValidationSeesHazards(AcrossSubmits)?$", "", 5*time.Minute, "--- PASS: TestSyncValidationSeesHazards (")
}

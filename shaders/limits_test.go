package shaders

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// smallDevice are the limits of a small GPU, at Vulkan's minimum but for
// the storage buffers a stage (4 there; 8 here, as newer mobile GPUs offer):
// 16 KiB of workgroup memory, 128 invocations, 128 bytes of push constants,
// 256-byte binding offsets, bindings of 128 MiB.
var smallDevice = wgpu.Limits{
	MaxComputeWorkgroupStorageSize: 16 << 10, MaxComputeInvocationsPerWorkgroup: 128,
	MaxComputeWorkgroupSizeX: 128, MaxComputeWorkgroupSizeY: 128, MaxComputeWorkgroupSizeZ: 64,
	MaxStorageBuffersPerShaderStage: 8, MaxPushConstantSize: 128, MinStorageBufferOffsetAlignment: 256,
	MaxStorageBufferBindingSize: 1 << 27, MaxBindGroups: 4,
}

// TestGPT2SmallDevice: on a device lowered to a small GPU's limits
// (wgpu.DeviceDescriptor.LimitsCap), the kernels the host picks for those
// limits give the CPU path's NLLs, GPT-2 and Llama alike, every weight type
// (before, nll_combine.wgsl's fixed 256 invocations were refused); at
// Vulkan's minimum of 4 storage buffers a stage, which some kernels exceed,
// the model refuses with wgpu.ErrLimit naming the limit (never a wrong
// result or a crash).
func TestGPT2SmallDevice(t *testing.T) {
	d := newTestDevCapped(t, smallDevice)
	if l := d.dev.Limits(); l.MaxComputeWorkgroupStorageSize != 16<<10 || l.MinStorageBufferOffsetAlignment < 256 {
		t.Fatalf("the device's limits %+v are not the cap's", l)
	}
	ctx := context.Background()
	for _, m := range []*model.Model{synth.Peaked(synth.TinyConfig(), 7), synth.Peaked(synth.TinyLlamaConfig("qwen3"), 7)} {
		seqs := zipfSeqs(5, 4, m.Config.NPositions, m.Config.VocabSize)
		_, want, err := model.NewCPU(m, 0).LossPerToken(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		for _, f16 := range d.weightTypes() {
			tol := 1e-5
			if f16 {
				tol = 3e-4
			}
			g, err := NewGPT2(ctx, d.dev, m.Reader(), f16, nil)
			if err != nil {
				t.Fatalf("%s f16=%v: %v", m.Config.Arch, f16, err)
			}
			p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
			if err == nil {
				_, err = p.Wait(ctx)
			}
			if err != nil {
				t.Fatalf("%s f16=%v: %v", m.Config.Arch, f16, err)
			}
			for i, x := range p.PerToken() {
				if diff := math.Abs(float64(x) - float64(want[i])); diff > 20*tol*math.Max(1, float64(want[i])) {
					t.Fatalf("%s f16=%v: target %d: NLL %.7f, CPU %.7f", m.Config.Arch, f16, i, x, want[i])
				}
			}
			g.Close()
		}
	}

	minimum := smallDevice
	minimum.MaxStorageBuffersPerShaderStage = 4
	dm := newTestDevCapped(t, minimum)
	m := synth.Peaked(synth.TinyConfig(), 7)
	g, err := NewGPT2(ctx, dm.dev, m.Reader(), false, nil)
	if err == nil {
		defer g.Close()
		var p *Pending
		if p, err = g.SubmitWith(ctx, zipfSeqs(5, 2, 16, m.Config.VocabSize), 0, SubmitOptions{}); err == nil {
			_, err = p.Wait(ctx)
		}
	}
	if !errors.Is(err, wgpu.ErrLimit) || !strings.Contains(fmt.Sprint(err), "storage buffers, limit 4") {
		t.Errorf("at Vulkan's minimum limits: err = %v, want wgpu.ErrLimit naming the storage buffers", err)
	}
}

package wgpu

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fillWant is what the fill kernel writes: out[i] = i*3 + seed.
func fillWant(n int, seed uint32) []uint32 {
	w := make([]uint32, n)
	for i := range w {
		w[i] = uint32(i)*3 + seed
	}
	return w
}

func readU32(t *testing.T, d *Device, b *Buffer) []uint32 {
	t.Helper()
	raw := make([]byte, b.Size())
	if err := d.Queue().ReadBuffer(b, 0, raw); err != nil {
		t.Fatal(err)
	}
	out := make([]uint32, len(raw)/4)
	for i := range out {
		out[i] = uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24
	}
	return out
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// record records fn into a new encoder and finishes it; the command buffer is nil where Finish failed.
func record(t *testing.T, d *Device, fn func(e *CommandEncoder)) (*CommandBuffer, error) {
	t.Helper()
	e, err := d.CreateCommandEncoder(&CommandEncoderDescriptor{Label: "misuse"})
	if err != nil {
		t.Fatal(err)
	}
	fn(e)
	return e.Finish()
}

// recordDispatch records one dispatch of p over groups workgroups with g as bind group 0 and finishes the encoder.
func recordDispatch(t *testing.T, d *Device, p *ComputePipeline, g *BindGroup, groups [3]uint32) (*CommandBuffer, error) {
	t.Helper()
	return record(t, d, func(e *CommandEncoder) {
		c := e.BeginComputePass(nil)
		c.SetPipeline(p)
		c.SetBindGroup(0, g)
		c.DispatchWorkgroups(groups[0], groups[1], groups[2])
		c.End()
	})
}

// TestUseAfterClose passes each kind of closed object to the calls that hand its handle to the driver. Each must
// fail with ErrClosed, naming the object, and reach no driver (before, each of these crashed lavapipe with
// SIGSEGV or made the validation layer report a destroyed handle; newEnv fails a test on any layer message).
func TestUseAfterClose(t *testing.T) {
	const n = 256
	dispatch := func(pl *ComputePipeline, g *BindGroup) func(e *CommandEncoder) {
		return func(e *CommandEncoder) {
			p := e.BeginComputePass(nil)
			p.SetPipeline(pl)
			p.SetBindGroup(0, g)
			p.SetPushConstants(0, u32Bytes(n, 1))
			p.DispatchWorkgroups(1, 1, 1)
			p.End()
		}
	}
	for _, tc := range []struct {
		name string
		want string // in the error
		run  func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error
	}{
		{"bind group of a closed buffer", `buffer "closed"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			b.Close()
			_, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: k.layout, Entries: []BindGroupEntry{{Binding: 0, Buffer: b}}})
			return err
		}},
		{"bind group of a closed layout", `bind group layout "fill"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			k.layout.Close()
			_, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: k.layout, Entries: []BindGroupEntry{{Binding: 0, Buffer: b}}})
			return err
		}},
		{"pipeline layout of a closed bind group layout", `bind group layout "fill"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			k.layout.Close()
			_, err := d.CreatePipelineLayout(&PipelineLayoutDescriptor{BindGroupLayouts: []*BindGroupLayout{k.layout}, PushConstantSize: 8})
			return err
		}},
		{"pipeline of a closed SPIR-V module", `shader module "fill2"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "fill2", SPIRV: loadSPIRV(t, "fill")})
			if err != nil {
				t.Fatal(err)
			}
			m.Close()
			_, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Layout: k.pl, Module: m})
			return err
		}},
		{"pipeline of a closed pipeline layout", `pipeline layout "fill"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "fill2", SPIRV: loadSPIRV(t, "fill")})
			if err != nil {
				t.Fatal(err)
			}
			k.pl.Close()
			_, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Layout: k.pl, Module: m})
			return err
		}},
		{"dispatch with a closed pipeline", `compute pipeline "fill"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			k.pipe.Close()
			_, err := record(t, d, dispatch(k.pipe, g))
			return err
		}},
		{"dispatch with a closed bind group", `bind group "g"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			g.Close()
			_, err := record(t, d, dispatch(k.pipe, g))
			return err
		}},
		{"dispatch with a bind group of a closed buffer", `buffer "closed"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			b.Close()
			_, err := record(t, d, dispatch(k.pipe, g))
			return err
		}},
		{"copy from a closed buffer", `buffer "closed"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			o := newBuffer(t, d, 4*n, storageRW)
			b.Close()
			_, err := record(t, d, func(e *CommandEncoder) { e.CopyBufferToBuffer(b, 0, o, 0, 4*n) })
			return err
		}},
		{"clear of a closed buffer", `buffer "closed"`, func(t *testing.T, d *Device, k *kernel, b *Buffer, g *BindGroup) error {
			b.Close()
			_, err := record(t, d, func(e *CommandEncoder) { e.ClearBuffer(b, 0, 0) })
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			d := env.dev
			k := newKernel(t, d, "fill", 8, nil, BindingStorage)
			b, err := d.CreateBuffer(&BufferDescriptor{Label: "closed", Size: 4 * n, Usage: storageRW})
			if err != nil {
				t.Fatal(err)
			}
			g, err := d.CreateBindGroup(&BindGroupDescriptor{Label: "g", Layout: k.layout, Entries: []BindGroupEntry{{Binding: 0, Buffer: b}}})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.run(t, d, k, b, g)
			if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrClosed naming %s", err, tc.want)
			}
		})
	}
}

// TestUseAfterCloseQuerySet: a closed query set in a timestamp write or a resolve is ErrClosed (before: SIGSEGV in
// lavapipe's vkCmdResetQueryPool).
func TestUseAfterCloseQuerySet(t *testing.T) {
	env := newEnv(t, FeatureTimestampQuery)
	d := env.dev
	qs, err := d.CreateQuerySet(&QuerySetDescriptor{Label: "ts", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	R := newBuffer(t, d, 256, BufferUsageQueryResolve|BufferUsageCopySrc)
	qs.Close()
	for name, fn := range map[string]func(e *CommandEncoder){
		"WriteTimestamp":  func(e *CommandEncoder) { e.WriteTimestamp(qs, 0) },
		"ResolveQuerySet": func(e *CommandEncoder) { e.ResolveQuerySet(qs, 0, 2, R, 0) },
		"pass timestamps": func(e *CommandEncoder) {
			e.BeginComputePass(&ComputePassDescriptor{TimestampWrites: &PassTimestampWrites{QuerySet: qs, EndOfPassWriteIndex: 1}}).End()
		},
	} {
		_, err := record(t, d, fn)
		if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), `query set "ts"`) {
			t.Errorf("%s: error %v, want ErrClosed naming the query set", name, err)
		}
	}
}

// TestCloseWhileRecorded closes objects that a recording already uses. WebGPU allows it: the command buffer is
// refused at Submit. Their Vulkan objects must stay valid while the recording refers to them (the layer checks
// that nothing is destroyed under a command buffer), and be destroyed, memory returned, once the command buffer is
// released. A pipeline whose layout is closed keeps working.
func TestCloseWhileRecorded(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 256
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	O := newBuffer(t, d, 4*n, storageRW)
	g := k.group(t, d, O)
	// The pipeline outlives its layouts, as in WebGPU: before, its next dispatch crashed in vkCmdPushConstants.
	k.pl.Close()
	k.layout.Close()
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0, u32Bytes(n, 5))
		p.DispatchWorkgroups(1, 1, 1)
	})
	if got := readU32(t, d, O); !equalU32(got, fillWant(n, 5)) {
		t.Fatalf("dispatch after its layout was closed wrote %v...", got[:4])
	}

	before := d.MemoryStats().InUse
	B := newBuffer(t, d, 4*n, storageRW)
	e, err := d.CreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.CopyBufferToBuffer(O, 0, B, 0, 4*n)
	p := e.BeginComputePass(nil)
	p.SetPipeline(k.pipe)
	p.SetBindGroup(0, g)
	p.SetPushConstants(0, u32Bytes(n, 1))
	// Closed mid-recording, and in the middle of a pass that goes on using them.
	for _, c := range []interface{ Close() error }{B, g, k.pipe} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	p.DispatchWorkgroups(1, 1, 1)
	p.End()
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if s := d.MemoryStats(); s.InUse <= before {
		t.Errorf("the closed buffer's memory was returned while a command buffer still refers to it: %+v", s)
	}
	_, err = d.Queue().Submit(cb)
	isErr(t, err, ErrClosed)
	if err := cb.Close(); err != nil {
		t.Fatal(err)
	}
	if s := d.MemoryStats(); s.InUse != before {
		t.Errorf("after the command buffer's release: %d bytes in use, want %d", s.InUse, before)
	}
}

// TestPassArgumentOverflow: offsets and counts whose sum overflows uint32 are refused (before: SetPushConstants
// crashed lavapipe, the query ranges reached the driver out of bounds).
func TestPassArgumentOverflow(t *testing.T) {
	env := newEnv(t, FeatureTimestampQuery)
	d := env.dev
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	O := newBuffer(t, d, 1024, storageRW)
	g := k.group(t, d, O)
	_, err := record(t, d, func(e *CommandEncoder) {
		p := e.BeginComputePass(nil)
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0xFFFFFFFC, u32Bytes(256, 1))
		p.DispatchWorkgroups(1, 1, 1)
		p.End()
	})
	isErr(t, err, ErrBadUsage)

	qs, err := d.CreateQuerySet(&QuerySetDescriptor{Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	R := newBuffer(t, d, 256, BufferUsageQueryResolve|BufferUsageCopySrc)
	_, err = record(t, d, func(e *CommandEncoder) {
		e.WriteTimestamp(qs, 0)
		e.ResolveQuerySet(qs, 0xFFFFFFFF, 1, R, 0)
	})
	isErr(t, err, ErrBadUsage)
	cb, err := record(t, d, func(e *CommandEncoder) {
		e.WriteTimestamp(qs, 0)
		e.WriteTimestamp(qs, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Queue().Submit(cb); err != nil {
		t.Fatal(err)
	}
	_, err = qs.Read(0xFFFFFFFF, 1)
	isErr(t, err, ErrBadUsage)
	if _, err := qs.Read(0, 2); err != nil {
		t.Fatal(err)
	}
}

// TestPassAfterEnd: commands on an ended pass are an error of the encoder, and record nothing (before: they were
// recorded as if the pass were open).
func TestPassAfterEnd(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	O := newBuffer(t, d, 1024, storageRW)
	g := k.group(t, d, O)
	_, err := record(t, d, func(e *CommandEncoder) {
		p := e.BeginComputePass(nil)
		p.End()
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0, u32Bytes(256, 5))
		p.DispatchWorkgroups(1, 1, 1)
	})
	if !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), "after its End") {
		t.Errorf("error %v, want ErrBadUsage for a pass used after End", err)
	}
}

// TestClearBufferAtEnd: ClearBuffer(b, b.Size(), 0) clears nothing, as its doc says (before: vkCmdFillBuffer with
// an empty range at the end, which the validation layer reports).
func TestClearBufferAtEnd(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	O := newBuffer(t, d, 64, storageRW)
	if err := d.Queue().WriteBuffer(O, 0, u32Bytes(fillWant(16, 1)...)); err != nil {
		t.Fatal(err)
	}
	cb, err := record(t, d, func(e *CommandEncoder) { e.ClearBuffer(O, 64, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Queue().Submit(cb); err != nil {
		t.Fatal(err)
	}
	if got := readU32(t, d, O); !equalU32(got, fillWant(16, 1)) {
		t.Errorf("after an empty clear: %v", got)
	}
}

// TestPushConstantsUnsetAreZero: push constants a pass did not set read as zero, as in wgpu. Vulkan leaves them
// undefined; before, lavapipe gave the previous pass's value.
func TestPushConstantsUnsetAreZero(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 256
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	O := newBuffer(t, d, 4*n, storageRW)
	g := k.group(t, d, O)
	e, err := d.CreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, push := range [][]byte{u32Bytes(n, 9), u32Bytes(n)} { // the second pass sets n, not the seed
		p := e.BeginComputePass(nil)
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0, push)
		p.DispatchWorkgroups(1, 1, 1)
		p.End()
	}
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Queue().Submit(cb); err != nil {
		t.Fatal(err)
	}
	if got := readU32(t, d, O); !equalU32(got, fillWant(n, 0)) {
		t.Errorf("the seed no pass set: out[0:4] = %v, want %v", got[:4], fillWant(4, 0))
	}
}

// TestInstanceCloseClosesDevices: closing the instance first closes its open devices, which then fail with
// ErrClosed (before: the device's next call crashed in the driver, its instance destroyed under it).
func TestInstanceCloseClosesDevices(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	b := newBuffer(t, d, 64, storageRW)
	if err := env.inst.Close(); err != nil {
		t.Fatal(err)
	}
	isErr(t, d.Queue().WriteBuffer(b, 0, make([]byte, 4)), ErrClosed)
	_, err := d.CreateCommandEncoder(nil)
	isErr(t, err, ErrClosed)
	_, err = env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: "-"})
	isErr(t, err, ErrClosed)
	if err := d.Close(); err != nil {
		t.Errorf("Device.Close after Instance.Close: %v", err)
	}
}

// TestCloseWhileCreatingPipeline closes the device while another goroutine compiles a pipeline: Close waits for the
// compile, which then fails with ErrClosed (before: Close destroyed the device under vkCreateComputePipelines).
func TestCloseWhileCreatingPipeline(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "fill", SPIRV: loadSPIRV(t, "fill")})
	if err != nil {
		t.Fatal(err)
	}
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	var wg sync.WaitGroup
	closeErr := make(chan error, 1)
	compileHook = func() {
		compileHook = nil
		wg.Add(1)
		go func() { defer wg.Done(); closeErr <- d.Close() }()
		time.Sleep(100 * time.Millisecond) // Close has marked the device closed by now, and waits (or, before, destroyed it)
	}
	defer func() { compileHook = nil }()
	_, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "late", Layout: k.pl, Module: m})
	isErr(t, err, ErrClosed)
	wg.Wait()
	if err := <-closeErr; err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestResolveUnwrittenQueries: resolving a query that nothing wrote is refused at Submit (before: the copy waited
// for it forever, a hang on SwiftShader; the layer reports the query uninitialized). Queries written by the same
// recording, or by a command buffer submitted before, resolve as before.
func TestResolveUnwrittenQueries(t *testing.T) {
	env := newEnv(t, FeatureTimestampQuery)
	d := env.dev
	q := d.Queue()
	qs, err := d.CreateQuerySet(&QuerySetDescriptor{Label: "ts", Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	R := newBuffer(t, d, 256, BufferUsageQueryResolve|BufferUsageCopySrc)
	resolve := func(first, count uint32) *CommandBuffer {
		cb, err := record(t, d, func(e *CommandEncoder) { e.ResolveQuerySet(qs, first, count, R, 0) })
		if err != nil {
			t.Fatal(err)
		}
		return cb
	}
	cb := resolve(0, 2)
	_, err = q.Submit(cb)
	if !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), `query 0 of query set "ts"`) {
		t.Errorf("resolving unwritten queries: error %v, want ErrBadUsage naming query 0", err)
	}
	cb.Close()

	write, err := record(t, d, func(e *CommandEncoder) { e.WriteTimestamp(qs, 0); e.WriteTimestamp(qs, 1) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(write, resolve(0, 2)); err != nil { // written by the command buffer before it
		t.Fatalf("resolve after the writes in the same Submit: %v", err)
	}
	if _, err := q.Submit(resolve(1, 1)); err != nil { // by an earlier submission
		t.Fatalf("resolve after an earlier submission's writes: %v", err)
	}
	own, err := record(t, d, func(e *CommandEncoder) { e.WriteTimestamp(qs, 3); e.ResolveQuerySet(qs, 3, 1, R, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(own); err != nil { // by its own recording
		t.Fatalf("resolve after a write in the same recording: %v", err)
	}
	cb = resolve(1, 2) // query 2: never
	if _, err := q.Submit(cb); !errors.Is(err, ErrBadUsage) {
		t.Errorf("resolving query 2, never written: error %v", err)
	}
	cb.Close()
	if _, err := qs.Read(2, 1); !errors.Is(err, ErrBadUsage) {
		t.Errorf("reading query 2, never written: error %v", err)
	}
	if ts, err := qs.Read(0, 2); err != nil || ts[1] < ts[0] {
		t.Errorf("Read(0, 2) = %v, %v", ts, err)
	}
}

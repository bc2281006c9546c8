package wgpu

import (
	"fmt"
	"sync"
	"testing"
)

// TestCloseWhileInFlight closes a buffer, bind group and pipeline used by a submission that is still running;
// WebGPU allows it, and destruction must wait for the GPU (the validation layer checks).
func TestCloseWhileInFlight(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 1 << 20
	O := newBuffer(t, d, 4*n, storageRW)
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	g := k.group(t, d, O)
	e, _ := d.CreateCommandEncoder(nil)
	p := e.BeginComputePass(nil)
	p.SetPipeline(k.pipe)
	p.SetBindGroup(0, g)
	p.SetPushConstants(0, u32Bytes(n, 9))
	p.DispatchWorkgroups(n/256, 1, 1)
	p.End()
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Queue().Submit(cb); err != nil {
		t.Fatal(err)
	}
	for _, c := range []interface{ Close() error }{O, g, k.pipe, k.pl, k.layout} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Queue().WaitIdle(); err != nil {
		t.Fatal(err)
	}
	if s := d.MemoryStats(); s.InUse != 0 {
		t.Errorf("memory in use after the GPU finished: %+v", s)
	}
}

// TestConcurrentEncoders records and submits from several goroutines at once (run with -race).
func TestConcurrentEncoders(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	const workers, n = 4, 4096
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		O := newBuffer(t, d, 4*n, storageRW)
		g := k.group(t, d, O)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 5 {
				e, err := d.CreateCommandEncoder(nil)
				if err != nil {
					errs <- err
					return
				}
				p := e.BeginComputePass(nil)
				p.SetPipeline(k.pipe)
				p.SetBindGroup(0, g)
				p.SetPushConstants(0, u32Bytes(n, uint32(w*100+it)))
				p.DispatchWorkgroups(n/256, 1, 1)
				p.End()
				cb, err := e.Finish()
				if err == nil {
					_, err = d.Queue().Submit(cb)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			out := make([]byte, 4*n)
			if err := d.Queue().ReadBuffer(O, 0, out); err != nil {
				errs <- err
				return
			}
			for i := range uint32(n) {
				got := uint32(out[4*i]) | uint32(out[4*i+1])<<8 | uint32(out[4*i+2])<<16 | uint32(out[4*i+3])<<24
				if want := i*3 + uint32(w*100+4); got != want {
					errs <- fmt.Errorf("worker %d: o[%d] = %d, want %d", w, i, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestRequiredSubgroupSize fixes the subgroup size of a pipeline and reads it back from the shader.
func TestRequiredSubgroupSize(t *testing.T) {
	env := newEnv(t, FeatureSubgroups, FeatureSubgroupSizeControl)
	d := env.dev
	want := d.Limits().MaxSubgroupSize
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{SPIRV: loadSPIRV(t, "subgroup")})
	if err != nil {
		t.Fatal(err)
	}
	k := newKernel(t, d, "subgroup", 0, nil, BindingReadOnlyStorage, BindingStorage)
	pipe, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Layout: k.pl, Module: m, RequiredSubgroupSize: want})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Layout: k.pl, Module: m, RequiredSubgroupSize: 3})
	isErr(t, err, ErrLimit)
	X, O := newBuffer(t, d, 4*64, storageRW), newBuffer(t, d, 4*64*3, storageRW)
	g := k.group(t, d, X, O)
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(pipe)
		p.SetBindGroup(0, g)
		p.DispatchWorkgroups(1, 1, 1)
	})
	if got := readF32(t, d, O)[2]; uint32(got) != want {
		t.Errorf("subgroup size %g, want %d", got, want)
	}
}

// TestUseAfterDeviceClose: after Device.Close every call fails with ErrClosed or is a no-op; nothing crashes.
func TestUseAfterDeviceClose(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	b := newBuffer(t, d, 256, storageRW)
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	g := k.group(t, d, b)
	e, _ := d.CreateCommandEncoder(nil) // left unfinished
	e.ClearBuffer(b, 0, 0)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []interface{ Close() error }{b, g, k.pipe, k.pl, k.layout} {
		if err := c.Close(); err != nil {
			t.Errorf("Close after device close: %v", err)
		}
	}
	_, err := d.CreateBuffer(&BufferDescriptor{Size: 4, Usage: BufferUsageStorage})
	isErr(t, err, ErrClosed)
	_, err = d.CreateCommandEncoder(nil)
	isErr(t, err, ErrClosed)
	isErr(t, d.Queue().WriteBuffer(b, 0, make([]byte, 4)), ErrClosed)
	isErr(t, d.Queue().WaitIdle(), ErrClosed)
	_, err = b.Map()
	isErr(t, err, ErrBadUsage) // no map usage: checked first
	e.ClearBuffer(b, 0, 0)     // the encoder's command buffer is gone: an error, not a crash
	_, err = e.Finish()
	isErr(t, err, ErrClosed)
}

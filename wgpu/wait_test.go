package wgpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// submitFill submits the fill kernel (o[i] = 3i + seed) over n words of g's buffer.
func submitFill(d *Device, k *kernel, g *BindGroup, n, seed uint32) (SubmissionIndex, error) {
	e, err := d.CreateCommandEncoder(nil)
	if err != nil {
		return 0, err
	}
	p := e.BeginComputePass(nil)
	p.SetPipeline(k.pipe)
	p.SetBindGroup(0, g)
	p.SetPushConstants(0, u32Bytes(n, seed))
	p.DispatchWorkgroups((n+255)/256, 1, 1)
	p.End()
	cb, err := e.Finish()
	if err != nil {
		return 0, err
	}
	return d.Queue().Submit(cb)
}

func checkFill(got []byte, seed uint32) error {
	for i := range len(got) / 4 {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != uint32(i)*3+seed {
			return fmt.Errorf("word %d = %d, want %d (seed %d)", i, v, uint32(i)*3+seed, seed)
		}
	}
	return nil
}

// TestWaitWhileSubmitting: one goroutine submits kernels and WriteBuffers in a loop while another submits,
// waits (WaitFor, ReadBuffer, Map) and checks what it reads; run with -race. Both memory paths: unified, and
// device buffers kept out of host-visible memory (ReadBuffer through a staging buffer).
func TestWaitWhileSubmitting(t *testing.T) {
	for _, discrete := range []bool{false, true} {
		t.Run(fmt.Sprintf("discrete=%v", discrete), func(t *testing.T) {
			env := newEnvStaged(t, discrete)
			d := env.dev
			q := d.Queue()
			k := newKernel(t, d, "fill", 8, nil, BindingStorage)
			const n, iters = 4096, 40
			OA, OB := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW)
			WA := newBuffer(t, d, 4*n, storageRW)
			MB := newBuffer(t, d, 4*n, BufferUsageMapRead|BufferUsageCopyDst)
			gA, gB := k.group(t, d, OA), k.group(t, d, OB)
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			wg.Add(2)
			go func() { // the submitter: never waits
				defer wg.Done()
				for i := range uint32(iters) {
					if err := q.WriteBuffer(WA, 0, bytes.Repeat([]byte{byte(i)}, 4*n)); err != nil {
						errs <- fmt.Errorf("WriteBuffer: %w", err)
						return
					}
					if _, err := submitFill(d, k, gA, n, i); err != nil {
						errs <- fmt.Errorf("submit: %w", err)
						return
					}
				}
			}()
			go func() { // the waiter
				defer wg.Done()
				got := make([]byte, 4*n)
				for i := range uint32(iters) {
					idx, err := submitFill(d, k, gB, n, 1000+i)
					if err == nil {
						err = q.WaitFor(idx)
					}
					if err == nil {
						err = q.ReadBuffer(OB, 0, got)
					}
					if err == nil {
						err = checkFill(got, 1000+i)
					}
					if err == nil && i%8 == 0 { // through a mapped buffer too
						e, _ := d.CreateCommandEncoder(nil)
						e.CopyBufferToBuffer(OB, 0, MB, 0, 4*n)
						var cb *CommandBuffer
						if cb, err = e.Finish(); err == nil {
							_, err = q.Submit(cb)
						}
						var m []byte
						if err == nil {
							m, err = MB.Map()
						}
						if err == nil {
							err = checkFill(m, 1000+i)
							MB.Unmap()
						}
					}
					if err != nil {
						errs <- fmt.Errorf("waiter, iteration %d: %w", i, err)
						return
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			got := make([]byte, 4*n)
			if err := q.ReadBuffer(OA, 0, got); err != nil {
				t.Fatal(err)
			}
			if err := checkFill(got, iters-1); err != nil {
				t.Errorf("submitter's last kernel: %v", err)
			}
			if err := q.ReadBuffer(WA, 0, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, bytes.Repeat([]byte{iters - 1}, 4*n)) {
				t.Error("submitter's last WriteBuffer lost")
			}
		})
	}
}

// spinWGSL runs a 60000-step LCG in each of 64 invocations per workgroup: a kernel that takes a while on any device
// when dispatched over many workgroups (lavapipe ends each invocation's loops after 65535 iterations in all, so
// the length comes from the workgroup count).
const spinWGSL = `
struct P { seed: u32 }
var<push_constant> p: P;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
	var x = p.seed + gid.x;
	for (var i = 0u; i < 60000u; i++) {
		x = x * 1664525u + 1013904223u;
	}
	out[gid.x] = x;
}
`

func spinRef(seed uint32) uint32 {
	x := seed
	for range 60000 {
		x = x*1664525 + 1013904223
	}
	return x
}

// TestWriteWhileWaiting proves that a goroutine blocked waiting for a long kernel does not hold the device: once
// the waiter is inside its wait (waitHook), the main goroutine writes another buffer, submits and creates a buffer,
// and checks that all of it returned before the waiter did. No durations: if the kernel happens to finish before
// the writes are done, the round is inconclusive and is repeated with a 4x longer kernel.
func TestWriteWhileWaiting(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	q := d.Queue()
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "spin.wgsl", WGSL: spinWGSL})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pipe, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "spin", Module: m})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	out := newBuffer(t, d, 4*64*65535, storageRW)
	bgl, err := pipe.GetBindGroupLayout(0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: out}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	other := newBuffer(t, d, 1024, storageRW)

	inWait := make(chan struct{}, 1)
	waitHook = func() {
		select {
		case inWait <- struct{}{}:
		default:
		}
	}
	defer func() { waitHook = nil }()

	for round, n := 0, uint32(64); round < 5; round, n = round+1, n*4 { // n workgroups
		n = min(n, 65535)
		for len(inWait) > 0 {
			<-inWait
		}
		e, _ := d.CreateCommandEncoder(nil)
		p := e.BeginComputePass(nil)
		p.SetPipeline(pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0, u32Bytes(uint32(round)))
		p.DispatchWorkgroups(n, 1, 1)
		p.End()
		cb, err := e.Finish()
		if err != nil {
			t.Fatal(err)
		}
		idx, err := q.Submit(cb)
		if err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- q.WaitFor(idx) }()
		<-inWait // the waiter released the device and is about to block in vkWaitForFences

		data := bytes.Repeat([]byte{byte(round + 1)}, 1024)
		if err := q.WriteBuffer(other, 0, data); err != nil {
			t.Fatal(err)
		}
		b, err := d.CreateBuffer(&BufferDescriptor{Label: "meanwhile", Size: 256, Usage: storageRW})
		if err != nil {
			t.Fatal(err)
		}
		var early bool
		select {
		case err := <-waited: // the kernel was too short to tell
			if err != nil {
				t.Fatal(err)
			}
		default:
			early = true // WriteBuffer and CreateBuffer returned while the waiter still waited
			if err := <-waited; err != nil {
				t.Fatal(err)
			}
		}
		b.Close()
		got := make([]byte, 1024)
		if err := q.ReadBuffer(other, 0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatal("WriteBuffer made during the wait was lost")
		}
		res := make([]byte, 4)
		for _, i := range []uint32{0, 64*n - 1} { // the first and last invocation
			if err := q.ReadBuffer(out, 4*uint64(i), res); err != nil {
				t.Fatal(err)
			}
			if v, want := binary.LittleEndian.Uint32(res), spinRef(uint32(round)+i); v != want {
				t.Fatalf("spin kernel over %d workgroups, invocation %d: %d, want %d", n, i, v, want)
			}
		}
		if early {
			t.Logf("round %d (n=%d): the device was usable while a goroutine waited", round, n)
			return
		}
	}
	t.Fatal("WriteBuffer never returned before the waiter: the wait holds the device (or the GPU is too fast for 4M invocations of 60000 steps)")
}

// TestCloseWhileWaiting closes the device while goroutines wait on a long kernel: no crash, and each waiter gets
// nil (its fence signaled first) or ErrClosed.
func TestCloseWhileWaiting(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	q := d.Queue()
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "spin.wgsl", WGSL: spinWGSL})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "spin", Module: m})
	if err != nil {
		t.Fatal(err)
	}
	out := newBuffer(t, d, 4*64*65535, storageRW)
	bgl, err := pipe.GetBindGroupLayout(0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: out}}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := d.CreateCommandEncoder(nil)
	p := e.BeginComputePass(nil)
	p.SetPipeline(pipe)
	p.SetBindGroup(0, g)
	p.SetPushConstants(0, u32Bytes(1))
	p.DispatchWorkgroups(1024, 1, 1)
	p.End()
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := q.Submit(cb)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 3
	inWait := make(chan struct{}, waiters)
	waitHook = func() {
		select {
		case inWait <- struct{}{}:
		default: // Close's own wait
		}
	}
	defer func() { waitHook = nil }()
	errs := make(chan error, waiters)
	go func() { errs <- q.WaitFor(idx) }()
	go func() { errs <- q.ReadBuffer(out, 0, make([]byte, 4)) }()
	go func() { errs <- q.WaitIdle() }()
	for range waiters {
		<-inWait
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		if err := <-errs; err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("waiter: %v, want nil or ErrClosed", err)
		}
	}
	if err := q.WaitFor(idx); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitFor after Close: %v, want ErrClosed", err)
	}
}

package wgpu

import "testing"

// TestCopyAfterComputeBarrier copies a buffer that a dispatch wrote before a
// compute-to-compute barrier. The barrier clears the encoder's tracking, so it
// must order the earlier write before later copies too, not only before later
// dispatches; the synchronization validation layer reports the hazard otherwise.
func TestCopyAfterComputeBarrier(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 1 << 12
	a, b, A, B, k := chainInputs(t, d, n)
	C, D, E := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW)
	q := d.Queue()
	abc, cce := k.group(t, d, A, B, C), k.group(t, d, C, C, E)
	e, err := d.CreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := uint32(n / 64)
	p := e.BeginComputePass(nil)
	p.SetPipeline(k.pipe)
	p.SetBindGroup(0, abc) // C = A + B
	p.SetPushConstants(0, u32Bytes(n, 0))
	p.DispatchWorkgroups(groups, 1, 1)
	p.SetBindGroup(0, cce) // E = C + C: a compute-to-compute barrier, the tracking cleared
	p.DispatchWorkgroups(groups, 1, 1)
	p.End()
	e.CopyBufferToBuffer(C, 0, D, 0, 4*n) // D = C: reads the first dispatch's write
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(cb); err != nil {
		t.Fatal(err)
	}
	dd, ee := readF32(t, d, D), readF32(t, d, E)
	for i := range n {
		if dd[i] != a[i]+b[i] || ee[i] != 2*(a[i]+b[i]) {
			t.Fatalf("i=%d: D %g want %g, E %g want %g", i, dd[i], a[i]+b[i], ee[i], 2*(a[i]+b[i]))
		}
	}
}

// chainInputs uploads a = i and b = 2i+1 (n floats each) into storage
// buffers A and B and makes the "chain" kernel (its third binding = first +
// second).
func chainInputs(t *testing.T, d *Device, n int) (a, b []float32, A, B *Buffer, k *kernel) {
	t.Helper()
	a, b = make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i+1)
	}
	A, B = newBuffer(t, d, uint64(4*n), storageRW), newBuffer(t, d, uint64(4*n), storageRW)
	q := d.Queue()
	if err := q.WriteBuffer(A, 0, f32Bytes(a)); err != nil {
		t.Fatal(err)
	}
	if err := q.WriteBuffer(B, 0, f32Bytes(b)); err != nil {
		t.Fatal(err)
	}
	return a, b, A, B, newKernel(t, d, "chain", 8, nil, BindingReadOnlyStorage, BindingReadOnlyStorage, BindingStorage)
}

package wgpu

import "testing"

// BenchmarkSubmitWait is the round trip of one tiny dispatch: record, submit, wait for the fence.
func BenchmarkSubmitWait(b *testing.B) {
	env := newEnvWith(b, false)
	d := env.dev
	O := newBuffer(b, d, 1024, storageRW)
	k := newKernel(b, d, "fill", 8, nil, BindingStorage)
	g := k.group(b, d, O)
	for b.Loop() {
		run(b, d, func(p *ComputePass) {
			p.SetPipeline(k.pipe)
			p.SetBindGroup(0, g)
			p.SetPushConstants(0, u32Bytes(256, 1))
			p.DispatchWorkgroups(1, 1, 1)
		})
	}
}

const benchBytes = 32 << 20

func benchUpload(b *testing.B, staged bool) {
	env := newEnvWith(b, false)
	d := env.dev
	buf := newBuffer(b, d, benchBytes, storageRW)
	data := make([]byte, benchBytes)
	forceStaging = staged
	defer func() { forceStaging = false }()
	b.SetBytes(benchBytes)
	for b.Loop() {
		if err := d.Queue().WriteBuffer(buf, 0, data); err != nil {
			b.Fatal(err)
		}
		if err := d.Queue().WaitIdle(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpload is Queue.WriteBuffer of 32 MiB plus WaitIdle, on the fast path: a host-visible buffer the GPU
// is not using is written directly (on discrete GPUs device memory is not host-visible and this stages).
func BenchmarkUpload(b *testing.B) { benchUpload(b, false) }

// BenchmarkUploadStaged is the same through a staging buffer and a GPU copy.
func BenchmarkUploadStaged(b *testing.B) { benchUpload(b, true) }

// BenchmarkReadback is Queue.ReadBuffer of 32 MiB.
func BenchmarkReadback(b *testing.B) {
	env := newEnvWith(b, false)
	d := env.dev
	buf := newBuffer(b, d, benchBytes, storageRW)
	out := make([]byte, benchBytes)
	b.SetBytes(benchBytes)
	for b.Loop() {
		if err := d.Queue().ReadBuffer(buf, 0, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyReadback is a GPU copy into a MapRead buffer, submit, Map and copy out: the readback path of a
// device whose storage memory is not host-visible.
func BenchmarkCopyReadback(b *testing.B) {
	env := newEnvWith(b, false)
	d := env.dev
	buf := newBuffer(b, d, benchBytes, storageRW)
	rb := newBuffer(b, d, benchBytes, BufferUsageMapRead|BufferUsageCopyDst)
	out := make([]byte, benchBytes)
	b.SetBytes(benchBytes)
	for b.Loop() {
		e, _ := d.CreateCommandEncoder(nil)
		e.CopyBufferToBuffer(buf, 0, rb, 0, benchBytes)
		cb, err := e.Finish()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Queue().Submit(cb); err != nil {
			b.Fatal(err)
		}
		m, err := rb.Map()
		if err != nil {
			b.Fatal(err)
		}
		copy(out, m)
		rb.Unmap()
	}
}

// BenchmarkDispatch100 records 100 dependent tiny dispatches in one command buffer, submits and waits; ns/op / 100
// is the per-dispatch cost (recording, barrier, driver) a model forward pays.
func BenchmarkDispatch100(b *testing.B) {
	env := newEnvWith(b, false)
	d := env.dev
	O := newBuffer(b, d, 1024, storageRW)
	k := newKernel(b, d, "fill", 8, nil, BindingStorage)
	g := k.group(b, d, O)
	push := u32Bytes(256, 1)
	for b.Loop() {
		run(b, d, func(p *ComputePass) {
			p.SetPipeline(k.pipe)
			p.SetBindGroup(0, g)
			for range 100 {
				p.SetPushConstants(0, push)
				p.DispatchWorkgroups(1, 1, 1)
			}
		})
	}
}

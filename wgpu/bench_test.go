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

// twoGroupsWGSL copies x[0] to y[0], with x in @group(0) and y in @group(1): a pipeline of two bind groups.
const twoGroupsWGSL = `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(1) @binding(0) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(1)
fn main() { y[0] = x[0]; }
`

// BenchmarkRecordDispatch100 records 100 dependent dispatches and finishes the command buffer without submitting
// it: ns/op / 100 is the host's cost of recording a dispatch (checks, barrier tracking, driver calls). "1group" is
// the fill kernel with one bind group, as the forward pass binds; "2groups" a kernel of two bind groups bound
// once; "2groups-alternating" the same kernel with group 1 switched between two bind groups before each dispatch.
func BenchmarkRecordDispatch100(b *testing.B) {
	env := newEnvWith(b, false)
	d := env.dev
	record := func(b *testing.B, fn func(p *ComputePass, i int)) {
		b.Helper()
		for b.Loop() {
			e, err := d.CreateCommandEncoder(nil)
			if err != nil {
				b.Fatal(err)
			}
			p := e.BeginComputePass(nil)
			for i := range 100 {
				fn(p, i)
			}
			p.End()
			cb, err := e.Finish()
			if err != nil {
				b.Fatal(err)
			}
			cb.Close()
		}
	}
	b.Run("1group", func(b *testing.B) {
		k := newKernel(b, d, "fill", 8, nil, BindingStorage)
		g := k.group(b, d, newBuffer(b, d, 1024, storageRW))
		push := u32Bytes(256, 1)
		record(b, func(p *ComputePass, i int) {
			if i == 0 {
				p.SetPipeline(k.pipe)
				p.SetBindGroup(0, g)
			}
			p.SetPushConstants(0, push)
			p.DispatchWorkgroups(1, 1, 1)
		})
	})
	m := wgslModule(b, d, "twogroups.wgsl", twoGroupsWGSL)
	pl, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "twogroups", Module: m})
	if err != nil {
		b.Fatal(err)
	}
	group := func(index int, buf *Buffer) *BindGroup {
		bgl, err := pl.GetBindGroupLayout(index)
		if err != nil {
			b.Fatal(err)
		}
		g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: buf}}})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	x := group(0, newBuffer(b, d, 1024, storageRW))
	y := [2]*BindGroup{group(1, newBuffer(b, d, 1024, storageRW)), group(1, newBuffer(b, d, 1024, storageRW))}
	b.Run("2groups", func(b *testing.B) {
		record(b, func(p *ComputePass, i int) {
			if i == 0 {
				p.SetPipeline(pl)
				p.SetBindGroup(0, x)
				p.SetBindGroup(1, y[0])
			}
			p.DispatchWorkgroups(1, 1, 1)
		})
	})
	b.Run("2groups-alternating", func(b *testing.B) {
		record(b, func(p *ComputePass, i int) {
			if i == 0 {
				p.SetPipeline(pl)
				p.SetBindGroup(0, x)
			}
			p.SetBindGroup(1, y[i%2])
			p.DispatchWorkgroups(1, 1, 1)
		})
	})
}

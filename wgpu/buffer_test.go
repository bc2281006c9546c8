package wgpu

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestBufferTransfers checks WriteBuffer, CopyBufferToBuffer, ClearBuffer, ReadBuffer and Map against Go copies,
// including writes to a buffer the GPU is still using (which must go through staging, in queue order), and a
// second Map before Unmap (testMapTwice).
func TestBufferTransfers(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	q := d.Queue()
	const n = 1 << 16
	rng := rand.New(rand.NewPCG(11, 12))
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	src := newBuffer(t, d, n, storageRW)
	dst := newBuffer(t, d, n, storageRW)
	rb := newBuffer(t, d, n, BufferUsageMapRead|BufferUsageCopyDst)
	if err := q.WriteBuffer(src, 0, data); err != nil {
		t.Fatal(err)
	}
	e, _ := d.CreateCommandEncoder(&CommandEncoderDescriptor{Label: "copies"})
	e.CopyBufferToBuffer(src, 0, dst, 0, n)
	e.ClearBuffer(dst, 1024, 2048)
	e.CopyBufferToBuffer(dst, 0, rb, 0, n)
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if e.Barriers != 2 {
		t.Errorf("barriers %d, want 2", e.Barriers)
	}
	if _, err := q.Submit(cb); err != nil {
		t.Fatal(err)
	}
	// src is in use by the submission: this write must not reach the copy above.
	if err := q.WriteBuffer(src, 0, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(data)
	clear(want[1024 : 1024+2048])
	got, err := rb.Map()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("mapped readback differs from the expected bytes")
	}
	rb.Unmap()
	testMapTwice(t, d, rb, want)
	back := make([]byte, n)
	if err := q.ReadBuffer(src, 0, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back[:64], make([]byte, 64)) || !bytes.Equal(back[64:], data[64:]) {
		t.Error("ReadBuffer after the second WriteBuffer differs")
	}
	if _, err := q.Submit(cb); err == nil {
		t.Error("submitting a command buffer twice succeeded")
	}
}

// TestErrors checks that misuse returns the documented errors instead of reaching the driver.
func TestErrors(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	_, err := env.ad.RequestDevice(&DeviceDescriptor{RequiredLimits: Limits{MaxComputeWorkgroupStorageSize: 1 << 30}, PipelineCacheDir: "-"})
	isErr(t, err, ErrLimit)
	_, err = env.ad.RequestDevice(&DeviceDescriptor{RequiredFeatures: []FeatureName{"no-such-feature"}, PipelineCacheDir: "-"})
	isErr(t, err, ErrMissingFeature)
	_, err = d.CreateBuffer(&BufferDescriptor{Size: 6, Usage: BufferUsageStorage})
	isErr(t, err, ErrBadUsage)
	_, err = d.CreateBuffer(&BufferDescriptor{Size: 8, Usage: BufferUsageMapRead | BufferUsageStorage})
	isErr(t, err, ErrBadUsage)
	_, err = d.CreateBuffer(&BufferDescriptor{Size: 1 << 50, Usage: BufferUsageStorage})
	isErr(t, err, ErrLimit)
	b := newBuffer(t, d, 64, BufferUsageStorage)
	isErr(t, d.Queue().WriteBuffer(b, 0, make([]byte, 4)), ErrBadUsage) // no CopyDst
	c := newBuffer(t, d, 64, storageRW)
	isErr(t, d.Queue().WriteBuffer(c, 60, make([]byte, 8)), ErrBadUsage)
	_, err = b.Map()
	isErr(t, err, ErrBadUsage)
	e, _ := d.CreateCommandEncoder(nil)
	e.CopyBufferToBuffer(b, 0, c, 0, 64) // b lacks CopySrc
	_, err = e.Finish()
	isErr(t, err, ErrBadUsage)
	e, _ = d.CreateCommandEncoder(nil)
	p := e.BeginComputePass(nil)
	p.DispatchWorkgroups(1, 1, 1) // no pipeline
	p.End()
	_, err = e.Finish()
	isErr(t, err, ErrBadUsage)
	_, err = d.CreateQuerySet(&QuerySetDescriptor{Count: 2}) // feature not enabled
	isErr(t, err, ErrMissingFeature)
	_, err = d.CreateShaderModule(&ShaderModuleDescriptor{SPIRV: []uint32{1, 2, 3}})
	isErr(t, err, ErrBadUsage)
	_, err = d.CreateShaderModule(&ShaderModuleDescriptor{Label: "bad.wgsl", WGSL: "@compute @workgroup_size(1) fn main() { let x: u32 = -1; }"})
	if err == nil || !strings.Contains(err.Error(), "bad.wgsl:1:") {
		t.Errorf("invalid WGSL: err = %v, want a bad.wgsl:LINE:COL diagnostic", err)
	}
	k := newKernel(t, d, "chain", 8, nil, BindingReadOnlyStorage, BindingReadOnlyStorage, BindingStorage)
	_, err = d.CreateBindGroup(&BindGroupDescriptor{Layout: k.layout, Entries: []BindGroupEntry{{Binding: 0, Buffer: c}}})
	isErr(t, err, ErrBadUsage)
	u := newBuffer(t, d, 64, BufferUsageUniform)
	_, err = d.CreateBindGroup(&BindGroupDescriptor{Layout: k.layout, Entries: []BindGroupEntry{{0, c, 0, 0}, {1, c, 0, 0}, {2, u, 0, 0}}})
	isErr(t, err, ErrBadUsage)
	b.Close()
	e, _ = d.CreateCommandEncoder(nil)
	e.ClearBuffer(c, 0, 0)
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err = d.Queue().Submit(cb)
	isErr(t, err, ErrClosed)
	cb.Close()
}

// TestSubAllocation checks that many buffers share a few memory blocks and that freeing returns the bytes.
func TestSubAllocation(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	var bufs []*Buffer
	for i := range 200 {
		bufs = append(bufs, newBuffer(t, d, uint64(256+64*i), storageRW))
	}
	s := d.MemoryStats()
	if s.Blocks > 2 || s.InUse < 200*256 {
		t.Errorf("200 small buffers: %+v", s)
	}
	for i, b := range bufs {
		if i%2 == 0 {
			b.Close()
		}
	}
	for i, b := range bufs {
		if i%2 == 1 {
			b.Close()
		}
	}
	if s2 := d.MemoryStats(); s2.InUse != 0 || s2.Peak != s.Peak || s2.Blocks != 1 {
		t.Errorf("after closing all: %+v (want nothing in use, one block kept)", s2)
	}
}

// TestPipelineCachePersisted checks that Device.Close writes the cache file for the device.
func TestPipelineCachePersisted(t *testing.T) {
	env := newEnv(t)
	dir := t.TempDir()
	d, err := env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	newKernel(t, d, "spec", 0, map[string]float64{"MUL": 2}, BindingReadOnlyStorage, BindingStorage)
	newBuffer(t, d, 1024, storageRW) // left for Close to clean up
	path := d.PipelineCachePath()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	d2.Close()
	t.Logf("%s: %d bytes", path, st.Size())
}

// TestDevicesInfo checks the adapter description the CLI prints.
func TestDevicesInfo(t *testing.T) {
	newEnv(t) // skips without Vulkan
	infos, err := EnumerateAdapters()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == "" || in.APIVersion == "" || in.DeviceType == "" || len(in.DeviceUUID) != 36 ||
			in.Limits.MaxStorageBufferBindingSize == 0 || in.Limits.MaxComputeInvocationsPerWorkgroup == 0 {
			t.Errorf("incomplete adapter info %+v", in)
		}
		t.Logf("%s (%s, %s %s, Vulkan %s): %+v", in.Name, in.DeviceType, in.DriverName, in.DriverInfo, in.APIVersion, in.Features)
	}
}

// TestStagedWrite forces WriteBuffer through staging, in chunks, and checks the bytes and queue order.
func TestStagedWrite(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	forceStaging, stagingFlush = true, 1<<20
	defer func() { forceStaging, stagingFlush = false, 64<<20 }()
	const n = 3<<20 + 4096
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	b := newBuffer(t, d, n+1024, storageRW)
	if err := d.Queue().WriteBuffer(b, 1024, data); err != nil {
		t.Fatal(err)
	}
	if err := d.Queue().WriteBuffer(b, 1024, data[:8]); err != nil { // ordered after the big write
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := d.Queue().ReadBuffer(b, 1024, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Error("staged write differs")
	}
	if err := d.Queue().WaitIdle(); err != nil {
		t.Fatal(err)
	}
	if s := d.MemoryStats(); s.InUse > uint64(n+1024)+4096 {
		t.Errorf("staging memory not released: %+v", s)
	}
}

// TestDiscretePaths keeps device buffers out of host-visible memory, as on a discrete GPU, so that zero
// initialization, staged writes and staged readback run on a unified-memory device too.
func TestDiscretePaths(t *testing.T) {
	env := newEnvStaged(t, true)
	d := env.dev
	q := d.Queue()
	const n = 1 << 16
	dirty := newBuffer(t, d, n, storageRW)
	if dirty.bytes() != nil {
		t.Fatal("device buffer is host-visible despite StageTransfers")
	}
	if err := q.WriteBuffer(dirty, 0, bytes.Repeat([]byte{0xab}, n)); err != nil {
		t.Fatal(err)
	}
	if err := q.WaitIdle(); err != nil {
		t.Fatal(err)
	}
	dirty.Close()
	fresh := newBuffer(t, d, n, storageRW) // likely the same memory: must read as zeros
	got := make([]byte, n)
	if err := q.ReadBuffer(fresh, 0, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, make([]byte, n)) {
		t.Fatal("new buffer not zeroed")
	}
	rng := rand.New(rand.NewPCG(15, 16))
	x := make([]float32, n/4)
	for i := range x {
		x[i] = rng.Float32()
	}
	if err := q.WriteBuffer(fresh, 0, f32Bytes(x)); err != nil {
		t.Fatal(err)
	}
	out := newBuffer(t, d, n, storageRW)
	k := newKernel(t, d, "spec", 0, map[string]float64{"MUL": 2, "0": 64}, BindingReadOnlyStorage, BindingStorage)
	g := k.group(t, d, fresh, out)
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.DispatchWorkgroups(n/4/64, 1, 1)
	})
	for i, v := range readF32(t, d, out) {
		if v != 2*x[i] {
			t.Fatalf("y[%d] = %g, want %g", i, v, 2*x[i])
		}
	}
	rb := newBuffer(t, d, n, BufferUsageMapRead|BufferUsageCopyDst)
	e, _ := d.CreateCommandEncoder(nil)
	e.CopyBufferToBuffer(out, 0, rb, 0, n)
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(cb); err != nil {
		t.Fatal(err)
	}
	m, err := rb.Map()
	if err != nil {
		t.Fatal(err)
	}
	if y := bytesF32(m); y[7] != 2*x[7] {
		t.Errorf("mapped y[7] = %g, want %g", y[7], 2*x[7])
	}
	rb.Unmap()
}

func TestRequestAdapter(t *testing.T) {
	env := newEnv(t)
	for _, want := range []string{"", "0", env.ad.Info().Name[:3]} {
		a, err := env.inst.RequestAdapter(want)
		if err != nil || a.Info().Name == "" {
			t.Errorf("RequestAdapter(%q): %v", want, err)
		}
	}
	for _, want := range []string{"99", "no such adapter name"} {
		if _, err := env.inst.RequestAdapter(want); err == nil {
			t.Errorf("RequestAdapter(%q) succeeded", want)
		}
	}
}

// testMapTwice: a buffer mapped is not mapped again before Unmap (ErrBadUsage,
// as in WebGPU; before, the second Map gave the same bytes and one Unmap ended
// both), the first mapping's bytes stay valid meanwhile and WriteBuffer is
// refused; after Unmap it maps again, and a second Unmap is harmless. rb holds
// want and is not mapped.
func testMapTwice(t *testing.T, d *Device, rb *Buffer, want []byte) {
	t.Helper()
	m, err := rb.Map()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := rb.Map(); !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), "already mapped") || again != nil {
		t.Errorf("a second Map: %d bytes, %v; want ErrBadUsage, already mapped", len(again), err)
	}
	if !bytes.Equal(m, want) {
		t.Error("the first mapping's bytes changed after a second Map")
	}
	if err := d.Queue().WriteBuffer(rb, 0, make([]byte, 4)); !errors.Is(err, ErrBadUsage) {
		t.Errorf("WriteBuffer while mapped: %v, want ErrBadUsage", err)
	}
	rb.Unmap()
	rb.Unmap()
	if m, err = rb.Map(); err != nil || !bytes.Equal(m, want) {
		t.Errorf("Map after Unmap: %v (bytes equal %v)", err, bytes.Equal(m, want))
	}
	rb.Unmap()
}

// TestCreateBufferInit checks that a buffer made with initial data holds the
// data and zeros past it, on memory a closed buffer left dirty, in
// host-visible memory and, staged, as on a discrete GPU; and that bad data
// is refused.
func TestCreateBufferInit(t *testing.T) {
	for _, staged := range []bool{false, true} {
		t.Run(map[bool]string{false: "host-visible", true: "staged"}[staged], func(t *testing.T) {
			env := newEnvStaged(t, staged)
			d := env.dev
			q := d.Queue()
			const n = 1 << 16
			dirty := newBuffer(t, d, n, storageRW)
			if err := q.WriteBuffer(dirty, 0, bytes.Repeat([]byte{0xab}, n)); err != nil {
				t.Fatal(err)
			}
			if err := q.WaitIdle(); err != nil {
				t.Fatal(err)
			}
			dirty.Close()
			if err := q.WaitIdle(); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(17, 18))
			for _, size := range []int{n, n - 1024, 0} { // the data fills the buffer, leaves a tail, is empty
				data := make([]byte, size)
				for i := range data {
					data[i] = byte(rng.Uint32())
				}
				b, err := d.CreateBufferInit(&BufferDescriptor{Label: "init", Size: n, Usage: storageRW}, data)
				if err != nil {
					t.Fatal(err)
				}
				if (b.bytes() == nil) != staged {
					t.Fatalf("host-visible %v, want %v", b.bytes() != nil, !staged)
				}
				got := make([]byte, n)
				if err := q.ReadBuffer(b, 0, got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got[:size], data) {
					t.Errorf("%d bytes of data: the buffer's first bytes differ from them", size)
				}
				if !bytes.Equal(got[size:], make([]byte, n-size)) {
					t.Errorf("%d bytes of data: the buffer's bytes past them are not zeros", size)
				}
				b.Close()
			}
		})
	}
	env := newEnv(t)
	for _, c := range []struct {
		size  uint64
		usage BufferUsage
		data  int
		want  string
	}{
		{64, storageRW, 6, "multiple of 4"},
		{64, storageRW, 68, "at most the size"},
		{64, BufferUsageStorage, 8, "CopyDst"},
		{0, storageRW, 0, "positive multiple of 4"},
	} {
		_, err := env.dev.CreateBufferInit(&BufferDescriptor{Label: "bad", Size: c.size, Usage: c.usage}, make([]byte, c.data))
		if !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("size %d, %d bytes of data: error %v, want ErrBadUsage saying %q", c.size, c.data, err, c.want)
		}
	}
}

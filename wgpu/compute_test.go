package wgpu

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDependentChain runs four dispatches that each read the previous one's output, and checks that the encoder
// placed barriers only between dependent dispatches.
func TestDependentChain(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 1<<14 + 7
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = rng.Float32()*2-1, rng.Float32()*2-1
	}
	A, B, C := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW)
	D, E := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW)
	q := d.Queue()
	if err := q.WriteBuffer(A, 0, f32Bytes(a)); err != nil {
		t.Fatal(err)
	}
	if err := q.WriteBuffer(B, 0, f32Bytes(b)); err != nil {
		t.Fatal(err)
	}
	k := newKernel(t, d, "chain", 8, nil, BindingReadOnlyStorage, BindingReadOnlyStorage, BindingStorage)
	abc := k.group(t, d, A, B, C)
	indep := k.group(t, d, A, A, D) // D = A + 1: independent of the chain
	indep2 := k.group(t, d, A, B, E)
	groups := uint32((n + 63) / 64)
	e := run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		for op, g := range []struct {
			g  *BindGroup
			op uint32
		}{{abc, 0}, {abc, 1}, {abc, 1}, {indep, 2}, {indep2, 0}} {
			p.SetBindGroup(0, g.g)
			p.SetPushConstants(0, u32Bytes(n, g.op))
			p.DispatchWorkgroups(groups, 1, 1)
			_ = op
		}
	})
	// Barriers: before dispatch 2 and 3 (read/write C); dispatch 4 (writes D, reads A) and 5 (writes E) are free.
	if e.Barriers != 2 || e.Dispatches != 5 {
		t.Errorf("barriers %d dispatches %d, want 2 and 5", e.Barriers, e.Dispatches)
	}
	c, dd, ee := readF32(t, d, C), readF32(t, d, D), readF32(t, d, E)
	for i := range n {
		want := a[i] + b[i]
		want = want*2 + a[i]
		want = want*2 + a[i]
		if math.Abs(float64(c[i]-want)) > 1e-5 || dd[i] != a[i]+1 || ee[i] != a[i]+b[i] {
			t.Fatalf("i=%d: c %g want %g, d %g want %g, e %g want %g", i, c[i], want, dd[i], a[i]+1, ee[i], a[i]+b[i])
		}
	}
}

// TestReduction sums 1M random floats with a workgroup tree reduction (two levels), against float64 in Go.
func TestReduction(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n, wg = 1 << 20, 256
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, n)
	var want float64
	for i := range x {
		x[i] = rng.Float32()
		want += float64(x[i])
	}
	X := newBuffer(t, d, 4*n, storageRW)
	P1 := newBuffer(t, d, 4*n/wg, storageRW)
	P2 := newBuffer(t, d, 4*n/wg/wg, storageRW)
	if err := d.Queue().WriteBuffer(X, 0, f32Bytes(x)); err != nil {
		t.Fatal(err)
	}
	k := newKernel(t, d, "reduce", 4, map[string]float64{"WG": wg}, BindingReadOnlyStorage, BindingStorage)
	g1, g2 := k.group(t, d, X, P1), k.group(t, d, P1, P2)
	e := run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g1)
		p.SetPushConstants(0, u32Bytes(n))
		p.DispatchWorkgroups(n/wg, 1, 1)
		p.SetBindGroup(0, g2)
		p.SetPushConstants(0, u32Bytes(n/wg))
		p.DispatchWorkgroups(n/wg/wg, 1, 1)
	})
	if e.Barriers != 1 {
		t.Errorf("barriers %d, want 1", e.Barriers)
	}
	var got float64
	for _, v := range readF32(t, d, P2) {
		got += float64(v)
	}
	if rel := math.Abs(got-want) / want; rel > 1e-5 {
		t.Errorf("sum %v, want %v (rel err %.2g)", got, want, rel)
	}
}

// TestF16 computes a*b + 0.5 in f16 storage and arithmetic; the result must equal Go's with one or two roundings
// (fused or not).
func TestF16(t *testing.T) {
	env := newEnv(t, FeatureShaderF16)
	d := env.dev
	const n = 4096
	rng := rand.New(rand.NewPCG(5, 6))
	a, b := make([]byte, 2*n), make([]byte, 2*n)
	av, bv := make([]uint16, n), make([]uint16, n)
	for i := range n {
		av[i], bv[i] = f16bits(rng.Float32()*8-4), f16bits(rng.Float32()*8-4)
		a[2*i], a[2*i+1] = byte(av[i]), byte(av[i]>>8)
		b[2*i], b[2*i+1] = byte(bv[i]), byte(bv[i]>>8)
	}
	A, B, C := newBuffer(t, d, 2*n, storageRW), newBuffer(t, d, 2*n, storageRW), newBuffer(t, d, 2*n, storageRW)
	d.Queue().WriteBuffer(A, 0, a)
	d.Queue().WriteBuffer(B, 0, b)
	k := newKernel(t, d, "f16", 4, nil, BindingReadOnlyStorage, BindingReadOnlyStorage, BindingStorage)
	g := k.group(t, d, A, B, C)
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0, u32Bytes(n))
		p.DispatchWorkgroups(n/64, 1, 1)
	})
	out := make([]byte, 2*n)
	if err := d.Queue().ReadBuffer(C, 0, out); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		got := uint16(out[2*i]) | uint16(out[2*i+1])<<8
		x, y := f16val(av[i]), f16val(bv[i])
		fused := f16bits(x*y + 0.5)
		twice := f16bits(f16val(f16bits(x*y)) + 0.5)
		if got != fused && got != twice {
			t.Fatalf("%g*%g+0.5 = %g (%#04x), want %g or %g", x, y, f16val(got), got, f16val(fused), f16val(twice))
		}
	}
}

// TestSubgroups checks subgroupAdd and subgroupMax per subgroup against Go.
func TestSubgroups(t *testing.T) {
	env := newEnv(t, FeatureSubgroups)
	d := env.dev
	const n = 4096
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.IntN(64)) // small integers: sums are exact in any order
	}
	X, O := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n*3, storageRW)
	d.Queue().WriteBuffer(X, 0, f32Bytes(x))
	k := newKernel(t, d, "subgroup", 0, nil, BindingReadOnlyStorage, BindingStorage)
	g := k.group(t, d, X, O)
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.DispatchWorkgroups(n/64, 1, 1)
	})
	o := readF32(t, d, O)
	size := int(o[2])
	if size != int(d.Limits().SubgroupSize) && (size < int(d.Limits().MinSubgroupSize) || size > int(d.Limits().MaxSubgroupSize)) {
		t.Fatalf("subgroup size %d, adapter says %d", size, d.Limits().SubgroupSize)
	}
	for sg := range n / size {
		var sum, mx float32
		for _, v := range x[sg*size : (sg+1)*size] {
			sum, mx = sum+v, max(mx, v)
		}
		if o[3*sg] != sum || o[3*sg+1] != mx {
			t.Fatalf("subgroup %d: add %g max %g, want %g %g", sg, o[3*sg], o[3*sg+1], sum, mx)
		}
	}
	t.Logf("subgroup size %d, ops %v", size, env.ad.Info().Features.SubgroupOperations)
}

// TestSpecializationConstants builds two pipelines from one module with different override constants, set by
// name and by ID.
func TestSpecializationConstants(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 1024
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.IntN(1000)) / 8
	}
	X, Y1, Y2 := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW)
	d.Queue().WriteBuffer(X, 0, f32Bytes(x))
	k1 := newKernel(t, d, "spec", 0, map[string]float64{"0": 32, "MUL": 3, "ADD": 0.25, "OFF": -7}, BindingReadOnlyStorage, BindingStorage)
	k2 := newKernel(t, d, "spec", 0, map[string]float64{"0": 128, "1": 5, "FLIP": 1}, BindingReadOnlyStorage, BindingStorage)
	g1, g2 := k1.group(t, d, X, Y1), k2.group(t, d, X, Y2)
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k1.pipe)
		p.SetBindGroup(0, g1)
		p.DispatchWorkgroups(n/32, 1, 1)
		p.SetPipeline(k2.pipe)
		p.SetBindGroup(0, g2)
		p.DispatchWorkgroups(n/128, 1, 1)
	})
	y1, y2 := readF32(t, d, Y1), readF32(t, d, Y2)
	for i := range n {
		if w := x[i]*3 + 0.25 - 7; y1[i] != w {
			t.Fatalf("y1[%d] = %g, want %g", i, y1[i], w)
		}
		if w := -(x[i] * 5); y2[i] != w {
			t.Fatalf("y2[%d] = %g, want %g", i, y2[i], w)
		}
	}
	m, _ := d.CreateShaderModule(&ShaderModuleDescriptor{SPIRV: loadSPIRV(t, "spec")})
	defer m.Close()
	for _, c := range []map[string]float64{{"NOPE": 1}, {"MUL": -1}, {"MUL": 1.5}, {"MUL": 2, "1": 3}} {
		_, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Layout: k1.pl, Module: m, Constants: c})
		isErr(t, err, ErrBadUsage)
	}
}

// TestLargeBuffer fills a buffer at the storage binding limit (capped at 256 MiB) and checks every element.
func TestLargeBuffer(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	size := min(d.Limits().MaxStorageBufferBindingSize, 256<<20) &^ 1023
	if testing.Short() {
		size = min(size, 16<<20)
	}
	n := uint32(size / 4)
	O := newBuffer(t, d, size, storageRW)
	before := d.MemoryStats()
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	g := k.group(t, d, O)
	groups := (n + 255) / 256
	gx := min(groups, 32768)
	gy := (groups + gx - 1) / gx
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.SetPushConstants(0, u32Bytes(n, 12345))
		p.DispatchWorkgroups(gx, gy, 1)
	})
	out := make([]byte, size)
	if err := d.Queue().ReadBuffer(O, 0, out); err != nil {
		t.Fatal(err)
	}
	for i := uint32(0); i < n; i++ {
		got := uint32(out[4*i]) | uint32(out[4*i+1])<<8 | uint32(out[4*i+2])<<16 | uint32(out[4*i+3])<<24
		if got != i*3+12345 {
			t.Fatalf("o[%d] = %d, want %d", i, got, i*3+12345)
		}
	}
	if before.InUse < size || before.Peak < before.InUse {
		t.Errorf("memory stats %+v with a %d-byte buffer", before, size)
	}
	O.Close()
	after := d.MemoryStats()
	if after.InUse > before.InUse-size || after.Peak != before.Peak || (size > 32<<20 && after.Allocated >= before.Allocated) {
		t.Errorf("after closing the buffer: %+v, before %+v (a dedicated block must be freed)", after, before)
	}
	t.Logf("%d MiB buffer; memory %+v", size>>20, before)
}

// TestTimestamps times a pass; the end must not precede the beginning, resolving gives the same ticks, and
// ValidBits is Vulkan's 36 to 64, no resolved tick above them.
func TestTimestamps(t *testing.T) {
	env := newEnv(t, FeatureTimestampQuery)
	d := env.dev
	const n = 1 << 18
	O := newBuffer(t, d, 4*n, storageRW)
	k := newKernel(t, d, "fill", 8, nil, BindingStorage)
	g := k.group(t, d, O)
	qs, err := d.CreateQuerySet(&QuerySetDescriptor{Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	R := newBuffer(t, d, 16, BufferUsageQueryResolve|BufferUsageCopySrc)
	e, _ := d.CreateCommandEncoder(nil)
	p := e.BeginComputePass(&ComputePassDescriptor{TimestampWrites: &PassTimestampWrites{QuerySet: qs, BeginningOfPassWriteIndex: 0, EndOfPassWriteIndex: 1}})
	p.SetPipeline(k.pipe)
	p.SetBindGroup(0, g)
	p.SetPushConstants(0, u32Bytes(n, 1))
	p.DispatchWorkgroups(n/256, 1, 1)
	p.End()
	e.ResolveQuerySet(qs, 0, 2, R, 0)
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Now()
	if _, err := d.Queue().Submit(cb); err != nil {
		t.Fatal(err)
	}
	ts, err := qs.Read(0, 2)
	elapsed := time.Since(wall)
	if err != nil {
		t.Fatal(err)
	}
	if ts[1] < ts[0] || ts[0] == 0 {
		t.Errorf("timestamps %v", ts)
	}
	raw := make([]byte, 16)
	if err := d.Queue().ReadBuffer(R, 0, raw); err != nil {
		t.Fatal(err)
	}
	r0 := uint64(raw[0]) | uint64(raw[1])<<8 | uint64(raw[2])<<16 | uint64(raw[3])<<24 | uint64(raw[4])<<32 | uint64(raw[5])<<40 | uint64(raw[6])<<48 | uint64(raw[7])<<56
	// Independent of the tick-to-ns formula: the pass took time, no longer than
	// the wall clock around its submission, and the resolved raw ticks are
	// those Read converted (same order, nonzero).
	if d := time.Duration(ts[1] - ts[0]); d <= 0 || d > elapsed {
		t.Errorf("the pass took %v by its timestamps, %v by the wall clock around it", d, elapsed)
	}
	if r0 == 0 {
		t.Error("resolved timestamp 0")
	}
	if b := qs.ValidBits(); b < 36 || b > 64 || b < 64 && r0>>b != 0 {
		t.Errorf("%d valid bits (Vulkan: 36 to 64), resolved timestamp %#x", b, r0)
	}
	t.Logf("pass of %d invocations: %d ns; %d valid bits", n, ts[1]-ts[0], qs.ValidBits())
}

// TestTimestampsUnwritten: reading queries no submission wrote is an error, not a hang.
func TestTimestampsUnwritten(t *testing.T) {
	env := newEnv(t, FeatureTimestampQuery)
	qs, err := env.dev.CreateQuerySet(&QuerySetDescriptor{Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = qs.Read(0, 2)
	isErr(t, err, ErrBadUsage)
}

// TestDisjointRanges: dispatches writing disjoint ranges of one buffer need no barrier; reading them does.
func TestDisjointRanges(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 4096 // elements per half
	align := uint64(max(d.Limits().MinStorageBufferOffsetAlignment, 4))
	half := (4*n + align - 1) / align * align
	O := newBuffer(t, d, 2*half, storageRW)
	S := newBuffer(t, d, 4*n, storageRW)
	fill := newKernel(t, d, "fill", 8, nil, BindingStorage)
	lo, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: fill.layout, Entries: []BindGroupEntry{{0, O, 0, 4 * n}}})
	if err != nil {
		t.Fatal(err)
	}
	hi, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: fill.layout, Entries: []BindGroupEntry{{0, O, half, 4 * n}}})
	if err != nil {
		t.Fatal(err)
	}
	chain := newKernel(t, d, "chain", 8, nil, BindingReadOnlyStorage, BindingReadOnlyStorage, BindingStorage)
	sum, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: chain.layout, Entries: []BindGroupEntry{{0, O, 0, 4 * n}, {1, O, half, 4 * n}, {2, S, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	e := run(t, d, func(p *ComputePass) {
		p.SetPipeline(fill.pipe)
		p.SetBindGroup(0, lo)
		p.SetPushConstants(0, u32Bytes(n, 1))
		p.DispatchWorkgroups(n/256, 1, 1)
		p.SetBindGroup(0, hi)
		p.SetPushConstants(0, u32Bytes(n, 2))
		p.DispatchWorkgroups(n/256, 1, 1)
		p.SetPipeline(chain.pipe)
		p.SetBindGroup(0, sum)
		p.SetPushConstants(0, u32Bytes(n, 0))
		p.DispatchWorkgroups(n/64, 1, 1)
	})
	if e.Barriers != 1 {
		t.Errorf("barriers %d, want 1 (only before the reading dispatch)", e.Barriers)
	}
	s := readF32(t, d, S)
	for i := range n {
		// The fills wrote u32 bit patterns; the sum reads them as f32.
		a, b := math.Float32frombits(uint32(i*3+1)), math.Float32frombits(uint32(i*3+2))
		if s[i] != a+b {
			t.Fatalf("s[%d] = %g, want %g", i, s[i], a+b)
		}
	}
}

// TestStorage16Bit loads f16 weights into f32 arithmetic with only the 16-bit storage feature enabled.
func TestStorage16Bit(t *testing.T) {
	env := newEnv(t, FeatureStorage16Bit)
	d := env.dev
	if d.HasFeature(FeatureShaderF16) {
		t.Fatal("shader-f16 enabled without being requested")
	}
	const n = 1024
	rng := rand.New(rand.NewPCG(17, 18))
	h := make([]uint16, n)
	raw := make([]byte, 2*n)
	for i := range h {
		h[i] = f16bits(rng.Float32()*200 - 100)
		raw[2*i], raw[2*i+1] = byte(h[i]), byte(h[i]>>8)
	}
	X, Y := newBuffer(t, d, 2*n, storageRW), newBuffer(t, d, 4*n, storageRW)
	d.Queue().WriteBuffer(X, 0, raw)
	k := newKernel(t, d, "h2f", 0, nil, BindingReadOnlyStorage, BindingStorage)
	g := k.group(t, d, X, Y)
	run(t, d, func(p *ComputePass) {
		p.SetPipeline(k.pipe)
		p.SetBindGroup(0, g)
		p.DispatchWorkgroups(n/64, 1, 1)
	})
	for i, v := range readF32(t, d, Y) {
		if want := f16val(h[i])*2 + 1; v != want {
			t.Fatalf("y[%d] = %g, want %g", i, v, want)
		}
	}
}

// TestBarrierAcrossCopy: a dispatch reads A, a copy out of what it wrote makes
// the encoder place a barrier for the transfer, and a later dispatch writes A.
// That barrier must also order the read of A before the write (the validation
// layer's synchronization checks report the write-after-read otherwise), and
// the results must be those of the program order.
func TestBarrierAcrossCopy(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	const n = 1 << 12
	a, b, A, B, k := chainInputs(t, d, n)
	C, D := newBuffer(t, d, 4*n, storageRW), newBuffer(t, d, 4*n, storageRW)
	q := d.Queue()
	abc, bba := k.group(t, d, A, B, C), k.group(t, d, B, B, A)
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
	p.End()
	e.CopyBufferToBuffer(C, 0, D, 0, 4*n) // D = C: a barrier before the copy
	p = e.BeginComputePass(nil)
	p.SetPipeline(k.pipe)
	p.SetBindGroup(0, bba) // A = B + B, after the first dispatch read A
	p.SetPushConstants(0, u32Bytes(n, 0))
	p.DispatchWorkgroups(groups, 1, 1)
	p.End()
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(cb); err != nil {
		t.Fatal(err)
	}
	aa, dd := readF32(t, d, A), readF32(t, d, D)
	for i := range n {
		if dd[i] != a[i]+b[i] || aa[i] != 2*b[i] {
			t.Fatalf("i=%d: D %g want %g, A %g want %g", i, dd[i], a[i]+b[i], aa[i], 2*b[i])
		}
	}
}

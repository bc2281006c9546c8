package shaders

import (
	"encoding/binary"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// A coop kernel's time on a GPU is its global loads, its staging into
// workgroup memory (stores and barriers), its matrix loads and
// multiply-adds, and (the LM head) its fold of the logits. The H200's
// timings (BENCHMARKS.md) put the LM head's main loop some ten times
// above what its multiply-adds and memory traffic account for, and no
// profiler runs there. An ablation takes one part out of the kernel's
// text and times what is left: the differences say where the time goes.
// One variant adds no saving of its own but a change the kernels could
// make: the activations read from memory as f16 (rounded once by their
// producer), against the f32 they read now. The results are wrong by
// design; BenchmarkCoopAblation only times them.

// coopAblation is a variant of a coop kernel with some of its work taken
// out: each edit replaces the one occurrence of its first string with its
// second.
type coopAblation struct {
	name  string
	edits [][2]string
}

// The edits: global loads that return a value made from the index (nothing
// read from memory), staging that stores nothing (the barriers stay), the
// main loop's two barriers taken out (with staging gone, nothing races
// that matters to a timing), multiply-adds taken out (the matrix loads
// feeding them go too: the driver drops what is never used), and the LM
// head's fold over no columns.
var (
	noGlobalMatmul = [][2]string{
		returnFirst("fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
		returnFirst("fn loadW(bn0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
	}
	noStageMatmul = [][2]string{
		returnFirst("fn stageX(b: u32, i: u32, h: vec4<f16>) {", "return;"),
		returnFirst("fn stageW(b: u32, i: u32, v: vec4<f16>) {", "return;"),
	}
	noBarrierMatmul = [][2]string{
		{"stageW(buf, li + l * WG, rw[l]); }\n\t\t\tworkgroupBarrier();", "stageW(buf, li + l * WG, rw[l]); }"},
		{"workgroupBarrier(); // every read of this step's tiles", "// every read of this step's tiles"},
	}
	noGlobalHead = [][2]string{
		returnFirst("fn loadH(r0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
		returnFirst("fn loadW(bv0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
	}
	noStageHead = [][2]string{
		returnFirst("fn stageH(b: u32, i: u32, f: vec4<f16>) {", "return;"),
		returnFirst("fn stageW(b: u32, i: u32, v: vec4<f16>) {", "return;"),
	}
	noBarrierHead = [][2]string{
		{"stageW(buf, li + l * WG, rw[l]); }\n\t\t\t\tworkgroupBarrier();", "stageW(buf, li + l * WG, rw[l]); }"},
		{"workgroupBarrier(); // every read of the tiles before", "// every read of the tiles before"},
	}
	noFoldHead = [][2]string{{"let nc = (CW + NQ - 1u - tx) / NQ;", "let nc = 0u;"}}
	// The activations' rounding to f16 as their tiles are loaded: the same
	// f32 loads, their halves combined by an exclusive or (all four values
	// used, so that no load is narrowed) instead of rounded and clamped.
	noConvertMatmul = [][2]string{{"if VEC == 1u { return toF16(x[e / 4u]); }", "if VEC == 1u { " + xorHalves("x[e / 4u]") + " }"}}
	noConvertHead   = [][2]string{{"return vec4<f16>(clamp(h[(r * p.C + k) / 4u], vec4<f32>(-65504.0), vec4<f32>(65504.0)));",
		xorHalves("h[(r * p.C + k) / 4u]")}}
	// The activations in memory as f16 already (their producer rounding
	// them once, instead of every tile that loads them): half the loads'
	// bytes, no rounding. The same buffers, bound as arrays of vec4<f16>.
	f16Matmul = [][2]string{
		{"var<storage, read> x: array<vec4<f32>>;", "var<storage, read> x: array<vec4<f16>>;"},
		{"if VEC == 1u { return toF16(x[e / 4u]); }", "if VEC == 1u { return x[e / 4u]; }"},
		{"v[c] = x[(e + c) / 4u][(e + c) % 4u];", "v[c] = f32(x[(e + c) / 4u][(e + c) % 4u]);"},
	}
	f16Head = [][2]string{
		{"var<storage, read> h: array<vec4<f32>>;", "var<storage, read> h: array<vec4<f16>>;"},
		{"return vec4<f16>(clamp(h[(r * p.C + k) / 4u], vec4<f32>(-65504.0), vec4<f32>(65504.0)));", "return h[(r * p.C + k) / 4u];"},
	}
)

// xorHalves is WGSL that returns a vec4<f16> made of the bits of the
// vec4<f32> v, loaded once, without rounding: its first and third words,
// and its second and fourth, combined by an exclusive or.
func xorHalves(v string) string {
	return fmt.Sprintf("let u = bitcast<vec4<u32>>(%s); return bitcast<vec4<f16>>(u.xy ^ u.zw);", v)
}

// constLoad is what a global load returns instead of reading memory: a
// value made from its index.
const constLoad = "return vec4<f16>(f16(i & 7u));"

// returnFirst is the edit that makes the function whose first line is sig
// start with the statement ret (the rest of its body is then dead code).
func returnFirst(sig, ret string) [2]string { return [2]string{sig, sig + "\n\t" + ret} }

// coopAblations are each coop kernel's variants, the whole kernel first.
var coopAblations = map[string][]coopAblation{
	"matmul_coop.wgsl": {
		{"full", nil},
		{"no-global-loads", noGlobalMatmul},
		{"no-staging", noStageMatmul},
		{"no-multiply", [][2]string{{"acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(a, b[j], acc[i * FN + j]);", ""}}},
		{"no-convert", noConvertMatmul},
		{"f16-activations", f16Matmul},
		{"multiply-only", slices.Concat(noGlobalMatmul, noStageMatmul)},
		{"multiply-only-no-barriers", slices.Concat(noGlobalMatmul, noStageMatmul, noBarrierMatmul)},
	},
	"lmhead_loss_coop.wgsl": {
		{"full", nil},
		{"no-global-loads", noGlobalHead},
		{"no-staging", noStageHead},
		{"no-multiply", [][2]string{{"acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(a[i], b[j], acc[i * FN + j]);", ""}}},
		{"no-fold", noFoldHead},
		{"no-convert", noConvertHead},
		{"f16-activations", f16Head},
		{"multiply-only", slices.Concat(noFoldHead, noGlobalHead, noStageHead)},
		{"multiply-only-no-barriers", slices.Concat(noFoldHead, noGlobalHead, noStageHead, noBarrierHead)},
	},
}

// ablatedSource is kernel name's text for tiling t with ablation a's edits,
// each of which must apply exactly once.
func ablatedSource(name string, t coopTiles, a coopAblation) (wgsl.Expanded, error) {
	x, err := coopSource(name, t)
	if err != nil {
		return x, err
	}
	for _, e := range a.edits {
		if n := strings.Count(x.Text, e[0]); n != 1 {
			return x, fmt.Errorf("%s %s: %q occurs %d times, want once", name, a.name, e[0], n)
		}
		x.Text = strings.Replace(x.Text, e[0], e[1], 1)
	}
	return x, nil
}

// ablationTilings are the tilings BenchmarkCoopAblation takes apart for
// cfg: the default, and the H200's picks and their neighbours (the matmul's
// 16 subgroups of 2 x 2 matrices and 4 of 4 x 4; the LM head's 4 subgroups
// of 4 x 4 and 16 of 1 x 4).
func ablationTilings(cfg MatrixConfig, sgs, maxShared int) map[string][]coopTiles {
	out := map[string][]coopTiles{"matmul_coop.wgsl": {coopMatmulTiles(cfg, sgs)},
		"lmhead_loss_coop.wgsl": {coopHeadTiles(cfg, sgs, sharedVocabTile, sharedSliceTiles)}}
	for _, s := range []coopShape{{32, 32, 4, 4, 32, 2}, {64, 64, 2, 2, 32, 2}, {64, 64, 2, 2, 16, 3}} {
		if t, ok := s.tiles(cfg, sgs, maxShared); ok && t.valid() == nil {
			out["matmul_coop.wgsl"] = append(out["matmul_coop.wgsl"], t)
		}
	}
	for _, s := range []coopHeadShape{{128, 128, 2, 2, 32, 2}, {128, 128, 8, 2, 32, 2}} {
		if t, ok := s.tiles(cfg, sgs, sharedVocabTile, sharedSliceTiles, maxShared); ok {
			out["lmhead_loss_coop.wgsl"] = append(out["lmhead_loss_coop.wgsl"], t)
		}
	}
	return out
}

// TestCoopAblationsCompile: every ablation of every tiling the benchmark
// takes apart applies (each edit found once) and compiles natively to a
// module the newer spirv-val accepts, so that a GPU's short lease is not
// spent on a variant that does not build; and each differs from the whole
// kernel's text.
func TestCoopAblationsCompile(t *testing.T) {
	val := prereq.SpirvValNew(t)
	cfg := MatrixConfig{M: 16, N: 16, K: 16, SubgroupSize: 32}
	for name, tilings := range ablationTilings(cfg, 32, 48<<10) {
		for _, tl := range tilings {
			full, err := coopSource(name, tl)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range coopAblations[name] {
				x, err := ablatedSource(name, tl, a)
				if err != nil {
					t.Fatal(err)
				}
				if (x.Text == full.Text) != (a.edits == nil) {
					t.Errorf("%s %s: the text changed %v", name, a.name, x.Text != full.Text)
				}
				m, err := wgsl.Compile(name, x.Text, wgsl.Options{CooperativeMatrix: true})
				if err != nil {
					t.Fatalf("%s %s %v: %v", name, a.name, tl, x.MapErrors(err))
				}
				sp, err := m.Specialize("main", tl.constSet().Map())
				if err != nil {
					t.Fatalf("%s %s %v: %v", name, a.name, tl, err)
				}
				spirvValidate(t, val, fmt.Sprintf("%s %s %v", name, a.name, tl), sp.SPIRV)
			}
		}
	}
	if _, err := ablatedSource("matmul_coop.wgsl", coopMatmulTiles(cfg, 32), coopAblation{"bad", [][2]string{{"no such line", ""}}}); err == nil {
		t.Error("an edit that does not apply: no error")
	}
}

// BenchmarkCoopAblation times each ablation (coopAblations) of the coop
// matmul at GPT-2 124M's QKV shape (K 768, N 2304) and of the coop LM head
// (C 768, V 50257), for 64 windows of 1024 tokens ($WGPU_BENCH_COOP_M for
// another row count), with the tilings of ablationTilings, on a device with
// matrix units (skipped elsewhere). One dispatch and wait per iteration;
// reports TFLOP/s of the whole kernel's work, so that the variants compare.
// On a GPU:
//
//	go test ./shaders -run '^$' -bench CoopAblation -benchtime 5x -timeout 20m
func BenchmarkCoopAblation(b *testing.B) {
	d, cfg, M, sgs := coopBenchDevice(b)
	const C, V = 768, 50257
	K, N := C, 3*C
	mm := map[string]Buf{
		"x": {Buffer: d.buffer(b, "x", randomF32(uint32(K), M*K))}, "w": {Buffer: d.buffer(b, "w", weightBytes(randF32(2, K*N, 0, 0.02), true))},
		"bias": {Buffer: d.buffer(b, "bias", weightBytes(randF32(3, N, 0, 0.1), true))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*M*N))},
		"kc": {Buffer: d.buffer(b, "kc", nil)}, "vc": {Buffer: d.buffer(b, "vc", nil)},
	}
	tb := make([]byte, 4*M)
	for i := range M {
		binary.LittleEndian.PutUint32(tb[4*i:], uint32((i*7919)%V))
	}
	head := map[string]Buf{
		"h": {Buffer: d.buffer(b, "h", randomF32(1, M*C))}, "wte": {Buffer: d.buffer(b, "wte", weightBytes(randF32(2, V*C, 0, 0.02), true))},
		"targets": {Buffer: d.buffer(b, "targets", tb)}, "part": {Buffer: d.buffer(b, "part", make([]byte, 8*ceilDiv(V, sharedVocabTile*sharedSliceTiles)*M))},
		"tgt": {Buffer: d.buffer(b, "tgt", make([]byte, 4*M))},
	}
	variants := ablationVariants(d, cfg, sgs)
	for _, v := range variants {
		b.Run(v.label, func(b *testing.B) {
			if v.err != nil {
				b.Fatal(v.err)
			}
			if !v.tl.head {
				benchDispatch(b, d, v.p, mm, Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0},
					sharedGroups(M, N, v.tl.BM(), v.tl.BN(), 65535))
				b.ReportMetric(2*float64(M)*float64(N)*float64(K)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
				return
			}
			benchDispatch(b, d, v.p, head, Params{"P": float64(M), "C": C, "V": V, "v0": 0}, lossSharedGroups(M, V, v.tl.BM(), v.tl.vt, v.tl.nt))
			b.ReportMetric(2*float64(M)*V*C*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
		})
	}
}

// ablationVariant is one ablation of one tiling of a coop kernel, compiled:
// its pipeline, or why there is none.
type ablationVariant struct {
	label string
	tl    coopTiles
	p     *Pipeline
	err   error
}

// ablationVariants compiles every ablation of every tiling of
// ablationTilings that fits d, as many at a time as Go has processors (a
// driver compiles a pipeline on one thread, for a second or more where it
// has matrix units, and there are some sixty), in a fixed order: kernel by
// name, tiling, ablation.
func ablationVariants(d *testDev, cfg MatrixConfig, sgs int) []*ablationVariant {
	tilings := ablationTilings(cfg, sgs, int(d.dev.Limits().MaxComputeWorkgroupStorageSize))
	var out []*ablationVariant
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, name := range slices.Sorted(maps.Keys(tilings)) {
		for _, tl := range tilings[name] {
			if tl.fits(d.dev) != nil {
				continue
			}
			for _, a := range coopAblations[name] {
				v := &ablationVariant{label: fmt.Sprintf("%s/%dx%d_%dx%d_BK%d_ST%d/%s", strings.TrimSuffix(name, ".wgsl"), tl.SGM, tl.SGN, tl.FM, tl.FN, tl.BK, tl.ST, a.name), tl: tl}
				out = append(out, v)
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					v.p, v.err = compileAblation(d, name, tl, a)
				})
			}
		}
	}
	wg.Wait()
	return out
}

// compileAblation is the pipeline of ablation a of kernel name with tiling
// t (the matmul with a plain store of its result and vector loads).
func compileAblation(d *testDev, name string, t coopTiles, a coopAblation) (*Pipeline, error) {
	x, err := ablatedSource(name, t, a)
	if err != nil {
		return nil, err
	}
	k, err := compileKernel(d.dev, name, x, uint32(t.cfg.SubgroupSize))
	if err != nil {
		return nil, err
	}
	consts := t.constSet()
	if !t.head {
		consts = consts.with("EPI", float64(epiStore)).with("VEC", 1)
	}
	return k.pipeline(consts)
}

package shaders

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// A coop kernel's time on a GPU is its global loads, its staging into
// workgroup memory (stores and barriers), its matrix loads and
// multiply-adds, the LM head's fold of the logits, and attention's softmax
// and the barriers between the steps of its tiles. The H200's timings
// (BENCHMARKS.md) put the LM head's main loop some ten times above what its
// multiply-adds and memory traffic account for, and no profiler runs
// there. An ablation takes one part out of the kernel's text and times
// what is left: the differences say where the time goes. One variant of
// the matmul and of attention adds no saving of its own but a change the
// kernels could make: the activations (attention: the KV cache) read from
// memory as f16, rounded once by their producer, against the f32 they read
// now (the LM head reads h so already: to_f16.wgsl). The results are wrong
// by design; BenchmarkCoopAblation only times them.

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
		returnFirst("fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f32> {", "return vec4<f32>(f32(i & 7u));"),
		returnFirst("fn loadW(bn0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
	}
	noStageMatmul = [][2]string{
		returnFirst("fn stageX(b: u32, bm0: u32, k0: u32, i: u32, v: vec4<f32>) {", "return;"),
		returnFirst("fn stageW(b: u32, bn0: u32, k0: u32, i: u32, r: vec4<f16>) {", "return;"),
	}
	noBarrierMatmul = [][2]string{
		{"stageW(buf, bn0, s * BK, li + l * WG, rw[l]); }\n\t\t\tworkgroupBarrier();", "stageW(buf, bn0, s * BK, li + l * WG, rw[l]); }"},
		{"workgroupBarrier(); // every read of this step's tiles", "// every read of this step's tiles"},
	}
	noGlobalHead = [][2]string{
		returnFirst("fn loadH(r0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
		returnFirst("fn loadW(bv0: u32, k0: u32, i: u32) -> vec4<f16> {", constLoad),
	}
	noStageHead = [][2]string{
		returnFirst("fn stageH(b: u32, r0: u32, k0: u32, i: u32, r: vec4<f16>) {", "return;"),
		returnFirst("fn stageW(b: u32, bv0: u32, k0: u32, i: u32, r: vec4<f16>) {", "return;"),
	}
	noBarrierHead = [][2]string{
		{"stageW(buf, bv0, s * BK, li + l * WG, rw[l]); }\n\t\t\t\tworkgroupBarrier();", "stageW(buf, bv0, s * BK, li + l * WG, rw[l]); }"},
		{"workgroupBarrier(); // every read of the tiles before", "// every read of the tiles before"},
	}
	noFoldHead = [][2]string{{"let nc = (CW + NQ - 1u - tx) / NQ;", "let nc = 0u;"}}
	// The activations' rounding to f16 as their tiles are staged: the same
	// f32 values, their halves combined by an exclusive or (all four values
	// used, so that no load is narrowed) instead of rounded and clamped.
	noConvertMatmul = [][2]string{{"select(vec4<f16>(0.0), toF16(v), xIn(bm0, k0, i))", "select(vec4<f16>(0.0), " + xorHalves("v") + ", xIn(bm0, k0, i))"}}
	// The activations in memory as f16 already (their producer rounding
	// them once, instead of every tile that loads them): half the loads'
	// bytes and registers, no rounding. The same buffers, bound as arrays
	// of vec4<f16>.
	f16Matmul = [][2]string{
		{"var<storage, read> x: array<vec4<f32>>;", "var<storage, read> x: array<vec4<f16>>;"},
		{"fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f32> {", "fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f16> {"},
		{"var v: vec4<f32>;\n\tfor (var c = 0u; c < 4u; c++) { v[c] = x[", "var v: vec4<f16>;\n\tfor (var c = 0u; c < 4u; c++) { v[c] = x["},
		{"fn stageX(b: u32, bm0: u32, k0: u32, i: u32, v: vec4<f32>) {", "fn stageX(b: u32, bm0: u32, k0: u32, i: u32, v: vec4<f16>) {"},
		{"select(vec4<f16>(0.0), toF16(v), xIn(bm0, k0, i))", "select(vec4<f16>(0.0), v, xIn(bm0, k0, i))"},
		{"var rx: array<vec4<f32>, MAXL>;", "var rx: array<vec4<f16>, MAXL>;"},
	}
)

// xorHalves is a WGSL expression, a vec4<f16> made of the bits of the
// vec4<f32> variable v without rounding: its first and third words, and its
// second and fourth, combined by an exclusive or.
func xorHalves(v string) string {
	return fmt.Sprintf("bitcast<vec4<f16>>(bitcast<vec4<u32>>(%[1]s).xy ^ bitcast<vec4<u32>>(%[1]s).zw)", v)
}

// attention_coop.wgsl's: the keys' and values' loads from the cache
// (constants, or unrounded, or from a cache of f16), their staging, the
// scores' and P·V's multiply-adds (Q·Kᵀ and P·V), the softmax, and the
// barriers between the steps of a tile (the one after staging stays).
var (
	noLoadAttn = [][2]string{
		{"kp[l] = packVec(kc[tileAt(li + l * WG, 0u, keys, cbase)],", "kp[l] = packVec(vec4<f32>(f32(l & 7u)),"},
		{"vp[l] = packVec(vc[tileAt(li + l * WG, 0u, keys, cbase)],", "vp[l] = packVec(vec4<f32>(f32(l & 7u)),"},
		{"kp[l] = packVec(kc[tileAt(li + l * WG, s0 + BKV, keys, cbase)],", "kp[l] = packVec(vec4<f32>(f32(l & 7u)),"},
		{"vp[l] = packVec(vc[tileAt(li + l * WG, s0 + BKV, keys, cbase)],", "vp[l] = packVec(vec4<f32>(f32(l & 7u)),"},
		{"kf[l] = kc[tileAt(li + (b0 + l) * WG, s0, keys, cbase)];", "kf[l] = vec4<f32>(f32(l & 7u));"},
		{"vf[l] = vc[tileAt(li + (b0 + l) * WG, s0, keys, cbase)];", "vf[l] = vec4<f32>(f32(l & 7u));"},
		{"kr[l] = kc[tileAt(li + l * WG, 0u, keys, cbase)];", "kr[l] = vec4<f32>(f32(l & 7u));"},
		{"vr[l] = vc[tileAt(li + l * WG, 0u, keys, cbase)];", "vr[l] = vec4<f32>(f32(l & 7u));"},
		{"kr[l] = kc[tileAt(li + l * WG, s0 + BKV, keys, cbase)];", "kr[l] = vec4<f32>(f32(l & 7u));"},
		{"vr[l] = vc[tileAt(li + l * WG, s0 + BKV, keys, cbase)];", "vr[l] = vec4<f32>(f32(l & 7u));"},
	}
	noConvertAttn = [][2]string{
		{"bitcast<vec2<u32>>(toF16(x))", "bitcast<vec2<u32>>(" + xorHalves("x") + ")"},
		{"stage16(o, select(vec4<f16>(0.0), toF16(k), ok));", "stage16(o, " + xorHalves("k") + ");"},
		{"stage16(BKV * KS + o, select(vec4<f16>(0.0), toF16(v), ok));", "stage16(BKV * KS + o, " + xorHalves("v") + ");"},
	}
	f16Attn = [][2]string{
		{"var<storage, read> kc: array<vec4<f32>>;", "var<storage, read> kc: array<vec4<f16>>;"},
		{"var<storage, read> vc: array<vec4<f32>>;", "var<storage, read> vc: array<vec4<f16>>;"},
		{"fn packVec(x: vec4<f32>,", "fn packVec(x: vec4<f16>,"},
		{"bitcast<vec2<u32>>(toF16(x))", "bitcast<vec2<u32>>(x)"},
		{"var kf: array<vec4<f32>, LB>;", "var kf: array<vec4<f16>, LB>;"},
		{"var vf: array<vec4<f32>, LB>;", "var vf: array<vec4<f16>, LB>;"},
		{"var kr: array<vec4<f32>, SL>;", "var kr: array<vec4<f16>, SL>;"},
		{"var vr: array<vec4<f32>, SL>;", "var vr: array<vec4<f16>, SL>;"},
		{"k: vec4<f32>, v: vec4<f32>) {", "k: vec4<f16>, v: vec4<f16>) {"},
		{"select(vec4<f16>(0.0), toF16(k), ok)", "select(vec4<f16>(0.0), k, ok)"},
		{"select(vec4<f16>(0.0), toF16(v), ok)", "select(vec4<f16>(0.0), v, ok)"},
	}
	noStageAttn = [][2]string{
		{"stage16(o, select(vec4<f16>(0.0), toF16(k), ok));\n\tstage16(BKV * KS + o, select(vec4<f16>(0.0), toF16(v), ok));", ""},
		{"stage16(o, bitcast<vec4<f16>>(kp[l]));\n\t\t\t\t\tstage16(BKV * KS + o, bitcast<vec4<f16>>(vp[l]));", ""},
	}
	noScoresAttn  = [][2]string{{"acc[i * NS + n] = subgroupMatrixMultiplyAccumulate(qa[i], kt, acc[i * NS + n]);", ""}}
	noSoftmaxAttn = [][2]string{{"// 3. The online softmax of the subgroup's rows.\n\t\tif busy {", "if false {"}}
	noPVAttn      = [][2]string{{"acc[i * NO + n] = subgroupMatrixMultiplyAccumulate(pm[i], vm, acc[i * NO + n]);", ""}}
	noBarrierAttn = [][2]string{
		{"workgroupBarrier();\n\t\t// 3. The online", "// 3. The online"},
		{"workgroupBarrier();\n\t\t// 4. P·V", "// 4. P·V"},
		{"workgroupBarrier();\n\t\t// 5. Rescale", "// 5. Rescale"},
	}
)

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
		{"multiply-only", slices.Concat(noFoldHead, noGlobalHead, noStageHead)},
		{"multiply-only-no-barriers", slices.Concat(noFoldHead, noGlobalHead, noStageHead, noBarrierHead)},
	},
	"attention_coop.wgsl": {
		{"full", nil},
		{"no-kv-loads", noLoadAttn},
		{"no-convert", noConvertAttn},
		{"f16-cache", f16Attn},
		{"no-staging", noStageAttn},
		{"no-scores", noScoresAttn},
		{"no-softmax", noSoftmaxAttn},
		{"no-pv", noPVAttn},
		{"no-step-barriers", noBarrierAttn},
		{"matrix-only", slices.Concat(noLoadAttn, noStageAttn, noSoftmaxAttn)},
	},
}

// ablatedSource is kernel name's text for tiling t with ablation a's edits,
// each of which must apply exactly once.
func ablatedSource(name string, t coopTiles, a coopAblation) (wgsl.Expanded, error) {
	x, err := coopSource(name, t)
	if err != nil {
		return x, err
	}
	return ablate(name, x, a)
}

// ablatedAttention is attention_coop.wgsl's text for tiling t with
// ablation a's edits.
func ablatedAttention(t attnCoopTiles, a coopAblation) (wgsl.Expanded, error) {
	x, err := attnCoopSource(t)
	if err != nil {
		return x, err
	}
	return ablate("attention_coop.wgsl", x, a)
}

// ablate applies a's edits to kernel name's text x, each exactly once.
func ablate(name string, x wgsl.Expanded, a coopAblation) (wgsl.Expanded, error) {
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
	for _, s := range []coopShape{{32, 32, 4, 4, 32, 2, 0}, {64, 64, 2, 2, 32, 2, 0}, {64, 64, 2, 2, 16, 3, 0}} {
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

// ablationAttnTilings are the attention tilings BenchmarkCoopAblation takes
// apart for cfg, subgroups of sgs and head size hd on a device with limits
// l: the default and, of those the autotuner times, the default's block
// with each other prefetch (PF 0 and 2) and two with 32 rows a subgroup
// (two subgroups, and one: its barriers wait for one subgroup alone) that
// fit. A few, since each is ten pipelines to compile within the device
// check's minutes.
func ablationAttnTilings(cfg MatrixConfig, sgs, hd int, l wgpu.Limits) ([]attnCoopTiles, error) {
	def, err := attnCoopTilesFor(cfg, sgs, hd, l)
	if err != nil {
		return nil, err
	}
	out := []attnCoopTiles{def}
	for _, s := range []attnCoopShape{{16, 4, 64, 0}, {16, 4, 64, 2}, {32, 2, 32, 1}, {32, 1, 32, 1}} {
		if t, ok := s.tiles(def); ok && t.fits(l) == nil && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ablationJob is one ablation of one tiling of a coop kernel: its text
// (or why there is none), the pipeline constants and the subgroup size it
// requires; coop (the matmul, with a plain store and vector loads, or the
// LM head) or attn is its tiling.
type ablationJob struct {
	label  string
	src    wgsl.Expanded
	err    error
	consts constSet
	sg     uint32
	coop   *coopTiles
	attn   *attnCoopTiles
}

// ablationJobs are every ablation of every tiling BenchmarkCoopAblation
// takes apart for cfg and subgroups of sgs on a device with limits l (the
// attention at head size 64), in a fixed order: kernel, tiling, ablation.
func ablationJobs(cfg MatrixConfig, sgs int, l wgpu.Limits) ([]ablationJob, error) {
	var out []ablationJob
	tilings := ablationTilings(cfg, sgs, int(l.MaxComputeWorkgroupStorageSize))
	for _, name := range []string{"matmul_coop.wgsl", "lmhead_loss_coop.wgsl"} {
		for _, tl := range tilings[name] {
			if tl.fitsLimits(l) != nil {
				continue
			}
			for _, a := range coopAblations[name] {
				j := ablationJob{label: fmt.Sprintf("%s/%dx%d_%dx%d_BK%d_ST%d/%s", strings.TrimSuffix(name, ".wgsl"), tl.SGM, tl.SGN, tl.FM, tl.FN, tl.BK, tl.ST, a.name),
					consts: tl.constSet(), sg: uint32(tl.cfg.SubgroupSize), coop: &tl}
				j.src, j.err = ablatedSource(name, tl, a)
				if !tl.head {
					j.consts = j.consts.with("EPI", float64(epiStore)).with("VEC", 1)
				}
				out = append(out, j)
			}
		}
	}
	attn, err := ablationAttnTilings(cfg, sgs, 64, l)
	if err != nil {
		return nil, err
	}
	for _, tl := range attn {
		for _, a := range coopAblations["attention_coop.wgsl"] {
			j := ablationJob{label: fmt.Sprintf("attention_coop/BQ%d_BKV%d_SG%d_PF%d/%s", tl.BQ(), tl.BKV, tl.SG, tl.PF, a.name),
				sg: uint32(tl.cfg.SubgroupSize), attn: &tl}
			j.src, j.err = ablatedAttention(tl, a)
			out = append(out, j)
		}
	}
	return out, nil
}

// TestCoopAblationsCompile: every ablation of every tiling the benchmark
// takes apart applies (each edit found once) and compiles natively to a
// module the newer spirv-val accepts, so that a GPU's short lease is not
// spent on a variant that does not build; and each but the whole kernel
// differs from the whole kernel's text.
func TestCoopAblationsCompile(t *testing.T) {
	val := prereq.SpirvValNew(t)
	cfg := MatrixConfig{M: 16, N: 16, K: 16, SubgroupSize: 32}
	jobs, err := ablationJobs(cfg, 32, wgpu.Limits{MaxComputeWorkgroupStorageSize: 48 << 10, MaxComputeInvocationsPerWorkgroup: 1024})
	if err != nil {
		t.Fatal(err)
	}
	kernels := map[string]int{}
	var full string
	for _, j := range jobs {
		if j.err != nil {
			t.Fatal(j.err)
		}
		kernel, _, _ := strings.Cut(j.label, "/")
		kernels[kernel]++
		if strings.HasSuffix(j.label, "/full") {
			full = j.src.Text
		} else if j.src.Text == full {
			t.Errorf("%s: the same text as the whole kernel's", j.label)
		}
		m, err := wgsl.Compile(j.label, j.src.Text, wgsl.Options{CooperativeMatrix: true})
		if err != nil {
			t.Fatalf("%s: %v", j.label, j.src.MapErrors(err))
		}
		sp, err := m.Specialize("main", j.consts.Map())
		if err != nil {
			t.Fatalf("%s: %v", j.label, err)
		}
		spirvValidate(t, val, j.label, sp.SPIRV)
	}
	for _, k := range []string{"matmul_coop", "lmhead_loss_coop", "attention_coop"} {
		if kernels[k] < 2*len(coopAblations[k+".wgsl"]) {
			t.Errorf("%s: %d variants, want every ablation of at least two tilings", k, kernels[k])
		}
	}
	if _, err := ablatedSource("matmul_coop.wgsl", coopMatmulTiles(cfg, 32), coopAblation{"bad", [][2]string{{"no such line", ""}}}); err == nil {
		t.Error("an edit that does not apply: no error")
	}
}

// BenchmarkCoopAblation times each ablation (coopAblations) of the coop
// matmul at GPT-2 124M's QKV shape (K 768, N 2304), of the coop LM head
// (C 768, V 50257), for 64 windows of 1024 tokens ($WGPU_BENCH_COOP_M for
// another row count), and of the coop attention at its shape (12 heads of
// 64, the whole causal triangle of 1024 positions, 8 windows:
// $WGPU_BENCH_ATTN_B for another count), with the tilings of
// ablationTilings and ablationAttnTilings, on a device with matrix units
// (skipped elsewhere). Every variant is compiled first, as many at a time
// as Go has processors (a driver compiles a pipeline on one thread, for a
// second or more with matrix units, and there are some hundred). One
// dispatch and wait per iteration; reports TFLOP/s of the whole kernel's
// work, so that the variants compare. On a GPU:
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
		"h": {Buffer: d.buffer(b, "h", weightBytes(randF32(1, M*C, 0, 1), true))}, "wte": {Buffer: d.buffer(b, "wte", weightBytes(randF32(2, V*C, 0, 0.02), true))},
		"targets": {Buffer: d.buffer(b, "targets", append(tb, make([]byte, 4*M)...))}, "part": {Buffer: d.buffer(b, "part", make([]byte, 8*ceilDiv(V, sharedVocabTile*sharedSliceTiles)*M))},
	}
	const T, H, hd = 1024, 12, 64
	B := attnBenchWindows(b)
	attn := map[string]Buf{
		"qkv": {Buffer: d.buffer(b, "qkv", randomF32(4, B*T*3*C))}, "kc": {Buffer: d.buffer(b, "kc", randomF32(5, B*H*T*hd))},
		"vc": {Buffer: d.buffer(b, "vc", randomF32(6, B*H*T*hd))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*B*T*C))},
	}
	attnFlops := float64(B*H) * 4 * hd * float64(T) * float64(T+1) / 2
	jobs, err := ablationJobs(cfg, sgs, d.dev.Limits())
	if err != nil {
		b.Fatal(err)
	}
	pipes := compileAblations(d, jobs)
	for i, j := range jobs {
		b.Run(j.label, func(b *testing.B) {
			p, err := pipes[i].p, pipes[i].err
			if err != nil {
				b.Fatal(err)
			}
			var flops float64
			switch {
			case j.coop != nil && !j.coop.head:
				benchDispatch(b, d, p, mm, Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0},
					sharedGroups(M, N, j.coop.BM(), j.coop.BN(), 65535))
				flops = 2 * float64(M) * float64(N) * float64(K)
			case j.coop != nil:
				benchDispatch(b, d, p, head, Params{"P": float64(M), "C": C, "V": V, "v0": 0}, lossSharedGroups(M, V, j.coop.BM(), j.coop.vt, j.coop.nt))
				flops = 2 * float64(M) * V * C
			default:
				benchDispatch(b, d, p, attn, Params{"B": float64(B), "T": T, "C": C, "H": H, "KV": H, "S": T, "pos0": 0, "ld": 3 * C, "lscale": 1},
					grid(j.attn.groups(B, H, T)))
				flops = attnFlops
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
		})
	}
}

// compiled is a job's pipeline, or why there is none.
type compiled struct {
	p   *Pipeline
	err error
}

// compileAblations makes every job's pipeline on d: the kernels one by one
// (our compiler: milliseconds), their pipelines as compilePipelines does,
// as many at a time as Go has processors (the driver's compiler: seconds);
// the results are in the jobs' order.
func compileAblations(d *testDev, jobs []ablationJob) []compiled {
	out := make([]compiled, len(jobs))
	kernels := make([]*Kernel, len(jobs))
	var pj []pipelineJob
	for i, j := range jobs {
		if out[i].err = j.err; j.err != nil {
			continue
		}
		if kernels[i], out[i].err = compileKernel(d.dev, j.label, j.src, j.sg); out[i].err == nil {
			pj = append(pj, pipelineJob{kernels[i], j.consts})
		}
	}
	compilePipelines(pj)
	for i, k := range kernels {
		if k != nil {
			out[i].p, out[i].err = k.pipeline(jobs[i].consts) // made above, or made again for its error
		}
	}
	return out
}

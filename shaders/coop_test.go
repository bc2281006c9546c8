package shaders

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// coopTestConfigs are the subgroup-matrix configurations the tests force on
// the test device, where the compiler lowers them to invocation code: the
// usual NVIDIA/AMD shape, Intel's, and the smallest.
var coopTestConfigs = []MatrixConfig{{M: 8, N: 8, K: 8}, {M: 16, N: 16, K: 16}, {M: 8, N: 16, K: 16}}

// coopDev is the test device, skipping the test where it cannot run the coop
// kernels at all (they need f16 and subgroups; lavapipe and the CI devices
// have both). On a GPU with matrix units it has wgpu.FeatureCooperativeMatrix
// (and subgroup-size control) enabled, so the kernels run natively, unless
// $WGPU_TEST_COOP_LOWERED is set.
func coopDev(t *testing.T) *testDev {
	t.Helper()
	return coopDevCapped(t, wgpu.Limits{})
}

// coopDevCapped is coopDev with the device's limits lowered to caps (see
// newTestDevCapped).
func coopDevCapped(t *testing.T, caps wgpu.Limits) *testDev {
	t.Helper()
	var extra []wgpu.FeatureName
	if os.Getenv("WGPU_TEST_COOP_LOWERED") == "" {
		extra = []wgpu.FeatureName{wgpu.FeatureCooperativeMatrix, wgpu.FeatureSubgroupSizeControl}
	}
	d := newTestDevCapped(t, caps, extra...)
	if !d.f16 || !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s: the coop kernels need %s and %s", d.info.Name, wgpu.FeatureShaderF16, wgpu.FeatureSubgroups)
	}
	if n := os.Getenv(partialSubgroupsEnv); n != "" {
		// Tiled for the reported size, the kernels need whole subgroups, which
		// the product asks devices with matrix units for (a required size where
		// it varies, full subgroups); lowered at 32 they also pass lavapipe's
		// loop limit.
		t.Skipf("%s runs %s lanes of its subgroups ($%s): the coop kernels need whole ones", d.info.Name, n, partialSubgroupsEnv)
	}
	return d
}

// coopConfigs are the configurations the tests run on d: the device's own
// where it has matrix units (native), else coopTestConfigs (lowered).
func coopConfigs(d *testDev) []MatrixConfig {
	var out []MatrixConfig
	for _, c := range deviceMatrixConfigs(d.dev) {
		if smallPow(c.M) && smallPow(c.N) && smallPow(c.K) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return coopTestConfigs
	}
	return out
}

// coopSGS is the subgroup size the coop kernels are tiled for on d with cfg.
func coopSGS(d *testDev, cfg MatrixConfig) int {
	if cfg.SubgroupSize != 0 {
		return cfg.SubgroupSize
	}
	return int(d.dev.Limits().SubgroupSize)
}

// roundF16s is x with every value rounded to f16 (clamped to its range), as
// the coop kernels stage activations.
func roundF16s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(float16.Fromfloat32(float32(math.Max(-65504, math.Min(65504, float64(v))))).Float32())
	}
	return out
}

func TestParseMatrixUnits(t *testing.T) {
	for in, want := range map[string]MatrixUnits{"": MatrixUnitsAuto, "auto": MatrixUnitsAuto, "off": MatrixUnitsOff, "on": MatrixUnitsOn} {
		if got, err := ParseMatrixUnits(in); err != nil || got != want {
			t.Errorf("ParseMatrixUnits(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"yes", "ON", "1"} {
		if _, err := ParseMatrixUnits(in); err == nil || !strings.Contains(err.Error(), "want auto, off or on") {
			t.Errorf("ParseMatrixUnits(%q): error %v, want one naming the choices", in, err)
		}
	}
	t.Setenv(MatrixUnitsEnv, "sometimes")
	if _, err := MatrixUnitsFromEnv(); err == nil || !strings.Contains(err.Error(), MatrixUnitsEnv) {
		t.Errorf("MatrixUnitsFromEnv with a bad value: %v, want an error naming $%s", err, MatrixUnitsEnv)
	}
}

// TestPickMatrixConfig: 16x16x16 is preferred, shapes the tiles do not take
// are skipped, none is reported.
func TestPickMatrixConfig(t *testing.T) {
	for _, c := range []struct {
		in   []MatrixConfig
		want MatrixConfig
		ok   bool
	}{
		{nil, MatrixConfig{}, false},
		{[]MatrixConfig{{M: 16, N: 8, K: 32}}, MatrixConfig{}, false},
		{[]MatrixConfig{{M: 8, N: 8, K: 8}, {M: 16, N: 16, K: 16}, {M: 8, N: 16, K: 16}}, MatrixConfig{M: 16, N: 16, K: 16}, true},
		{[]MatrixConfig{{M: 32, N: 32, K: 8}, {M: 8, N: 16, K: 16, SubgroupSize: 16}}, MatrixConfig{M: 8, N: 16, K: 16, SubgroupSize: 16}, true},
	} {
		if got, ok := pickMatrixConfig(c.in); got != c.want || ok != c.ok {
			t.Errorf("pickMatrixConfig(%v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestCoopSource: the five constant lines of both coop kernels are
// rewritten to the tiling, every other line kept where it was.
func TestCoopSource(t *testing.T) {
	for _, name := range []string{"matmul_coop.wgsl", "lmhead_loss_coop.wgsl"} {
		tl := coopTiles{cfg: MatrixConfig{M: 16, N: 32, K: 32}, FM: 3, FN: 5}
		x, err := coopSource(name, tl)
		if err != nil {
			t.Fatal(err)
		}
		orig, err := Source(name, false)
		if err != nil {
			t.Fatal(err)
		}
		got, was := strings.Split(x.Text, "\n"), strings.Split(orig, "\n")
		if len(got) != len(was) {
			t.Fatalf("%s: %d lines, the kernel has %d", name, len(got), len(was))
		}
		changed := 0
		for i := range got {
			if got[i] != was[i] {
				changed++
			}
		}
		for _, want := range []string{"const SM: u32 = 16u;", "const SN: u32 = 32u;", "const SK: u32 = 32u;", "const FM: u32 = 3u;", "const FN: u32 = 5u;"} {
			if !strings.Contains(x.Text, "\n"+want+" ") {
				t.Errorf("%s: no line %q", name, want)
			}
		}
		if changed != 5 {
			t.Errorf("%s: %d lines changed, want 5", name, changed)
		}
	}
}

// TestCoopTilesFit: the default tilings of every configuration the tests
// use fit the 32 KiB of workgroup memory lavapipe and SwiftShader have, for
// the LM head's tiles of 128 and 64 ids.
func TestCoopTilesFit(t *testing.T) {
	for _, cfg := range append(coopTestConfigs, MatrixConfig{M: 16, N: 16, K: 16, SubgroupSize: 64}) {
		for _, sgs := range []int{8, 32} {
			if cfg.SubgroupSize != 0 {
				sgs = cfg.SubgroupSize
			}
			tiles := []coopTiles{coopMatmulTiles(cfg, sgs), coopHeadTiles(cfg, sgs, 128, 8), coopHeadTiles(cfg, sgs, 64, 8)}
			for _, tl := range tiles {
				if err := tl.valid(); err != nil {
					t.Errorf("%v", err)
				}
				if b := tl.sharedBytes(); b > 32<<10 {
					t.Errorf("%v: %d bytes of workgroup memory", tl, b)
				}
			}
		}
	}
}

// coopTol is, per output of matmul_coop.wgsl with epilogue epi, how far it
// may be from the float64 reference y (= x·w + bias, x rounded to f16) of an
// M x K times K x N product on matrix units of depth sk: each of the
// ceil(K/sk)+1 accumulation steps may be off by 2⁻²² of the sum of
// magnitudes Σ|x·w| (four f32 ulps: the units may align partial sums by
// truncation), carried through the epilogue (GELU's slope is below 1.13,
// SiLU's below 1.1), plus 1e-6 relative for the f32 epilogue itself.
func coopTol(epi epilogue, x, w []float32, y []float64, M, K, N, sk int) []float64 {
	ax, aw := make([]float64, len(x)), make([]float64, len(w))
	for i, v := range roundF16s(x) {
		ax[i] = math.Abs(v)
	}
	for i, v := range w {
		aw[i] = math.Abs(float64(v))
	}
	mag := refops.Matmul(ax, aw, make([]float64, N), M, K, N)
	steps := float64((K+sk-1)/sk + 1)
	e := make([]float64, len(mag))
	for i, m := range mag {
		e[i] = steps * 0x1p-22 * m
	}
	rel := func(v float64) float64 { return 1e-6 * math.Max(1, math.Abs(v)) }
	switch epi {
	case epiSwiGLU:
		out := make([]float64, M*N/2)
		for m := range M {
			for i := range N / 2 {
				g, u := m*N+2*i, m*N+2*i+1
				out[m*N/2+i] = 1.1*e[g]*math.Abs(y[u]) + math.Abs(refops.SiLU(y[g]))*e[u] + e[g]*e[u] + rel(refops.SiLU(y[g])*y[u])
			}
		}
		return out
	case epiGELU, epiGELUErf:
		for i := range e {
			e[i] = 1.13*e[i] + rel(refops.GELU(y[i]))
		}
		return e
	}
	for i := range e {
		e[i] += rel(y[i]) + 1e-6 // ADD: the residual's f32 sum too
	}
	return e
}

// checkWithin fails t where got[i] and want[i] differ by more than tol[i].
func checkWithin(t testing.TB, what string, got []float32, want, tol []float64) {
	t.Helper()
	if len(got) != len(want) || len(tol) != len(want) {
		t.Fatalf("%s: %d values and %d tolerances, want %d", what, len(got), len(tol), len(want))
	}
	bad := 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol[i]) {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v (diff %.3g, tol %.3g)", what, i, got[i], want[i], d, tol[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values out of tolerance", what, bad, len(got))
	}
}

// coopKernelFor compiles a coop kernel for the test device's subgroup size.
func coopKernelFor(t *testing.T, d *testDev, name string, tl coopTiles) *Kernel {
	t.Helper()
	k, err := newCoopKernel(d.dev, name, tl)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestMatmulCoop compares matmul_coop.wgsl (lowered, or natively on a GPU
// with matrix units) with refops.Matmul on the same inputs with x rounded
// to f16 (what the kernel multiplies), then each epilogue's reference
// (STORE, GELU, ADD onto a residual, SWIGLU), for the test configurations
// (the cases of coopMatmulCase), on sizes that are multiples of none of the
// tiles (M, N, K ragged;
// K and N multiples of 4 or not: vec4 and element loads; K 200: several
// steps of BK 32 and a partial one) and one that is. Guard values after
// every input (NaN) and after out (a sentinel) catch reads and writes out of
// bounds. With the f16 operands the reference has, the only differences
// are the sums: coopTol bounds them from Σ|x·w| per output (matrix units
// accumulate in f32 but need not round each product-sum as IEEE does: an
// H200's 16x8x8 products were 1.6e-5 off at K = 200, 240 f32 ulps).
func TestMatmulCoop(t *testing.T) {
	d := coopDev(t)
	sizes := []struct{ M, K, N int }{
		{37, 48, 52},   // vec4 loads
		{37, 45, 70},   // element loads
		{21, 27, 40},   // element loads: K
		{5, 20, 12},    // one small tile
		{130, 200, 72}, // several tiles and steps
		{64, 64, 64},   // whole tiles
	}
	for ci, cfg := range coopConfigs(d) {
		tl := coopMatmulTiles(cfg, coopSGS(d, cfg))
		k := coopKernelFor(t, d, "matmul_coop.wgsl", tl)
		for si, sz := range sizes {
			for _, epi := range []epilogue{epiStore, epiGELU, epiAdd, epiSwiGLU, epiGELUErf} {
				if !coopMatmulCase(d, ci, epi, sz.K%4 == 0 && sz.N%4 == 0) {
					continue
				}
				t.Run(fmt.Sprintf("%v/M=%d,K=%d,N=%d/%v", cfg, sz.M, sz.K, sz.N, epi), func(t *testing.T) {
					checkCoopMatmul(t, d, k, tl, sz.M, sz.K, sz.N, uint64(500+10*si), epi)
				})
			}
		}
	}
}

// checkCoopMatmul runs matmul_coop.wgsl compiled as k with tiling tl on an
// (M, K) x (K, N) product with bias and epilogue epi (random operands from
// seed; ADD onto a random residual) and compares it with refops.Matmul on
// the same inputs, x rounded to f16, within coopTol; guards after out
// catch stores out of bounds, NaN guards after the inputs reads past them.
func checkCoopMatmul(t *testing.T, d *testDev, k *Kernel, tl coopTiles, M, K, N int, seed uint64, epi epilogue) {
	t.Helper()
	x := randF32(seed+1, M*K+4, 0, 1) // whole vec4s, as the kernel reads them
	w, bias := randF32(seed+2, K*N+4, 0, 0.2), randF32(seed+3, N, 0, 0.1)
	res := randF32(seed+4, M*N, 0, 1)
	wb, bb := weightBytes(w, true), weightBytes(bias, true)
	y := refops.Matmul(roundF16s(x[:M*K]), f64(w[:K*N]), f64(bias), M, K, N)
	want, init := coopEpilogueWant(epi, y, res, M, N)
	nan := float32(math.NaN())
	out := d.buffer(t, "out", withGuard(f32Bytes(init), guardOut, false))
	vec := 0.0
	if K%4 == 0 && N%4 == 0 {
		vec = 1
	}
	p, err := k.pipeline(tl.constSet().with("EPI", float64(epi)).with("VEC", vec))
	if err != nil {
		t.Fatal(err)
	}
	d.run(t, p, map[string]Buf{
		"x": {Buffer: d.buffer(t, "x", withGuard(f32Bytes(x), nan, false))}, "w": {Buffer: d.buffer(t, "w", withGuard(wb, nan, true))},
		"bias": {Buffer: d.buffer(t, "bias", withGuard(bb, nan, true))}, "out": {Buffer: out},
		"kc": {Buffer: d.buffer(t, "kc", nil)}, "vc": {Buffer: d.buffer(t, "vc", nil)},
	}, Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0},
		sharedGroups(M, N, tl.BM(), tl.BN(), 65535))
	got := d.readF32(t, out, len(init)+guard)
	for i, v := range got[len(init):] {
		if v != guardOut {
			t.Fatalf("out[%d + %d] = %v: stored out of bounds", len(init), i, v)
		}
	}
	checkWithin(t, "matmul_coop "+tl.String(), got[:len(init)], want, coopTol(epi, x[:M*K], w[:K*N], y, M, K, N, tl.cfg.K))
}

// coopMatmulCase says whether TestMatmulCoop runs configuration number ci
// with epilogue epi and vector loads or not. Lowered, each pipeline costs
// lavapipe's LLVM 10 to 30 s on first use: the first configuration runs
// every epilogue with vector loads and STORE with element loads, 16x16x16
// STORE with vector loads, 8x16x16 STORE with element loads (the GPT-2 and
// self-check tests run more of them). Natively, every configuration runs
// every case.
func coopMatmulCase(d *testDev, ci int, epi epilogue, vec bool) bool {
	switch {
	case d.dev.HasFeature(wgpu.FeatureCooperativeMatrix):
		return true
	case ci == 0:
		return vec || epi == epiStore
	}
	return epi == epiStore && vec == (ci == 1)
}

// coopEpilogueWant is the reference output of epilogue epi on y (M, N) and
// out's initial contents (the residual for ADD, zeros otherwise; (M, N/2)
// for SWIGLU).
func coopEpilogueWant(epi epilogue, y []float64, res []float32, M, N int) (want []float64, init []float32) {
	switch epi {
	case epiSwiGLU:
		want = make([]float64, M*N/2)
		for m := range M {
			for i := range N / 2 {
				want[m*N/2+i] = refops.SiLU(y[m*N+2*i]) * y[m*N+2*i+1]
			}
		}
		return want, make([]float32, M*N/2)
	case epiAdd:
		want = make([]float64, M*N)
		for i, v := range y {
			want[i] = float64(res[i]) + v
		}
		return want, res
	case epiGELU, epiGELUErf:
		want = make([]float64, M*N)
		for i, v := range y {
			want[i] = refops.GELU(v)
			if epi == epiGELUErf {
				want[i] = refops.GELUErf(v)
			}
		}
		return want, make([]float32, M*N)
	}
	return y, make([]float32, M*N)
}

// TestMatmulCoopQKV: with c_attn's epilogue (epiQKV), matmul_coop.wgsl
// stores q in out and k and v in the KV cache exactly where a Go copy of its
// own epiStore output puts them (bit for bit), and leaves k's and v's
// columns of out and the cache's other positions untouched; with the
// default tiling and with epilogue chunks of one result matrix, w's tile
// row-major and n-major (WT 1).
func TestMatmulCoopQKV(t *testing.T) {
	d := coopDev(t)
	cfg := coopConfigs(d)[0]
	tl := coopMatmulTiles(cfg, coopSGS(d, cfg))
	chunked := tl
	chunked.FM, chunked.FN, chunked.EC = 2, 2, 1
	nmajor := chunked
	nmajor.WT = 1
	for _, tl := range []coopTiles{tl, chunked, nmajor} {
		t.Run(tl.String(), func(t *testing.T) { coopQKVCase(t, d, tl) })
	}
}

// coopQKVCase is TestMatmulCoopQKV with tiling tl.
func coopQKVCase(t *testing.T, d *testDev, tl coopTiles) {
	k := coopKernelFor(t, d, "matmul_coop.wgsl", tl)
	B, T, C, H, S, pos0, K := 3, 11, 24, 3, 20, 5, 16
	M, N, hd := B*T, 3*C, C/H
	x := randF32(71, M*K, 0, 1)
	w, bias := randF32(72, K*N, 0, 0.2), randF32(73, N, 0, 0.1)
	sentinel := make([]float32, B*H*S*hd)
	for i := range sentinel {
		sentinel[i] = -7
	}
	run := func(epi epilogue) (out, kc, vc []float32) {
		p, err := k.pipeline(tl.constSet().with("EPI", float64(epi)).with("VEC", 1))
		if err != nil {
			t.Fatal(err)
		}
		ob := d.buffer(t, "out", f32Bytes(make([]float32, M*N)))
		kcb, vcb := d.buffer(t, "kc", f32Bytes(sentinel)), d.buffer(t, "vc", f32Bytes(sentinel))
		d.run(t, p, map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", weightBytes(w, true))},
			"bias": {Buffer: d.buffer(t, "bias", weightBytes(bias, true))}, "out": {Buffer: ob}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}},
			Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": float64(T), "H": float64(H), "S": float64(S), "pos0": float64(pos0)},
			sharedGroups(M, N, tl.BM(), tl.BN(), 65535))
		return d.readF32(t, ob, M*N), d.readF32(t, kcb, len(sentinel)), d.readF32(t, vcb, len(sentinel))
	}
	out0, _, _ := run(epiStore)
	out3, kc3, vc3 := run(epiQKV)
	wantK, wantV := append([]float32(nil), sentinel...), append([]float32(nil), sentinel...)
	for m := range M {
		b, tt := m/T, m%T
		for c := range C {
			dst := ((b*H+c/hd)*S+pos0+tt)*hd + c%hd
			wantK[dst], wantV[dst] = out0[m*N+C+c], out0[m*N+2*C+c]
		}
	}
	sameBits(t, "kc vs Go copy", kc3, wantK)
	sameBits(t, "vc vs Go copy", vc3, wantV)
	for m := range M {
		for n := range N {
			want := out0[m*N+n]
			if n >= C {
				want = 0 // k and v are not stored in out
			}
			if out3[m*N+n] != want {
				t.Fatalf("out[%d][%d] = %v, want %v", m, n, out3[m*N+n], want)
			}
		}
	}
}

// TestLossCoop runs lmhead_loss_coop.wgsl, lowered, then nll_combine.wgsl,
// and compares nll with refops.NLL on h rounded to f16 (what the kernel
// reads, as to_f16.wgsl leaves it) and f16 wte, for every test configuration, with tiles of 64
// and 128 ids (slices of 2 and 1 tiles; lowered, 64 for 8x8x8 and 8x16x16,
// 128 for 16x16x16), on sizes where P, C and V are
// multiples of none of the tiles, wte bound whole and in two ranges (the
// second at a whole slice), targets at the edges of tiles and ranges.
// Tolerance 1e-5 relative to max(1, |want|), as TestLossShared's (f32 dots
// of at most 40 terms, exp and log of sums over up to 1000 ids). A second
// run gives the same bits. Also the autotuner's LM-head tilings
// (coopHeadShapes: natively every one, lowered three).
func TestLossCoop(t *testing.T) {
	d := coopDev(t)
	red := newLossReducer(t, d)
	type tiling struct {
		tl coopTiles
		pl *Pipeline
	}
	var tilings []tiling // compiled once: lowered, each costs LLVM 10 to 30 s
	for ci, cfg := range coopConfigs(d) {
		for vi, vn := range [][2]int{{64, 2}, {128, 1}} {
			tl := coopHeadTiles(cfg, coopSGS(d, cfg), vn[0], vn[1])
			if tl.valid() != nil || (!d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) && vi != ci%2) {
				continue // lowered, one tiling per configuration
			}
			pl, err := coopKernelFor(t, d, "lmhead_loss_coop.wgsl", tl).pipeline(tl.constSet())
			if err != nil {
				t.Fatal(err)
			}
			tilings = append(tilings, tiling{tl, pl})
		}
	}
	// The autotuner's LM-head tilings: more positions per workgroup, fewer
	// ids per tile, slices of 128 ids as above (natively for the
	// configuration the kernels use; lowered, three, folding their logits
	// in chunks: one with two tile buffers, one with two invocations a row).
	heads, hcfgs := coopHeadShapes, coopConfigs(d)
	if cfg, ok := pickMatrixConfig(hcfgs); ok && d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) {
		hcfgs = []MatrixConfig{cfg} // the configuration the kernels use
	} else {
		// 1 stage; 2 tile buffers; two invocations a row in the fold (NQ 2, as
		// the 8- and 16-subgroup tilings have on GPUs)
		heads, hcfgs = []coopHeadShape{{64, 64, 2, 2, 16, 1}, {64, 64, 2, 2, 16, 3}, {16, 64, 2, 2, 16, 2}}, hcfgs[:1]
	}
	for _, cfg := range hcfgs {
		for _, hs := range heads {
			tl, ok := hs.tiles(cfg, coopSGS(d, cfg), 128, 1, int(d.dev.Limits().MaxComputeWorkgroupStorageSize))
			if !ok || tl.fits(d.dev) != nil {
				continue
			}
			if !d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) {
				tl.EC = 1 // lowered, the fold in chunks of one result matrix (the defaults fold whole tiles)
			}
			pl, err := coopKernelFor(t, d, "lmhead_loss_coop.wgsl", tl).pipeline(tl.constSet())
			if err != nil {
				t.Fatal(err)
			}
			tilings = append(tilings, tiling{tl, pl})
		}
	}
	cases := []lossCase{{37, 24, 1000, 0}, {37, 24, 1000, 512}, {70, 40, 333, 128}, {1, 36, 270, 0}}
	for ci, lc := range cases {
		h := randF32(uint64(21+ci), lc.P*lc.C, 0, 1)
		r := rand.New(rand.NewPCG(uint64(31+ci), 0x5eed))
		targets := make([]int32, lc.P)
		for i := range targets {
			targets[i] = int32(r.IntN(lc.V))
		}
		edges := []int32{0, int32(lc.V - 1)}
		for _, e := range []int32{63, 64, 127, 128, 255, 256, 511, 512} {
			if int(e) < lc.V {
				edges = append(edges, e)
			}
		}
		copy(targets, edges)
		tb := make([]byte, 4*lc.P)
		for i, v := range targets {
			binary.LittleEndian.PutUint32(tb[4*i:], uint32(v))
		}
		wte := randF32(uint64(41+ci), lc.V*lc.C, 0, 0.5)
		wb := weightBytes(wte, true)
		want := refops.NLL(roundF16s(h), f64(wte), targets, lc.P, lc.C, lc.V)
		hb := weightBytes(h, true) // as to_f16.wgsl leaves it (TestToF16)
		for _, tg := range tilings {
			tl, lp := tg.tl, tg.pl
			if lc.split%(tl.vt*tl.nt) != 0 {
				continue // a range starts at a whole slice
			}
			t.Run(fmt.Sprintf("P=%d/C=%d/V=%d/split=%d/%v/BM=%d,VT=%d,NT=%d,EC=%d,ST=%d", lc.P, lc.C, lc.V, lc.split, tl.cfg, tl.BM(), tl.vt, tl.nt, tl.EC, tl.ST), func(t *testing.T) {
				groups := func(n int) [3]uint32 { return lossSharedGroups(lc.P, n, tl.BM(), tl.vt, tl.nt) }
				nll := lossOut(t, d, lp, red, lc, tl.vt*tl.nt, hb, wb, tb, groups)
				checkClose(t, "nll", nll, want, 1e-5)
				if again := lossOut(t, d, lp, red, lc, tl.vt*tl.nt, hb, wb, tb, groups); !bitsEqual(nll, again) {
					t.Errorf("nll: a second run differs from the first")
				}
			})
		}
	}
}

// TestCoopLoweredLoops: the estimate of the lowered kernels' loop
// iterations puts the cases lavapipe got wrong past coopLoopBudget (the LM
// head at 8x8x8, C 72, 8 tiles of 64 ids; the matmul at 16x16x16 over
// K = 448) and those it got right within it (3 tiles; K = 384), and the
// self-check's within it.
func TestCoopLoweredLoops(t *testing.T) {
	cfg := MatrixConfig{M: 8, N: 8, K: 8}
	if n := coopHeadTiles(cfg, 8, 64, 8).loweredLoops(72, 8); n <= coopLoopBudget {
		t.Errorf("8 tiles at C 72: %d iterations estimated, want more than %d", n, coopLoopBudget)
	}
	if n := coopHeadTiles(cfg, 8, 64, 8).loweredLoops(72, 3); n > coopLoopBudget {
		t.Errorf("3 tiles at C 72: %d iterations estimated, want at most %d", n, coopLoopBudget)
	}
	mm := coopMatmulTiles(MatrixConfig{M: 16, N: 16, K: 16}, 8)
	if n := mm.loweredLoops(448, 0); n <= coopLoopBudget {
		t.Errorf("matmul over K 448: %d iterations estimated, want more than %d", n, coopLoopBudget)
	}
	if n := mm.loweredLoops(384, 0); n > coopLoopBudget {
		t.Errorf("matmul over K 384: %d iterations estimated, want at most %d", n, coopLoopBudget)
	}
	for _, c := range coopTestConfigs {
		if n := coopMatmulTiles(c, 8).loweredLoops(checkK, 0); n > coopLoopBudget {
			t.Errorf("%v: the self-check's matmul loops %d times", c, n)
		}
		for _, vt := range []int{64, 128} {
			if n := coopHeadTiles(c, 8, vt, 8).loweredLoops(checkC, ceilDiv(checkV, vt)); n > coopLoopBudget {
				t.Errorf("%v: the self-check's LM head with %d ids a tile loops %d times", c, vt, n)
			}
		}
	}
}

// spirvValidate runs the spirv-val at val (Vulkan 1.1 rules) on the module
// words, failing t with its output where it refuses them.
func spirvValidate(t *testing.T, val, what string, words []uint32) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "m.spv")
	b := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(val, "--target-env", "vulkan1.1", file).CombinedOutput(); err != nil {
		t.Errorf("%s: spirv-val: %v\n%s", what, err, out)
	}
}

// TestCoopKernelsNative compiles both coop kernels for each test
// configuration and a 16x16x16 one of subgroups of 64, with the default
// tilings and the autotuner's (coopShapes, coopHeadShapes), as
// SPV_KHR_cooperative_matrix (what a GPU with matrix units gets) and
// validates the modules, whole and specialized with the tiling's constants
// (what a pipeline gets), with Debian 13's spirv-val
// ($WGPU_TEST_SPIRV_VAL_NEW; nothing here runs them); likewise
// attention_coop.wgsl at GPT-2's and the Llama family's head sizes, with
// the default tiling and the autotuner's (attnCoopShapes). In each
// specialized module every index into an array of matrices is a constant:
// the emitter unrolled the loops around them (wgsl's unroll.go), so a
// driver keeps the matrices in registers without unrolling anything itself.
func TestCoopKernelsNative(t *testing.T) {
	val := prereq.SpirvValNew(t)
	spirvVal := func(what string, words []uint32) {
		t.Helper()
		spirvValidate(t, val, what, words)
	}
	validate := func(name string, tl fmt.Stringer, x wgsl.Expanded, consts map[string]float64) {
		t.Helper()
		m, err := wgsl.Compile(name, x.Text, wgsl.Options{CooperativeMatrix: true})
		if err != nil {
			t.Fatalf("%s %v: %v", name, tl, x.MapErrors(err))
		}
		if m.SPIRV == nil {
			t.Fatalf("%s %v: no SPIR-V: %s", name, tl, m.NoSPIRV)
		}
		spirvVal(fmt.Sprintf("%s %v", name, tl), m.SPIRV)
		sp, err := m.Specialize("main", consts)
		if err != nil {
			t.Fatalf("%s %v: %v", name, tl, err)
		}
		if n := matrixArrayDynamic(sp.SPIRV); n != 0 {
			t.Errorf("%s %v specialized: %d accesses to arrays of matrices at run-time indices", name, tl, n)
		}
		spirvVal(fmt.Sprintf("%s %v specialized", name, tl), sp.SPIRV)
	}
	nvidia := wgpu.Limits{MaxComputeWorkgroupStorageSize: 48 << 10, MaxComputeInvocationsPerWorkgroup: 1024}
	for _, cfg := range append(coopTestConfigs, MatrixConfig{M: 16, N: 16, K: 16, SubgroupSize: 64}) {
		sgs := max(cfg.SubgroupSize, 32)
		tilings := []coopTiles{coopMatmulTiles(cfg, sgs), coopHeadTiles(cfg, sgs, 128, 8)}
		for _, s := range coopShapes { // the autotuner's, within NVIDIA's 48 KiB
			if tl, ok := s.tiles(cfg, sgs, 48<<10); ok && tl.valid() == nil {
				tilings = append(tilings, tl)
			}
		}
		for _, s := range coopHeadShapes {
			if tl, ok := s.tiles(cfg, sgs, 128, 8, 48<<10); ok {
				tilings = append(tilings, tl)
			}
		}
		for _, tl := range tilings {
			name, consts := "lmhead_loss_coop.wgsl", tl.constSet()
			if !tl.head {
				name, consts = "matmul_coop.wgsl", consts.with("VEC", 1).with("EPI", float64(epiGELU))
			}
			x, err := coopSource(name, tl)
			if err != nil {
				t.Fatal(err)
			}
			validate(name, tl, x, consts.Map())
		}
		for _, hd := range []int{64, 128, 80} {
			def, err := attnCoopTilesFor(cfg, sgs, hd, nvidia)
			if err != nil {
				t.Fatalf("%v hd %d: %v", cfg, hd, err)
			}
			attns := []attnCoopTiles{def}
			for _, s := range attnCoopShapes { // the autotuner's, within NVIDIA's 48 KiB
				if tl, ok := s.tiles(def); ok && tl.fits(nvidia) == nil && !slices.Contains(attns, tl) {
					attns = append(attns, tl)
				}
			}
			if hd == 64 && len(attns) != len(attnCoopShapes)+1 {
				t.Errorf("%v hd 64: %d of the autotuner's %d attention tilings fit 48 KiB", cfg, len(attns)-1, len(attnCoopShapes))
			}
			for _, tl := range attns {
				x, err := attnCoopSource(tl)
				if err != nil {
					t.Fatal(err)
				}
				validate("attention_coop.wgsl", tl, x, nil)
			}
		}
	}
}

// matrixArrayDynamic counts the accesses to function-scope arrays of
// cooperative matrices in module words whose index is not a constant.
func matrixArrayDynamic(words []uint32) int {
	const (
		opConstant    = 43
		opTypeArray   = 28
		opTypePointer = 32
		opVariable    = 59
		opAccessChain = 65
		opTypeCoop    = 4456
		storageFunc   = 7
	)
	consts, coop, arrays, ptrs, vars := map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}
	n := 0
	for i := 5; i < len(words); {
		op, size := words[i]&0xffff, int(words[i]>>16)
		if size == 0 || i+size > len(words) {
			break
		}
		in := words[i+1 : i+size]
		switch op {
		case opConstant:
			consts[in[1]] = true
		case opTypeCoop:
			coop[in[0]] = true
		case opTypeArray:
			arrays[in[0]] = coop[in[1]]
		case opTypePointer:
			ptrs[in[0]] = in[1] == storageFunc && arrays[in[2]]
		case opVariable:
			vars[in[1]] = ptrs[in[0]]
		case opAccessChain:
			if vars[in[2]] {
				for _, x := range in[3:] {
					if !consts[x] {
						n++
						break
					}
				}
			}
		}
		i += size
	}
	return n
}

package shaders

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// attnCoopCases are TestAttentionCoop's shapes (attnCase: B sequences of L
// rows, C query channels in H heads, KV key/value heads, a cache of S
// positions), each run in chunks of chunk rows per sequence (pos0 0,
// chunk, 2*chunk, ...: later chunks over a longer cache).
var attnCoopCases = []struct {
	c     attnCase
	chunk int
}{
	{attnCase{B: 2, L: 13, C: 64, H: 2, S: 16}, 5},         // hd 32, GPT-2's layout; 3 chunks, the last of 3 rows
	{attnCase{B: 2, L: 11, C: 256, H: 4, KV: 2, S: 14}, 4}, // hd 64, grouped heads (2 per key/value head)
	{attnCase{B: 1, L: 9, C: 256, H: 2, KV: 1, S: 9}, 9},   // hd 128, the kernels' maximum
	{attnCase{B: 2, L: 10, C: 48, H: 4, KV: 2, S: 12}, 6},  // hd 12: padded with zero channels to whole matrices
	{attnCase{B: 2, L: 5, C: 64, H: 2, S: 7}, 1},           // hd 32, one row at a time (decoding)
	{attnCase{B: 2, L: 13, C: 32, H: 2, S: 16}, 5},         // hd 16
}

// attnCoopTestPF is the prefetch of attnCoopTestTiles' tiling in each of
// attnCoopCases.
var attnCoopTestPF = []int{0, 1, 0, 2, 1, 2}

// attnCoopTestTiles is the tiling TestAttentionCoop runs for cfg and its
// case number ci: two subgroups (one in cases 2 and 3: a workgroup of one
// subgroup, as two of the autotuner's tilings) of one left matrix each (two
// in case 0: each right matrix multiplies both, as with 32 rows a subgroup)
// and tiles of one matrix width, so that the small cases cross several
// tiles and blocks (the default tiling has 64 keys per tile), with the next
// tile's loads in flight in cases 1 and 4 (PF 1: rounded at the load) and 3
// and 5 (PF 2: held as loaded; small heads, since lavapipe's LLVM takes
// longest over its registers at the biggest); natively, the default tiling
// too.
func attnCoopTestTiles(t *testing.T, d *testDev, cfg MatrixConfig, hd, ci int) []attnCoopTiles {
	t.Helper()
	sgs := coopSGS(d, cfg)
	sg := 2
	if ci == 2 || ci == 3 {
		sg = 1
	}
	fm := 1
	if ci == 0 {
		fm = 2
	}
	small := attnCoopTiles{cfg: cfg, FM: fm, HD: hd, BKV: max(cfg.K, cfg.N), SG: sg, SGS: sgs, PF: attnCoopTestPF[ci]}
	out := []attnCoopTiles{small}
	if d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) {
		def, err := attnCoopTilesFor(cfg, sgs, hd, d.dev.Limits())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, def)
	}
	return out
}

// TestAttentionCoop runs attention_coop.wgsl (lowered, or natively on a GPU
// with matrix units) for every test configuration on attnCoopCases, chunk by
// chunk over a cache filled on the host, against the float64 attention of
// the same f16-rounded q, k and v (attnCoopTol's bound, simt false: the f32
// sums, exps and the f16 rounding of the probabilities) and against
// attention_shared.wgsl on the unrounded inputs (simt true: the rounding of
// q, k and v besides). A sentinel after out catches stores out of bounds.
// Natively it runs every configuration and case. Lowered, where each
// pipeline costs lavapipe's LLVM seconds (16x16 matrices and head size 128
// most), it runs 8x8x8 on the cases up to head size 64, and
// TestAttentionCoopConfigs and TestAttentionCoopHeads the rest, each test
// within about 30 s (with a cold pipeline cache). The small tiling has a subgroup's rows on as many
// invocations (lavapipe's 8); with LP_NATIVE_VECTOR_WIDTH=512 lavapipe's
// subgroups have 16, and the kernel takes each row with two (R = 2, as on
// NVIDIA GPUs: 16 rows of 32). That runs too, though slower:
// LP_NATIVE_VECTOR_WIDTH=512 go test ./shaders -run AttentionCoop.
func TestAttentionCoop(t *testing.T) {
	attnCoopTest(t, true, func(fi, ci int) bool { return fi == 0 && ci != 2 && ci != 5 })
}

// TestAttentionCoopConfigs is TestAttentionCoop's lowered run of 16x16x16
// at head size 16: a subgroup's 16 rows on lavapipe's 8 invocations, two
// rows each.
func TestAttentionCoopConfigs(t *testing.T) {
	attnCoopTest(t, false, func(fi, ci int) bool { return fi == 1 && ci == 5 })
}

// TestAttentionCoopHeads is TestAttentionCoop's lowered run of head size
// 128, the kernels' largest, with 8x8x8, and of 8x16x16 at head size 12
// (padded to 16).
func TestAttentionCoopHeads(t *testing.T) {
	attnCoopTest(t, false, func(fi, ci int) bool { return fi == 0 && ci == 2 || fi == 2 && ci == 3 })
}

// attnCoopTest runs TestAttentionCoop's cases: every one natively where
// native (else nothing), those where lowered(configuration number, case
// number) on a device without matrix units.
func attnCoopTest(t *testing.T, native bool, lowered func(fi, ci int) bool) {
	d := coopDev(t)
	hw := d.dev.HasFeature(wgpu.FeatureCooperativeMatrix)
	if hw && !native {
		t.Skip("TestAttentionCoop runs every case natively")
	}
	for fi, cfg := range coopConfigs(d) {
		for ci, tc := range attnCoopCases {
			c := tc.c
			hd := c.C / c.H
			if !hw && !lowered(fi, ci) {
				continue
			}
			for _, tl := range attnCoopTestTiles(t, d, cfg, hd, ci) {
				t.Run(fmt.Sprintf("%v/hd=%d,H=%d,KV=%d,B=%d,chunk=%d/FM%d,BKV%d,SG%dx%d,PF%d", cfg, hd, c.H, c.kv(), c.B, tc.chunk, tl.FM, tl.BKV, tl.SG, tl.SGS, tl.PF), func(t *testing.T) {
					if n := tl.loweredLoops(c.L); !hw && n > coopLoopBudget {
						t.Fatalf("lowered, the kernel loops some %d times an invocation: past lavapipe's limit", n)
					}
					attnCoopCase(t, d, tl, c, tc.chunk)
				})
			}
		}
	}
}

// attnCoopCase runs one case of TestAttentionCoop with tiling tl.
func attnCoopCase(t *testing.T, d *testDev, tl attnCoopTiles, c attnCase, chunk int) {
	k, err := newAttnCoopKernel(d.dev, tl)
	if err != nil {
		t.Fatal(err)
	}
	coop, err := k.pipeline(constSet{})
	if err != nil {
		t.Fatal(err)
	}
	hd, KV, ld := c.C/c.H, c.kv(), c.ld()
	st := attnTilesFor(d.dev, hd)
	shared, err := mustKernel(t, d, st.kernel()).pipeline(st.constSet(hd))
	if err != nil {
		t.Fatal(err)
	}
	qkv := randF32(uint64(900+hd+c.B), c.B*c.L*ld, 0, 1)
	kh, vh := hostCache(c, qkv)
	kcb, vcb := d.buffer(t, "kc", f32Bytes(kh)), d.buffer(t, "vc", f32Bytes(vh))
	rk, rv := roundF16s(kh), roundF16s(vh)
	for pos0 := 0; pos0 < c.L; pos0 += chunk {
		n := min(chunk, c.L-pos0)
		q := chunkRows(qkv, c.B, c.L, ld, pos0, n)
		qb := d.buffer(t, "qkv", f32Bytes(q))
		params := Params{"B": float64(c.B), "T": float64(n), "C": float64(c.C), "H": float64(c.H), "KV": float64(KV),
			"S": float64(c.S), "pos0": float64(pos0), "ld": float64(ld), "lscale": 1}
		var outs [2][]float32
		for i, run := range []struct {
			p      *Pipeline
			groups int
		}{{coop, tl.groups(c.B, c.H, n)}, {shared, st.groups(c.B, c.H, n)}} {
			ob := d.buffer(t, "out", withGuard(make([]byte, 4*c.B*n*c.C), guardOut, false))
			d.run(t, run.p, map[string]Buf{"qkv": {Buffer: qb}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}, "out": {Buffer: ob}}, params, grid(run.groups))
			got := d.readF32(t, ob, c.B*n*c.C+guard)
			for j, v := range got[c.B*n*c.C:] {
				if v != guardOut {
					t.Fatalf("pos0 %d: out[%d + %d] = %v: stored out of bounds", pos0, c.B*n*c.C, j, v)
				}
			}
			outs[i] = got[:c.B*n*c.C]
		}
		sh := attnShape{B: c.B, T: n, H: c.H, KV: KV, HD: hd, S: c.S, pos0: pos0, ld: ld}
		exact := attnExactOf(sh, roundF16s(q), rk, rv)
		simt := attnExactOf(sh, f64(q), f64(kh), f64(vh))
		tolE, tolS := make([]float64, len(outs[0])), make([]float64, len(outs[0]))
		for row := range c.B * n {
			keys := pos0 + row%n + 1
			for h := range c.H {
				for i := range hd {
					idx := row*c.C + h*hd + i
					tolE[idx] = attnCoopTol(exact, idx, row*c.H+h, keys, hd, tl.cfg.K, tl.BKV, false)
					tolS[idx] = attnCoopTol(simt, idx, row*c.H+h, keys, hd, tl.cfg.K, tl.BKV, true)
				}
			}
		}
		checkWithin(t, fmt.Sprintf("pos0 %d: attention_coop against float64", pos0), outs[0], exact.Out, tolE)
		want := make([]float64, len(outs[1]))
		for i, v := range outs[1] {
			want[i] = float64(v)
		}
		checkWithin(t, fmt.Sprintf("pos0 %d: attention_coop against attention_shared", pos0), outs[0], want, tolS)
		if testing.Verbose() {
			var worstE, worstS float64
			for i := range outs[0] {
				worstE = math.Max(worstE, math.Abs(float64(outs[0][i])-exact.Out[i])/tolE[i])
				worstS = math.Max(worstS, math.Abs(float64(outs[0][i])-want[i])/tolS[i])
			}
			t.Logf("pos0 %d: worst difference %.3f of its bound against float64, %.3f against SIMT", pos0, worstE, worstS)
		}
	}
}

// mustKernel compiles the kernel file name for d with f16 weights.
func mustKernel(t *testing.T, d *testDev, name string) *Kernel {
	t.Helper()
	k, err := NewKernel(d.dev, name, true)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestAttentionCoopTuning: with coop attention (forced, lowered on a CPU
// driver; only the attention kernel compiled, the model's other coop kernels
// are not needed here), TuneRedo times the default tiling, the test's
// tilings that fit the device (a small one; one past its workgroup memory
// is left out) and attention_shared.wgsl at a batch's shape and keeps the
// choice in the tuning file, where a model in TuneAuto reads it back
// without timing. Then, the file's choice rewritten to each in turn:
// attention_shared.wgsl makes attnCoopFor give none; the default tiling
// the model's own kernel; the small tiling that tiling (self-checked
// first); a tiling that does not fit, or the small one when the self-check
// sees its results corrupted (test hook), the default, with the reason in
// the choice's Err (so that the next process tunes again). (TestGPT2Coop
// checks that a batch then runs it.)
func TestAttentionCoopTuning(t *testing.T) {
	d := coopDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	file := filepath.Join(t.TempDir(), "tuning.json")
	cfg := coopConfigs(d)[0]
	small := attnCoopShape{Rows: cfg.M, SG: 2, BKV: max(cfg.K, cfg.N)}
	huge := attnCoopShape{Rows: cfg.M, SG: 2, BKV: 64 * max(cfg.K, cfg.N)} // past any CPU driver's workgroup memory
	withAttn := func() *GPT2 {
		g := newCoopGPT2(t, d, m, cfg, "")
		g.tuneFile = file
		g.attnShapes = []attnCoopShape{small, huge}
		a, why := g.newAttnCoop(cfg, coopSGS(d, cfg))
		if a == nil {
			t.Fatal(why)
		}
		g.coop = &coopKernels{cfg: cfg, attn: a}
		return g
	}
	const B, T = 3, 20
	g := withAttn()
	def := g.coop.attn.tiles
	st, ok := small.tiles(def)
	if !ok || st == def {
		t.Fatalf("small tiling %v (default %v)", st, def)
	}
	if cands := g.attnCoopCandidates(def); !slices.Equal(cands, []attnCoopTiles{def, st}) {
		t.Fatalf("candidates %v, want the default and the small tiling", cands)
	}
	g.SetTuning(TuneRedo)
	g.mu.Lock()
	g.ensureAttnTuned(B, T)
	g.mu.Unlock()
	tuned := g.AttentionTuning()
	if len(tuned) != 1 || !validAttnChoice(tuned[0]) || tuned[0].Err != "" || len(tuned[0].Candidates) != 3 {
		t.Fatalf("attention tuning %+v, want one choice of three timed candidates", tuned)
	}
	c := tuned[0]
	t.Logf("%s: %v (%d ns): %+v", c.Shape, c.Tiles, c.Nanos, c.Candidates)
	if kept, ok := loadTuning(d.dev, file)[c.Shape]; !ok || !maps.Equal(kept.Tiles, c.Tiles) || !kept.Cached {
		t.Fatalf("tuning file: %+v, want %v kept", kept, c.Tiles)
	}

	g2 := withAttn()
	g2.autoTune = true
	for _, tc := range []struct {
		name    string
		tiles   map[string]float64
		corrupt bool
		want    *attnCoopTiles // nil: attention_shared.wgsl
		err     string
	}{
		{"attention_shared", map[string]float64{"coop": 0}, false, nil, ""},
		{"default", def.attnChoice(), false, &def, ""},
		{"small", st.attnChoice(), false, &st, ""},
		{"beyond the device", attnCoopTiles{cfg: cfg, FM: st.FM, HD: st.HD, BKV: 64 * st.BKV, SG: 2, SGS: st.SGS}.attnChoice(), false, &def, "workgroup memory"},
		{"small, corrupted", st.attnChoice(), true, &def, "self-check"},
	} {
		// The file's choice, rewritten, with no other timed candidates.
		f := loadTuning(d.dev, file)
		kept := f[c.Shape]
		kept.Tiles, kept.Candidates = tc.tiles, nil
		f[c.Shape] = kept
		if err := saveTuning(d.dev, file, f); err != nil {
			t.Fatal(err)
		}
		g2.coopCorrupt = nil
		if tc.corrupt {
			g2.coopCorrupt = func(kind string, v []float32) { v[0] += 1 }
		}
		g2.mu.Lock()
		g2.attnTuned, g2.attnPicks, g2.coopAttn = nil, nil, nil
		g2.ensureAttnTuned(B, T)
		a := g2.attnCoopFor(B, T)
		g2.mu.Unlock()
		switch {
		case tc.want == nil && a != nil, tc.want != nil && (a == nil || a.tiles != *tc.want):
			t.Errorf("%s: attnCoopFor gives %v, want %v", tc.name, a, tc.want)
		case tc.want != nil && *tc.want == def && a != g2.coop.attn:
			t.Errorf("%s: the default tiling compiled again", tc.name)
		}
		got := g2.AttentionTuning()
		if len(got) != 1 || !got[0].Cached || !strings.Contains(got[0].Err, tc.err) || (tc.err == "") != (got[0].Err == "") {
			t.Errorf("%s: tuning %+v, want it read back, err %q", tc.name, got, tc.err)
		}
		if tc.err != "" && !maps.Equal(got[0].Tiles, def.attnChoice()) {
			t.Errorf("%s: tuning's tiles %v, want the default's that run", tc.name, got[0].Tiles)
		}
	}
}

// TestValidAttnChoice: the attention choices a tuning file may hold.
func TestValidAttnChoice(t *testing.T) {
	tl := attnCoopTiles{FM: 2, BKV: 64, SG: 4, PF: 1}
	for _, c := range []struct {
		shape string
		tiles map[string]float64
		ok    bool
	}{
		{"attn x", map[string]float64{"coop": 0}, true},
		{"attn x", tl.attnChoice(), true},
		{"coop x", tl.attnChoice(), false},
		{"attn x", map[string]float64{"coop": 1}, false}, // no tiling (an older build's)
		{"attn x", map[string]float64{}, false},
		{"attn x", map[string]float64{"coop": 0, "FM": 1}, false},
		{"attn x", map[string]float64{"coop": 2}, false},
		{"attn x", map[string]float64{"coop": 1, "FM": 2, "BKV": 64, "SG": 4, "PF": 2}, true},
		{"attn x", map[string]float64{"coop": 1, "FM": 2, "BKV": 64, "SG": 4, "PF": 3}, false},
		{"attn x", map[string]float64{"coop": 1, "FM": 0, "BKV": 64, "SG": 4, "PF": 0}, false},
		{"attn x", map[string]float64{"coop": 1, "FM": 2, "BKV": 64.5, "SG": 4, "PF": 0}, false},
		{"attn x", map[string]float64{"coop": 1, "FM": 2, "BKV": 1 << 20, "SG": 4, "PF": 0}, false},
		{"attn x", map[string]float64{"coop": 1, "FM": 2, "BKV": 64, "SG": 4, "XX": 0}, false},
	} {
		if got := validAttnChoice(TuneChoice{Shape: c.shape, Tiles: c.tiles}); got != c.ok {
			t.Errorf("%s %v: valid %v, want %v", c.shape, c.tiles, got, c.ok)
		}
	}
}

// TestAttnCoopSource: attnCoopSource rewrites exactly the ten constant
// lines of attention_coop.wgsl, keeping every other line where it was (QW
// 1 here: 48 rows of head size 80 on 16 invocations keep Q in workgroup
// memory).
func TestAttnCoopSource(t *testing.T) {
	tl := attnCoopTiles{cfg: MatrixConfig{M: 16, N: 32, K: 32}, FM: 3, HD: 80, BKV: 32, SG: 1, SGS: 16, PF: 1}
	x, err := attnCoopSource(tl)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := Source("attention_coop.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	got, was := strings.Split(x.Text, "\n"), strings.Split(orig, "\n")
	if len(got) != len(was) {
		t.Fatalf("%d lines, the kernel has %d", len(got), len(was))
	}
	changed := 0
	for i := range got {
		if got[i] != was[i] {
			changed++
		}
	}
	for _, want := range []string{"const SM: u32 = 16u;", "const SN: u32 = 32u;", "const SK: u32 = 32u;", "const FM: u32 = 3u;",
		"const HD: u32 = 80u;", "const BKV: u32 = 32u;", "const SG: u32 = 1u;", "const SGS: u32 = 16u;", "const PF: u32 = 1u;", "const QW: u32 = 1u;"} {
		if !strings.Contains(x.Text, "\n"+want+" ") {
			t.Errorf("no line %q", want)
		}
	}
	if changed != 10 {
		t.Errorf("%d lines changed, want 10", changed)
	}
}

// TestAttnCoopTilesFor: the default tiling at GPT-2's and the Llama
// family's head sizes on an NVIDIA GPU (16x16x16, subgroups of 32, 48 KiB
// of workgroup memory; Q in workgroup memory at head size 128, where an
// invocation's share of it passes qwHalves) and on lavapipe's limits
// (32 KiB, subgroups of 8) for the test configurations; a head size past
// 128 has none.
func TestAttnCoopTilesFor(t *testing.T) {
	nvidia := wgpu.Limits{MaxComputeWorkgroupStorageSize: 48 << 10, MaxComputeInvocationsPerWorkgroup: 1024}
	for _, c := range []struct {
		hd, bq, bkv, bytes, qw int
	}{{64, 64, 64, 45056, 0}, {128, 32, 32, 45568, 1}, {80, 64, 32, 37888, 0}} {
		tl, err := attnCoopTilesFor(MatrixConfig{M: 16, N: 16, K: 16}, 32, c.hd, nvidia)
		if err != nil {
			t.Fatal(err)
		}
		if tl.BQ() != c.bq || tl.BKV != c.bkv || tl.sharedBytes() != c.bytes || tl.lanes() != 2 || tl.qw() != c.qw {
			t.Errorf("hd %d: %v, %d bytes, %d lanes a row, QW %d; want BQ %d, BKV %d, %d bytes, 2 lanes, QW %d", c.hd, tl, tl.sharedBytes(), tl.lanes(), tl.qw(), c.bq, c.bkv, c.bytes, c.qw)
		}
	}
	lavapipe := wgpu.Limits{MaxComputeWorkgroupStorageSize: 32 << 10, MaxComputeInvocationsPerWorkgroup: 1024}
	for _, cfg := range coopTestConfigs {
		for _, hd := range []int{8, 12, 64, 128} {
			tl, err := attnCoopTilesFor(cfg, 8, hd, lavapipe)
			if err != nil {
				t.Errorf("%v hd %d: %v", cfg, hd, err)
			} else if tl.fits(lavapipe) != nil || tl.hp()%max(cfg.K, cfg.N) != 0 || tl.hp() < hd {
				t.Errorf("%v hd %d: %v does not fit or pads to %d", cfg, hd, tl, tl.hp())
			}
		}
	}
	if _, err := attnCoopTilesFor(MatrixConfig{M: 16, N: 16, K: 16}, 32, 256, nvidia); err == nil {
		t.Error("head size 256: a tiling, want an error")
	}
}

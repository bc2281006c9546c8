package shaders

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// coopTestTilings are the tilings TestMatmulCoopTilings runs on d: natively
// (a device with matrix units), every tiling the autotuner would time for
// the configuration the kernels use there (pickMatrixConfig); lowered, a set covering each code path at
// sizes lavapipe's loop limit allows: several rows of result matrices per
// subgroup, epilogue chunks of one result matrix and of several, 4 and 8
// subgroups, BK 16, 32 and 64, at 8x8x8 and 16x16x16, and w's tile n-major
// (WT 1) with 1 stage and with 2 tile buffers.
func coopTestTilings(d *testDev) []coopTiles {
	if d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) {
		var out []coopTiles
		if cfg, ok := pickMatrixConfig(coopConfigs(d)); ok {
			sgs := coopSGS(d, cfg)
			out = append(out, coopMatmulTiles(cfg, sgs))
			for _, s := range coopShapes {
				if t, ok := s.tiles(cfg, sgs, int(d.dev.Limits().MaxComputeWorkgroupStorageSize)); ok && t.fits(d.dev) == nil {
					out = append(out, t)
				}
			}
		}
		return out
	}
	// Lowered, a pipeline costs lavapipe's LLVM seconds per result matrix
	// of 8 x 8 a subgroup holds (some 80 s for 2 x 4 of 16 x 16): few and
	// small ones; TestMatmulCoop runs the default at 16x16x16, and the
	// chunked epilogue's code does not depend on the configuration.
	c8 := MatrixConfig{M: 8, N: 8, K: 8}
	sgs := int(d.dev.Limits().SubgroupSize)
	return []coopTiles{
		{cfg: c8, FM: 2, FN: 2, SGM: 2, SGN: 2, SGS: sgs, BK: 16, EC: 1, ST: 1, maxL: coopMaxLoads},        // 2 rows of 2 chunks of one, 1 stage
		{cfg: c8, FM: 2, FN: 2, SGM: 2, SGN: 2, SGS: sgs, BK: 16, EC: 1, ST: 1, WT: 1, maxL: coopMaxLoads}, // the same, w's tile n-major
		{cfg: c8, FM: 2, FN: 2, SGM: 2, SGN: 2, SGS: sgs, BK: 16, EC: 2, ST: 3, WT: 1, maxL: coopMaxLoads}, // n-major in 2 tile buffers
		{cfg: c8, FM: 2, FN: 2, SGM: 2, SGN: 4, SGS: sgs, BK: 32, EC: 2, ST: 2, maxL: coopMaxLoads},        // 8 subgroups, whole rows
		{cfg: c8, FM: 1, FN: 2, SGM: 4, SGN: 2, SGS: sgs, BK: 64, EC: 2, ST: 1, maxL: coopMaxLoads},        // BK 64, 1 stage
		{cfg: c8, FM: 2, FN: 2, SGM: 2, SGN: 2, SGS: sgs, BK: 16, EC: 2, ST: 3, maxL: coopMaxLoads},        // 2 tile buffers: 3 to 5 steps
	}
}

// TestMatmulCoopTilings is TestMatmulCoop for the autotuner's tilings (see
// coopTestTilings), against the float64 reference within coopTol: M, N and
// K ragged, vec4 and element loads, several workgroup tiles along M and N;
// natively every tiling with every epilogue; lowered (see coopTestTilings)
// the first with STORE, GELU and SWIGLU (whose column pairs the chunks must
// keep together) and element loads, its twin with w's tile n-major (WT 1)
// with every epilogue, the others with STORE and vec4 loads.
func TestMatmulCoopTilings(t *testing.T) {
	d := coopDev(t)
	native := d.dev.HasFeature(wgpu.FeatureCooperativeMatrix)
	sizes := []struct{ M, K, N int }{
		{37, 48, 52},   // vec4 loads, one tile
		{37, 45, 70},   // element loads
		{130, 72, 140}, // several tiles along M and N, steps along K
	}
	for ti, tl := range coopTestTilings(d) {
		if err := tl.fits(d.dev); err != nil {
			t.Fatal(err)
		}
		k := coopKernelFor(t, d, "matmul_coop.wgsl", tl)
		for si, sz := range sizes {
			if !native && tl.loweredLoops(sz.K, 0) > coopLoopBudget {
				t.Fatalf("%v: past lavapipe's loop limit at K %d, lowered", tl, sz.K)
			}
			for _, epi := range []epilogue{epiStore, epiGELU, epiAdd, epiSwiGLU, epiGELUErf} {
				vec := sz.K%4 == 0 && sz.N%4 == 0
				all := native || ti == 1 // every epilogue: natively, and lowered the n-major twin
				if !all && (epi == epiAdd || epi == epiGELUErf || (ti > 0 && (epi != epiStore || !vec)) || (epi != epiStore && !vec)) {
					continue
				}
				if epi != epiStore && si == 2 {
					continue
				}
				t.Run(fmt.Sprintf("%v/M=%d,K=%d,N=%d/%v", tl, sz.M, sz.K, sz.N, epi), func(t *testing.T) {
					checkCoopMatmul(t, d, k, tl, sz.M, sz.K, sz.N, uint64(900+10*si+ti), epi)
				})
			}
		}
	}
}

// TestCoopShapes: every tiling the coop autotuner times is valid for the
// configurations of NVIDIA and AMD (16x16x16, subgroups of 32) and Intel
// (8x16x16) within 48 KiB of workgroup memory (NVIDIA's Vulkan limit), with
// the widest epilogue chunk that fits; 128x128 of 2x2 subgroups of 4x4
// matrices takes whole rows (EC 4) in 35.5 KiB, 256x128 chunks of two in
// 46.5 KiB, with 2 tile buffers (ST 3) chunks of two in 46 KiB; the default
// tiling needs 18.5 KiB, 19 KiB with w's tile n-major. Likewise the LM head's
// (coopHeadShapes): 128 positions x 128 ids folds one result matrix's
// columns at a time in 38.5 KiB.
func TestCoopShapes(t *testing.T) {
	c16 := MatrixConfig{M: 16, N: 16, K: 16}
	for _, cfg := range []MatrixConfig{c16, {M: 8, N: 16, K: 16}} {
		for _, s := range coopShapes {
			tl, ok := s.tiles(cfg, 32, 48<<10)
			if !ok {
				t.Errorf("%v %+v: no tiling within 48 KiB", cfg, s)
				continue
			}
			if err := tl.valid(); err != nil {
				t.Errorf("%+v: %v", s, err)
			}
			if wider := tl.EC + 1; wider <= tl.FN {
				for ; wider <= tl.FN; wider++ {
					w := tl
					w.EC = wider
					if tl.FN%wider == 0 && w.sharedBytes() <= 48<<10 {
						t.Errorf("%v: EC %d fits too", tl, wider)
					}
				}
			}
		}
	}
	big, _ := coopShape{64, 64, 2, 2, 32, 2, 0}.tiles(c16, 32, 48<<10)
	if big.BM() != 128 || big.BN() != 128 || big.EC != 4 || big.sharedBytes() != 36352 {
		t.Errorf("128x128 of 4x4 matrices: %v, %d bytes; want EC 4, 36352 bytes", big, big.sharedBytes())
	}
	if two, _ := (coopShape{64, 64, 2, 2, 32, 3, 0}).tiles(c16, 32, 48<<10); two.EC != 2 || two.sharedBytes() != 47104 {
		t.Errorf("128x128 with 2 tile buffers: %v, %d bytes; want EC 2, 47104 bytes", two, two.sharedBytes())
	}
	tall, _ := coopShape{64, 64, 4, 2, 32, 1, 0}.tiles(c16, 32, 48<<10)
	if tall.BM() != 256 || tall.EC != 2 || tall.sharedBytes() != 47616 {
		t.Errorf("256x128: %v, %d bytes; want EC 2, 47616 bytes", tall, tall.sharedBytes())
	}
	if def := coopMatmulTiles(c16, 32); def.sharedBytes() != 18944 || def.EC != def.FN {
		t.Errorf("default %v: %d bytes, want 18944 and whole rows", def, def.sharedBytes())
	}
	// w's tile n-major (WT 1): BN columns of BK+8 values instead of BK rows
	// of BN+8, as ACO reports for navi31 (BENCHMARKS.md, 2026-12-06).
	for _, c := range []struct {
		s    coopShape
		want int
	}{{coopShape{32, 32, 2, 2, 32, 2, 1}, 19456}, {coopShape{32, 32, 4, 4, 32, 2, 1}, 57344}, {coopShape{32, 32, 4, 4, 16, 3, 1}, 61440}} {
		if tl, ok := c.s.tiles(c16, 32, 64<<10); !ok || tl.sharedBytes() != c.want {
			t.Errorf("%+v: %v, %d bytes; want %d", c.s, tl, tl.sharedBytes(), c.want)
		}
	}
	for _, cfg := range []MatrixConfig{c16, {M: 8, N: 16, K: 16}} {
		for _, s := range coopHeadShapes {
			if _, ok := s.tiles(cfg, 32, sharedVocabTile, sharedSliceTiles, 48<<10); !ok {
				t.Errorf("LM head %v %+v: no tiling within 48 KiB", cfg, s)
			}
		}
	}
	head, _ := coopHeadShape{128, 128, 2, 2, 32, 2}.tiles(c16, 32, sharedVocabTile, sharedSliceTiles, 48<<10)
	if head.FN != 4 || head.EC != 1 || head.nt != sharedSliceTiles || head.sharedBytes() != 39424 {
		t.Errorf("LM head 128 positions x 128 ids: %v NT %d, %d bytes; want folds of one matrix, NT %d, 39424 bytes", head, head.nt, head.sharedBytes(), sharedSliceTiles)
	}
	if same, _ := (coopShape{32, 32, 2, 2, 32, 2, 0}).tiles(c16, 32, 48<<10); same != coopMatmulTiles(c16, 32) {
		t.Errorf("the default's shape gives %v, want the default %v (the candidates would time it twice)", same, coopMatmulTiles(c16, 32))
	}
	if _, ok := (coopShape{40, 32, 2, 2, 32, 2, 0}).tiles(c16, 32, 48<<10); ok {
		t.Errorf("40 rows of 16-row matrices: a tiling")
	}
}

// TestCoopTune: with TuneRedo, the coop autotuner times the default and
// the test's tilings (one with w's tile n-major) for each of the model's four weight matmuls (lowered,
// 8x8x8), keeps the fastest (self-checked) in the tuning file under
// "coop 8x8x8 ..." keys, and the forward runs it: the profile's kernel
// names and MatmulTiles say which; likewise the LM head's tilings (64
// positions per workgroup, slices of more tiles of fewer ids). Lowered, every matmul tiling adds each result's
// products in k order, so the sums are bit for bit those of the default
// tiling where the LM head keeps its default (other head tilings add their
// partial sums in another order). A second model in TuneAuto reads the file: the same tilings, no
// timing and no self-check (the verdicts are kept too). TuneOff keeps the
// default.
func TestCoopTune(t *testing.T) {
	d := coopDev(t)
	native := d.dev.HasFeature(wgpu.FeatureCooperativeMatrix)
	ctx := context.Background()
	mc := synth.TinyConfig()
	mc.VocabSize = 3000 // lavapipe times the LM head's candidates over the whole vocabulary
	m := synth.Peaked(mc, 7)
	seqs := zipfSeqs(25, 3, 24, m.Config.VocabSize)
	dir := t.TempDir()
	verdicts, tuning := filepath.Join(dir, "matrix-units.json"), filepath.Join(dir, "tuning.json")
	cfg := coopConfigs(d)[0]
	// The third is the first with w's tile n-major (WT 1); the last two fit
	// no device here: lavapipe's loop limit, lowered (the self-check's K
	// 136), and the loads per invocation.
	shapes := []coopShape{{16, 32, 2, 2, 16, 2, 0}, {32, 16, 2, 4, 16, 1, 0}, {16, 32, 2, 2, 16, 2, 1}, {64, 64, 2, 2, 16, 2, 0}, {64, 64, 4, 4, 64, 2, 0}}
	heads := []coopHeadShape{{64, 64, 2, 2, 16, 2}, {32, 64, 2, 2, 16, 1}}
	attns := []attnCoopShape{{cfg.M, 2, max(cfg.K, cfg.N), 0}}
	if native {
		cfg, shapes, heads, attns = coopConfigs(d)[0], nil, nil, nil // the real candidates
	}
	newModel := func() *GPT2 {
		g := newCoopGPT2(t, d, m, cfg, verdicts)
		g.tuneFile, g.coopShapes, g.coopHeadShapes, g.attnShapes = tuning, shapes, heads, attns
		if err := g.SetProfiling(true); err != nil {
			t.Skip(err)
		}
		return g
	}
	g := newModel()
	if !native {
		big, ok := shapes[3].tiles(cfg, coopSGS(d, cfg), int(d.dev.Limits().MaxComputeWorkgroupStorageSize))
		if !ok || big.fits(d.dev) != nil || g.coopLoopsOK(big, 16) {
			t.Fatalf("%v: want a tiling that fits the device but not the loop limit (%v)", big, big.fits(d.dev))
		}
	}
	g.SetTuning(TuneOff)
	if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
		t.Fatal(err)
	}
	plain, _ := perToken(t, g, seqs)
	if n := len(g.Tuning()); n != 0 {
		t.Fatalf("TuneOff tuned %d shapes", n)
	}

	g.SetTuning(TuneRedo)
	p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tuned, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// TuneRedo timed the attention kernels too (attention_tune.go): the
	// default tilings' run to compare with has the same attention choice.
	same := plain
	if len(g.attnTuned) > 0 {
		base := newModel()
		base.SetTuning(TuneOff)
		if err := base.SetMatrixUnits(MatrixUnitsOn); err != nil {
			t.Fatal(err)
		}
		base.attnTuned, base.attnPicks = maps.Clone(g.attnTuned), maps.Clone(g.attnPicks)
		same, _ = perToken(t, base, seqs)
	}
	// Lowered, the matmul tilings add in k order (the same bits); an LM head
	// tiling with another number of tiles per slice adds its partial sums
	// in another order (f32 rounding of the logsumexp: far below 1e-6).
	tol := coopActivationTol
	if !native {
		tol = 0
		for key, p := range g.coop.picks {
			if strings.HasPrefix(key, "coop-head ") && p != g.coop.head {
				tol = 1e-6
			}
		}
	}
	if d := meanDiff(tuned, same); d > tol || d < -tol {
		t.Errorf("tuned %+v, default tiling %+v (attention %v)", tuned, same, g.attnTuned)
	}
	choices := g.Tuning()
	if len(choices) != len(g.matmulShapes())+1 {
		t.Fatalf("%d shapes tuned, want %d and the LM head: %+v", len(choices), len(g.matmulShapes()), choices)
	}
	ck := g.coop
	names := map[string]bool{}
	for _, kt := range p.Profile() {
		names[kt.Kernel] = true
	}
	inProfile := func(c TuneChoice, prefix string) {
		t.Helper()
		for n := range names {
			if strings.HasPrefix(n, prefix) {
				return
			}
		}
		t.Errorf("%s: no kernel %q in the profile: %v", c.Shape, prefix, slices.Sorted(maps.Keys(names)))
	}
	for _, c := range choices {
		if strings.HasPrefix(c.Shape, "coop-head ") {
			cands := g.coopHeadCandidates(ck)
			pick := ck.picks[c.Shape]
			want := len(cands) + 1 + len(headGroupSizes) // the tilings, then the fastest again and with each other group size
			if len(c.Candidates) != want || len(cands) < 2 || c.Nanos == 0 || c.Err != "" || pick != coopHeadTilesOf(cfg, ck.head.SGS, c.Tiles) {
				t.Errorf("%s: %d candidates (want %d, at least 2 tilings), %d ns, err %q, runs %v, chose %s", c.Shape, len(c.Candidates), want, c.Nanos, c.Err, pick, TilesName(c.Tiles))
			} else {
				checkGroupRound(t, c, len(cands), cfg, ck.head.SGS)
			}
			inProfile(c, fmt.Sprintf("lmhead_loss_coop[%s %dx%d]%s", cfg, pick.FM, pick.FN, coopProfileTiling("lmhead_loss_coop[", pick.constSet())))
			t.Logf("%s: %s (%d ns)", c.Shape, TilesName(c.Tiles), c.Nanos)
			continue
		}
		K := 0
		for _, sh := range g.matmulShapes() {
			if strings.Contains(c.Shape, fmt.Sprintf(" N%d K%d ", sh.N, sh.K)) {
				K = sh.K
			}
		}
		cands := g.coopCandidates(ck, K)
		if !native && len(cands) != 4 {
			t.Errorf("%s: candidates %v, want the default and the first three of the test's", c.Shape, cands)
		}
		if !strings.HasPrefix(c.Shape, "coop "+cfg.String()+" f16 ") || len(c.Candidates) != len(cands) || len(cands) < 2 || c.Nanos == 0 || c.Cached || c.Err != "" {
			t.Errorf("%s: %d candidates (want %d, at least 2), %d ns, cached %v, err %q", c.Shape, len(c.Candidates), len(cands), c.Nanos, c.Cached, c.Err)
		}
		pick := ck.picks[c.Shape]
		if pick != coopTilesOf(cfg, ck.mm.SGS, c.Tiles) || !slices.Contains(cands, pick) {
			t.Errorf("%s: runs %v, chose %v", c.Shape, pick, TilesName(c.Tiles))
		}
		inProfile(c, fmt.Sprintf("matmul_coop[%s %dx%d]%s K%d ", cfg, pick.FM, pick.FN, coopProfileTiling("matmul_coop[", pick.constSet()), K))
		if mt := g.MatmulTiles()[c.Shape]; mt != pick.String() {
			t.Errorf("MatmulTiles()[%q] = %q, want %q", c.Shape, mt, pick.String())
		}
		t.Logf("%s: %s (%d ns)", c.Shape, TilesName(c.Tiles), c.Nanos)
	}
	file := loadTuning(d.dev, tuning)
	for _, c := range choices {
		if fc, ok := file[c.Shape]; !ok || !maps.Equal(fc.Tiles, c.Tiles) {
			t.Errorf("tuning file: %s is %+v, want %v", c.Shape, fc, c.Tiles)
		}
	}

	g2 := newModel()
	g2.autoTune = true
	if err := g2.SetMatrixUnits(MatrixUnitsOn); err != nil {
		t.Fatal(err)
	}
	again, _ := perToken(t, g2, seqs)
	if again != tuned {
		t.Errorf("from the tuning file %+v, tuned %+v", again, tuned)
	}
	for _, c := range g2.Tuning() {
		if !c.Cached || g2.coop.picks[c.Shape] != ck.picks[c.Shape] {
			t.Errorf("%s: cached %v, runs %v, want %v", c.Shape, c.Cached, g2.coop.picks[c.Shape], ck.picks[c.Shape])
		}
	}
	if g2.coopChecks != 0 {
		t.Errorf("the second model ran %d self-checks, want the kept verdicts", g2.coopChecks)
	}

	// A tuning file naming other tilings (the last candidate of each
	// shape, and of attention's another coop tiling): a third model runs
	// them once they pass the self-check, within coopActivationTol of the
	// default tiling (the LM head folds its ids in another order, attention
	// rescales its sums at other keys).
	// The tilings g ran, each self-checked: every shape's pick (a verdict
	// is per tiling, whatever the shape) and the defaults.
	kind := func(shape string, tiles map[string]float64) string {
		return strings.Fields(shape)[0] + " " + TilesName(tiles)
	}
	checked := map[string]bool{}
	for _, c := range choices {
		checked[kind(c.Shape, c.Tiles)] = true
		checked[kind(c.Shape, c.Candidates[0].Tiles)] = true
	}
	forced := map[string]TuneChoice{}
	fresh := false // a forced tiling no self-check has seen
	for _, c := range choices {
		last := c.Candidates[len(c.Candidates)-1]
		for i := len(c.Candidates) - 1; i > 0; i-- {
			if !checked[kind(c.Shape, c.Candidates[i].Tiles)] {
				last, fresh = c.Candidates[i], true
				break
			}
		}
		c.Tiles = last.Tiles
		forced[c.Shape] = c
	}
	// The attention choice likewise: the last coop tiling timed other than
	// the one chosen.
	attnChoices := g.AttentionTuning()
	if len(attnChoices) != 1 {
		t.Fatalf("attention choices %+v, want one", attnChoices)
	}
	ac := attnChoices[0]
	var attnForced attnCoopTiles
	for _, tt := range ac.Candidates {
		if at, coop := attnTilesOf(g.coop.attn.tiles, tt.Tiles); coop && tt.Err == "" && !maps.Equal(tt.Tiles, attnChoices[0].Tiles) {
			ac.Tiles, attnForced = tt.Tiles, at
		}
	}
	if attnForced == (attnCoopTiles{}) {
		t.Fatalf("attention: no other coop tiling timed: %+v", ac)
	}
	forced[ac.Shape] = ac
	if err := saveTuning(d.dev, tuning, forced); err != nil {
		t.Fatal(err)
	}
	g3 := newModel()
	g3.autoTune = true
	if err := g3.SetMatrixUnits(MatrixUnitsOn); err != nil {
		t.Fatal(err)
	}
	other, _ := perToken(t, g3, seqs)
	p3, err := g3.Submit(ctx, seqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p3.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ranAttn := false
	for _, kt := range p3.Profile() {
		ranAttn = ranAttn || kt.Kernel == attnCoopLabel(attnForced)
	}
	if !ranAttn {
		t.Errorf("no kernel %s in the profile %+v", attnCoopLabel(attnForced), p3.Profile())
	}
	if md := meanDiff(other, plain); md > coopActivationTol || md < -coopActivationTol {
		t.Errorf("other tilings: %+v, default %+v", other, plain)
	}
	for key, c := range forced {
		if key == ac.Shape {
			continue // below
		}
		want := coopTilesOf(cfg, ck.mm.SGS, c.Tiles)
		if strings.HasPrefix(key, "coop-head ") {
			want = coopHeadTilesOf(cfg, ck.head.SGS, c.Tiles)
		}
		if got := g3.coop.picks[key]; got != want {
			t.Errorf("%s: runs %v, the file names %v", key, got, want)
		}
	}
	if a := g3.attnPicks[ac.Shape]; a == nil || a.tiles != attnForced {
		t.Errorf("%s: attention runs %v, the file names %v", ac.Shape, a, attnForced)
	}
	if fresh && g3.coopChecks == 0 {
		t.Errorf("tilings new to the verdict file ran without a self-check")
	}
	t.Logf("other tilings: mean NLL %.3g from the default's, %d self-checks", meanDiff(other, plain), g3.coopChecks)
}

// TestCoopTuneBorrows: with the matrix units, a batch of fewer rows than one
// already tuned in this process takes its matmul and LM-head tilings (what
// runs for them: coop.picks) and the attention of fewer sequences its
// kernel, without timing or a self-check, and they stay out of the tuning
// file.
func TestCoopTuneBorrows(t *testing.T) {
	d := coopDev(t)
	mc := synth.TinyConfig()
	mc.VocabSize = 3000
	m := synth.Peaked(mc, 7)
	dir := t.TempDir()
	cfg := coopConfigs(d)[0]
	g := newCoopGPT2(t, d, m, cfg, filepath.Join(dir, "matrix-units.json"))
	g.tuneFile, g.autoTune = filepath.Join(dir, "tuning.json"), true
	if !d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) { // lowered: a few small tilings
		g.coopShapes = []coopShape{{16, 32, 2, 2, 16, 2, 0}}
		g.coopHeadShapes = []coopHeadShape{{32, 64, 2, 2, 16, 1}}
		g.attnShapes = []attnCoopShape{{cfg.M, 2, max(cfg.K, cfg.N), 0}}
	}
	var notices []string
	g.SetTuneNotice(func(msg string) { notices = append(notices, msg) })
	if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
		t.Fatal(err)
	}
	perToken(t, g, fullSeqs(8, 64, mc.VocabSize)) // 512 rows
	timed, checks := len(notices), g.coopChecks
	if timed == 0 {
		t.Fatal("the big batch was not tuned")
	}
	perToken(t, g, fullSeqs(1, 64, mc.VocabSize)) // 64
	if len(notices) != timed || g.coopChecks != checks {
		t.Errorf("the small batch: notices %q, %d self-checks more", notices[timed:], g.coopChecks-checks)
	}
	byShape := map[string]TuneChoice{}
	for _, c := range g.Tuning() {
		byShape[c.Shape] = c
	}
	keys := [][2]string{{coopHeadKey(cfg, 512, mc.NEmbd, mc.VocabSize), coopHeadKey(cfg, 64, mc.NEmbd, mc.VocabSize)}}
	for _, sh := range g.matmulShapes() {
		keys = append(keys, [2]string{coopTuneKey(cfg, 512, sh.N, sh.K), coopTuneKey(cfg, 64, sh.N, sh.K)})
	}
	kept := loadTuning(d.dev, g.tuneFile)
	for _, k := range keys {
		b, s := byShape[k[0]], byShape[k[1]]
		if b.Nanos == 0 || b.Borrowed != "" {
			t.Errorf("%s: %+v, want it timed", k[0], b)
		}
		if s.Borrowed != k[0] || !maps.Equal(s.Tiles, b.Tiles) || s.Nanos != 0 {
			t.Errorf("%s: %+v, want %s's tiling, borrowed", k[1], s, k[0])
		}
		if p, ok := g.coop.picks[k[1]]; !ok || p != g.coop.picks[k[0]] {
			t.Errorf("%s runs %v, want %v", k[1], p, g.coop.picks[k[0]])
		}
		if _, ok := kept[k[0]]; !ok {
			t.Errorf("the tuning file lacks %s", k[0])
		}
		if c, ok := kept[k[1]]; ok {
			t.Errorf("the tuning file keeps %s (%+v): want only what was timed", k[1], c)
		}
	}
	if g.coop.attn == nil {
		t.Fatalf("no attention_coop.wgsl: %s", g.coop.attnWhy)
	}
	attn := map[string]TuneChoice{}
	for _, c := range g.AttentionTuning() {
		attn[c.Shape] = c
	}
	bigAttn, smallAttn := g.attnTuneKey(8, 64), g.attnTuneKey(1, 64)
	if c := attn[smallAttn]; c.Borrowed != bigAttn || !maps.Equal(c.Tiles, attn[bigAttn].Tiles) || g.attnPicks[smallAttn] != g.attnPicks[bigAttn] {
		t.Errorf("attention %s: %+v runs %v, want %s's %+v, %v", smallAttn, c, g.attnPicks[smallAttn], bigAttn, attn[bigAttn], g.attnPicks[bigAttn])
	}
	if _, ok := kept[smallAttn]; ok {
		t.Errorf("the tuning file keeps %s", smallAttn)
	}
}

// TestCoopValidChoice: a tuning file's coop choice needs exactly the coop
// tiling's constants, small positive integers (the LM head's GX only where
// its tiling sets it; the matmul's WT, 0 or 1, only where it is 1, and a
// choice without it reads as WT 0); SIMT choices their own.
func TestCoopValidChoice(t *testing.T) {
	good := coopMatmulTiles(MatrixConfig{M: 16, N: 16, K: 16}, 32).coopConstants()
	if err := validChoice(TuneChoice{Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: good}); err != nil {
		t.Errorf("default coop tiling: %v", err)
	}
	bad := maps.Clone(good)
	bad["EC"] = 0.5
	const headShape = "coop-head 16x16x16 f16 C768 V50257 M65536"
	head := coopHeadTiles(MatrixConfig{M: 16, N: 16, K: 16}, 32, sharedVocabTile, sharedSliceTiles)
	grouped := head
	grouped.gx = 8
	for _, h := range []coopTiles{head, grouped} { // GX where the tiling sets it
		c := h.headConstants()
		if err := validChoice(TuneChoice{Shape: headShape, Tiles: c}); err != nil {
			t.Errorf("LM head %v: %v", h, err)
		}
		if back := coopHeadTilesOf(h.cfg, h.SGS, c); back != h {
			t.Errorf("LM head %v: read back as %v", h, back)
		}
	}
	def := coopMatmulTiles(MatrixConfig{M: 16, N: 16, K: 16}, 32)
	nmajor := def
	nmajor.WT = 1
	wt0 := maps.Clone(good)
	wt0["WT"] = 0 // written by hand: the same as no WT
	for _, c := range []struct {
		tiles map[string]float64
		want  coopTiles
	}{{good, def}, {nmajor.coopConstants(), nmajor}, {wt0, def}} {
		if err := validChoice(TuneChoice{Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: c.tiles}); err != nil {
			t.Errorf("%v: %v", c.tiles, err)
		}
		if back := coopTilesOf(def.cfg, def.SGS, c.tiles); back != c.want {
			t.Errorf("%v: read back as %v, want %v", c.tiles, back, c.want)
		}
	}
	if _, ok := good["WT"]; ok {
		t.Errorf("the default's constants %v name WT 0", good)
	}
	if nmajor.coopConstants()["WT"] != 1 || TilesName(nmajor.coopConstants()) != "2x2*2x2/BK32/EC2/ST2/WT1" || TilesName(good) != "2x2*2x2/BK32/EC2/ST2" {
		t.Errorf("WT 1: constants %v named %s; the default's named %s", nmajor.coopConstants(), TilesName(nmajor.coopConstants()), TilesName(good))
	}
	wt2 := maps.Clone(good)
	wt2["WT"] = 2
	headWT := head.headConstants()
	headWT["WT"] = 1
	withGX := maps.Clone(good)
	withGX["GX"] = 8
	noNT := head.headConstants()
	delete(noNT, "NT")
	for _, c := range []TuneChoice{
		{Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: wt2},
		{Shape: headShape, Tiles: headWT}, // WT is the matmul's alone
		{Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: bad},
		{Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: defaultMatmulTiles.constants()},
		{Shape: "f16 N768 K768 M64", Tiles: good},
		{Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: withGX}, // GX is the LM head's alone
		{Shape: headShape, Tiles: noNT},
	} {
		if validChoice(c) == nil {
			t.Errorf("%+v: valid", c)
		}
	}
}

// checkGroupRound checks the LM head's second round of tuning (candidates
// from first on): the first round's fastest tiling (by its timings), then
// the same with each of headGroupSizes; the choice is the round's fastest.
func checkGroupRound(t *testing.T, c TuneChoice, first int, cfg MatrixConfig, sgs int) {
	t.Helper()
	best := byTime(c.Candidates[:first])[0]
	round := c.Candidates[first:]
	if !maps.Equal(round[0].Tiles, best.Tiles) {
		t.Errorf("%s: the group round starts with %s, want the fastest tiling %s", c.Shape, TilesName(round[0].Tiles), TilesName(best.Tiles))
	}
	for i, gx := range headGroupSizes {
		tl := coopHeadTilesOf(cfg, sgs, round[0].Tiles)
		tl.gx = gx
		if got := round[1+i].Tiles; !maps.Equal(got, tl.headConstants()) {
			t.Errorf("%s: group round candidate %d is %s, want %s", c.Shape, 1+i, TilesName(got), TilesName(tl.headConstants()))
		}
	}
	if fastest := byTime(round)[0]; !maps.Equal(c.Tiles, fastest.Tiles) || c.Nanos != fastest.Nanos {
		t.Errorf("%s: chose %s (%d ns), the round's fastest is %s (%d ns)", c.Shape, TilesName(c.Tiles), c.Nanos, TilesName(fastest.Tiles), fastest.Nanos)
	}
}

// TestCoopTuningFileWT: coop choices round-trip through the tuning file
// with w's tile layout: the default (no WT key, as every file written
// before WT had none) reads back as WT 0, an n-major tiling as WT 1; a
// choice with WT 2 is dropped.
func TestCoopTuningFileWT(t *testing.T) {
	d := newTestDev(t)
	cfg := MatrixConfig{M: 16, N: 16, K: 16}
	def := coopMatmulTiles(cfg, 32)
	nmajor := def
	nmajor.WT = 1
	wt2 := nmajor.coopConstants()
	wt2["WT"] = 2
	choices := map[string]TuneChoice{
		"coop 16x16x16 f16 N768 K768 M64":  {Shape: "coop 16x16x16 f16 N768 K768 M64", Tiles: def.coopConstants(), Nanos: 10},
		"coop 16x16x16 f16 N2304 K768 M64": {Shape: "coop 16x16x16 f16 N2304 K768 M64", Tiles: nmajor.coopConstants(), Nanos: 20},
		"coop 16x16x16 f16 N3072 K768 M64": {Shape: "coop 16x16x16 f16 N3072 K768 M64", Tiles: wt2, Nanos: 30},
	}
	path := filepath.Join(t.TempDir(), "t.json")
	if err := saveTuning(d.dev, path, choices); err != nil {
		t.Fatal(err)
	}
	got := loadTuning(d.dev, path)
	if len(got) != 2 {
		t.Fatalf("read back %d choices, want 2 (WT 2 dropped): %+v", len(got), got)
	}
	for key, want := range map[string]coopTiles{"coop 16x16x16 f16 N768 K768 M64": def, "coop 16x16x16 f16 N2304 K768 M64": nmajor} {
		c, ok := got[key]
		if !ok || !c.Cached || c.Nanos != choices[key].Nanos {
			t.Errorf("%s: read back %+v", key, c)
			continue
		}
		if back := coopTilesOf(cfg, 32, c.Tiles); back != want {
			t.Errorf("%s: read back as %v, want %v", key, back, want)
		}
	}
}

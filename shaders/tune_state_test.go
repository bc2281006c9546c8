package shaders

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestAttnTuningKeptAfterFailedCheck: when the fastest attention tiling
// fails the self-check, the tuning file still keeps the timed choice, so
// that the next process (TuneAuto) times nothing: it reads the choice,
// finds the failed verdict in the verdict file and runs the next fastest,
// the default tiling, saying why in the choice's Err (and MatmulTiles, the
// provenance, names it). The choice was kept out of the file, so every run
// timed the candidates again; the provenance named no attention choice.
func TestAttnTuningKeptAfterFailedCheck(t *testing.T) {
	d := coopDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	dir := t.TempDir()
	tuning, verdicts := filepath.Join(dir, "tuning.json"), filepath.Join(dir, "matrix-units.json")
	cfg := coopConfigs(d)[0]
	small := attnCoopShape{Rows: cfg.M, SG: 2, BKV: max(cfg.K, cfg.N)}
	timed := 0
	newModel := func(corrupt bool) *GPT2 {
		g := newCoopGPT2(t, d, m, cfg, verdicts)
		g.tuneFile, g.autoTune = tuning, true
		g.attnShapes = []attnCoopShape{small}
		a, why := g.newAttnCoop(cfg, coopSGS(d, cfg))
		if a == nil {
			t.Fatal(why)
		}
		g.coop = &coopKernels{cfg: cfg, attn: a}
		st, ok := small.tiles(a.tiles)
		if !ok || st == a.tiles {
			t.Fatalf("small tiling %v (default %v)", st, a.tiles)
		}
		// The small tiling is the fastest, then the default, then
		// attention_shared.wgsl.
		g.tuneClock = func(tiles map[string]float64) uint64 {
			timed++
			switch at, coop := attnTilesOf(a.tiles, tiles); {
			case coop && at == st:
				return 10
			case coop:
				return 20
			}
			return 30
		}
		if corrupt {
			g.coopCorrupt = func(kind string, v []float32) { v[0] += 1 }
		}
		return g
	}
	const B, T = 3, 20
	for run, corrupt := range []bool{true, false, false} {
		g := newModel(corrupt)
		before := timed
		g.mu.Lock()
		g.ensureAttnTuned(B, T)
		a := g.attnCoopFor(B, T)
		g.mu.Unlock()
		if a != g.coop.attn {
			t.Errorf("run %d: attention runs %v, want the default tiling %v", run, a, g.coop.attn)
		}
		got := g.AttentionTuning()
		if len(got) != 1 || !strings.Contains(got[0].Err, "self-check") {
			t.Fatalf("run %d: tuning %+v, want one choice saying the fastest failed the self-check", run, got)
		}
		if named := g.MatmulTiles()[got[0].Shape]; named != attnCoopLabel(g.coop.attn.tiles) {
			t.Errorf("run %d: provenance names %q for %s, want the default tiling %q", run, named, got[0].Shape, attnCoopLabel(g.coop.attn.tiles))
		}
		switch n := timed - before; {
		case run == 0 && n != 3:
			t.Errorf("run %d: %d candidates timed, want 3", run, n)
		case run > 0 && (n != 0 || !got[0].Cached):
			t.Errorf("run %d: %d candidates timed (cached %v), want the tuning file's choice", run, n, got[0].Cached)
		}
	}
}

// TestCoopTuningKeptAfterFailedCheck is TestAttnTuningKeptAfterFailedCheck
// for the matmuls' coop tilings: the fastest fails the self-check in the
// first process; the tuning file keeps every shape's timed choice, and the
// next processes time nothing and run the default tiling, the next
// fastest, with the reason in the choice. The file dropped such choices
// (and, whenever a process tuned anything, every choice of its own whose
// pick had fallen back), so each run timed those shapes again.
func TestCoopTuningKeptAfterFailedCheck(t *testing.T) {
	d := coopDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	dir := t.TempDir()
	tuning, verdicts := filepath.Join(dir, "tuning.json"), filepath.Join(dir, "matrix-units.json")
	cfg := coopConfigs(d)[0]
	shape := coopShape{16, 32, 2, 2, 16, 2, 0} // fits lavapipe's loop limit, lowered
	timed := 0
	rows := 40
	for run, corrupt := range []bool{true, false, false} {
		g := newCoopGPT2(t, d, m, cfg, verdicts)
		g.tuneFile, g.autoTune = tuning, true
		g.coopShapes, g.coopHeadShapes = []coopShape{shape}, []coopHeadShape{}
		if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
			t.Fatal(err)
		}
		ck := g.coop
		fast, ok := shape.tiles(cfg, ck.mm.SGS, int(d.dev.Limits().MaxComputeWorkgroupStorageSize))
		if !ok || fast == ck.mm {
			t.Fatalf("tiling %v (default %v)", fast, ck.mm)
		}
		g.tuneClock = func(tiles map[string]float64) uint64 {
			timed++
			if _, head := tiles["NT"]; !head && coopTilesOf(cfg, ck.mm.SGS, tiles) == fast {
				return 10
			}
			return 20
		}
		if corrupt { // after the model's own self-check: the tiling's fails
			g.coopCorrupt = func(kind string, v []float32) { v[0] += 1 }
		}
		before := timed
		g.mu.Lock()
		g.ensureCoopTuned(rows)
		g.mu.Unlock()
		n := timed - before
		for _, c := range g.Tuning() {
			if strings.HasPrefix(c.Shape, "coop-head ") {
				continue
			}
			if ck.picks[c.Shape] != ck.mm || !strings.Contains(c.Err, "self-check") {
				t.Errorf("run %d: %s runs %v (error %q), want the default and the failed self-check named", run, c.Shape, ck.picks[c.Shape], c.Err)
			}
			if run > 0 && !c.Cached {
				t.Errorf("run %d: %s not from the tuning file", run, c.Shape)
			}
		}
		switch shapes := len(g.matmulShapes()); {
		case run == 0 && n != 2*shapes+2+len(headGroupSizes):
			t.Errorf("run %d: %d candidates timed, want 2 for each of %d shapes and the LM head's default in each of its rounds", run, n, shapes)
		case run > 0 && n != 0:
			t.Errorf("run %d: %d candidates timed, want the tuning file's choices", run, n)
		}
	}
}

// TestTuningFileUnwritable: where the tuning file cannot be written (here
// its folder cannot be made: a file is in the way; a read-only or full
// cache folder alike), the batches still run and the tune notice says once
// that the choices are not kept, naming the file, since every later run
// tunes again. The failure was dropped, and the notice's "the choices are
// kept in ..." was the last word.
func TestTuningFileUnwritable(t *testing.T) {
	d := newTestDev(t)
	g, seqs, want := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(53, 2, c.NPositions, c.VocabSize) })
	g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
	g.tuneCands = []matmulTiles{defaultMatmulTiles, {BM: 64, BN: 64, BK: 8, TM: 8, TN: 8}}
	blocker := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g.tuneFile = filepath.Join(blocker, "tuning.json")
	var notices []string
	g.SetTuneNotice(func(msg string) { notices = append(notices, msg) })
	for range 2 {
		g.SetTuning(TuneRedo) // times every shape again, and fails to keep them again
		got, err := g.Loss(context.Background(), seqs)
		if err != nil {
			t.Fatal(err)
		}
		if meanDiff(got, want) > 1e-5 {
			t.Errorf("%+v, cpu %+v", got, want)
		}
	}
	var warned []string
	for _, n := range notices {
		if strings.Contains(n, "not kept") {
			warned = append(warned, n)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], g.tuneFile) || !strings.Contains(warned[0], "next run tunes again") {
		t.Errorf("notices %q: want one saying the choices are not kept in %s", notices, g.tuneFile)
	}
}

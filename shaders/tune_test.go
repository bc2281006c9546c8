package shaders

import (
	"context"
	"encoding/binary"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// TestTune: the autotuner times every candidate that fits the device for each
// of the model's four weight matmuls (hardware kernels forced on this
// adapter), keeps the fastest of those that ran, writes them to the tuning
// file, and a model that reads the file uses the same tiles without timing
// anything; the sums are bit-identical with the tuned tiles, the defaults and
// after a rerun, since every tile configuration adds in k order. The notice
// (SetTuneNotice) comes as the first shape is timed, then a line for each
// further shape, and none from the model that reads the file.
func TestTune(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	g, seqs, want := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(51, 3, c.NPositions, c.VocabSize) })
	g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
	g.tuneFile = filepath.Join(t.TempDir(), "tuning.json")
	g.SetTuning(TuneOff)
	plain, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if meanDiff(plain, want) > 1e-5 {
		t.Fatalf("default tiles: %+v, cpu %+v", plain, want)
	}
	if n := len(g.Tuning()); n != 0 {
		t.Fatalf("TuneOff tuned %d shapes", n)
	}
	var notices []string
	note := func(msg string) { notices = append(notices, msg) }
	g.SetTuneNotice(note)
	g.SetTuning(TuneRedo)
	tuned, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if tuned != plain {
		t.Errorf("tuned %+v, default tiles %+v: not bit-identical", tuned, plain)
	}
	choices := g.Tuning()
	if len(choices) != len(g.matmulShapes()) {
		t.Fatalf("%d shapes tuned, want %d: %+v", len(choices), len(g.matmulShapes()), choices)
	}
	var fit int
	for _, c := range matmulCandidates {
		if c.fits(d.dev) == nil {
			fit++
		}
	}
	for _, c := range choices {
		if len(c.Candidates) != fit || c.Nanos == 0 || c.Cached {
			t.Errorf("%s: %d candidates (want %d), %d ns, cached %v", c.Shape, len(c.Candidates), fit, c.Nanos, c.Cached)
		}
		if !slices.Contains(matmulCandidates, tilesOf(c.Tiles)) {
			t.Errorf("%s: chose %v, not a candidate", c.Shape, tilesOf(c.Tiles))
		}
		for _, x := range c.Candidates {
			if x.Err == "" && x.Nanos < c.Nanos {
				t.Errorf("%s: chose %d ns, but %v took %d ns", c.Shape, c.Nanos, tilesOf(x.Tiles), x.Nanos)
			}
		}
	}
	if _, err := os.Stat(g.tuneFile); err != nil {
		t.Fatalf("no tuning file: %v", err)
	}
	if len(notices) == 0 {
		t.Fatal("no tuning notice")
	}
	if len(notices) != len(choices) || !strings.Contains(notices[0], "tuning the kernels for "+d.info.Name) || !strings.Contains(notices[0], g.tuneFile) {
		t.Errorf("notices %q, want %d: the first naming the device and the tuning file", notices, len(choices))
	}
	for _, c := range choices { // each shape named once, the first in the first notice
		n := 0
		for _, msg := range notices {
			if strings.Contains(msg, "tuning "+c.Shape+" on ") || strings.Contains(msg, "starting with "+c.Shape+":") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("shape %s named in %d notices: %q", c.Shape, n, notices)
		}
	}
	for _, msg := range notices[1:] {
		if !strings.Contains(msg, " on "+d.info.Name+" (") || !strings.Contains(msg, " so far)") {
			t.Errorf("notice %q: want the shape, the device and the time so far", msg)
		}
	}
	notices = notices[:1]

	// A fresh model on the same device reads the file: the same tiles, nothing timed.
	h, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	h.sharedMatmul, h.vt = true, sharedVocabTile
	h.tuneFile, h.autoTune = g.tuneFile, true // as TuneAuto does on a GPU
	h.SetTuneNotice(note)
	again, err := h.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if again != plain {
		t.Errorf("from the tuning file: %+v, first %+v", again, plain)
	}
	if len(notices) != 1 {
		t.Errorf("notices %q: the model that read the file gave one", notices)
	}
	read := h.Tuning()
	if len(read) != len(choices) {
		t.Fatalf("read %d choices back, wrote %d", len(read), len(choices))
	}
	for i, c := range read {
		if !c.Cached || tilesOf(c.Tiles) != tilesOf(choices[i].Tiles) || c.Shape != choices[i].Shape {
			t.Errorf("read back %+v, wrote %+v", c, choices[i])
		}
	}
}

// fullSeqs is n sequences of exactly L tokens below vocab (zipfSeqs',
// lengthened), so that a batch of them has n x L rows.
func fullSeqs(n, L, vocab int) []model.Sequence {
	out := zipfSeqs(uint64(n), n, L, vocab)
	for i := range out {
		for len(out[i].Tokens) < L {
			out[i].Tokens = append(out[i].Tokens, out[i].Tokens[0])
		}
	}
	return out
}

// TestTuneBorrowsForSmallerBatches: in TuneAuto a batch whose rows round to
// fewer than a batch's already tuned in this process (a run's last) takes
// those tiles without timing anything (Borrowed names the shape), the same
// sums as with any tiles; the tuning file keeps only what was timed, so a
// fresh model whose batches are all small times its own, and TuneRedo and
// SetTuneEachSize time the small shapes too.
func TestTuneBorrowsForSmallerBatches(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	big, small := fullSeqs(8, 64, 50257), fullSeqs(1, 64, 50257) // 512 rows, 64
	var notices []string
	newModel := func(file string) *GPT2 {
		g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
		g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
		g.tuneFile, g.autoTune = file, true          // as TuneAuto does on a GPU
		g.SetTuneNotice(func(msg string) { notices = append(notices, msg) })
		return g
	}
	file := filepath.Join(t.TempDir(), "tuning.json")
	g := newModel(file)
	g.SetTuning(TuneOff)
	plain, err := g.Loss(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	g.SetTuning(TuneAuto)
	if _, err := g.Loss(ctx, big); err != nil {
		t.Fatal(err)
	}
	timed := len(notices)
	if timed == 0 {
		t.Fatal("the big batch was not tuned")
	}
	got, err := g.Loss(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if got != plain {
		t.Errorf("small batch with borrowed tiles %+v, default tiles %+v", got, plain)
	}
	if len(notices) != timed {
		t.Errorf("the small batch was tuned: %q", notices[timed:])
	}
	byShape := map[string]TuneChoice{}
	for _, c := range g.Tuning() {
		byShape[c.Shape] = c
	}
	for _, sh := range g.matmulShapes() {
		bigKey, smallKey := tuneKey(g.f16, 512, sh.N, sh.K), tuneKey(g.f16, 64, sh.N, sh.K)
		b, s := byShape[bigKey], byShape[smallKey]
		if b.Nanos == 0 || b.Borrowed != "" {
			t.Errorf("%s: %+v, want it timed", bigKey, b)
		}
		if s.Borrowed != bigKey || !maps.Equal(s.Tiles, b.Tiles) || s.Nanos != 0 || len(s.Candidates) != 0 {
			t.Errorf("%s: %+v, want %s's tiles %v, borrowed", smallKey, s, bigKey, b.Tiles)
		}
		if g.tilesFor(64, sh.K, sh.N) != tilesOf(b.Tiles) {
			t.Errorf("%s runs %v, want %v", smallKey, g.tilesFor(64, sh.K, sh.N), tilesOf(b.Tiles))
		}
	}
	kept := loadTuning(d.dev, file)
	for k, c := range kept {
		if strings.HasSuffix(k, " M64") || c.Borrowed != "" {
			t.Errorf("the tuning file keeps %s (%+v): want only what was timed", k, c)
		}
	}
	if len(kept) != len(g.matmulShapes()) {
		t.Errorf("the tuning file has %d shapes, want %d", len(kept), len(g.matmulShapes()))
	}

	// A fresh model with only small batches times them.
	notices = nil
	h := newModel(file)
	if _, err := h.Loss(ctx, small); err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Tuning() {
		if c.Borrowed != "" || c.Nanos == 0 || !strings.HasSuffix(c.Shape, " M64") {
			t.Errorf("fresh model, small batch: %+v, want M64 timed", c)
		}
	}
	if len(notices) == 0 {
		t.Error("the fresh model's small batch was not tuned")
	}
	// With SetTuneEachSize (bench), a smaller batch after a big one is timed.
	notices = nil
	e := newModel(filepath.Join(t.TempDir(), "tuning.json"))
	e.SetTuneEachSize(true)
	for _, s := range [][]model.Sequence{big, small} {
		if _, err := e.Loss(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.Tuning()); n != 2*len(e.matmulShapes()) {
		t.Errorf("SetTuneEachSize: %d shapes, want %d", n, 2*len(e.matmulShapes()))
	}
	for _, c := range e.Tuning() {
		if c.Borrowed != "" || c.Nanos == 0 {
			t.Errorf("SetTuneEachSize: %+v, want it timed", c)
		}
	}
	// TuneRedo times what was borrowed.
	g.SetTuning(TuneRedo)
	if _, err := g.Loss(ctx, small); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Tuning() {
		if c.Borrowed != "" || c.Nanos == 0 {
			t.Errorf("after TuneRedo: %+v, want it timed", c)
		}
	}
}

// TestTuningFile: the file round-trips; a file of another device or driver
// or of another build's kernels, a corrupt one and one with unknown or
// absurd tile constants are ignored.
func TestTuningFile(t *testing.T) {
	d := newTestDev(t)
	path := filepath.Join(t.TempDir(), "sub", "t.json")
	c := TuneChoice{Shape: "f16 N2304 K768 M8192", Tiles: defaultMatmulTiles.constants(), Nanos: 1234}
	if err := saveTuning(d.dev, path, map[string]TuneChoice{c.Shape: c}); err != nil {
		t.Fatal(err)
	}
	got := loadTuning(d.dev, path)
	if g, ok := got[c.Shape]; !ok || tilesOf(g.Tiles) != defaultMatmulTiles || g.Nanos != 1234 || !g.Cached {
		t.Fatalf("read back %+v", got)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"other device":  []byte(strings.Replace(string(b), d.info.DeviceUUID, "00000000-0000-0000-0000-000000000000", 1)),
		"other kernels": []byte(strings.Replace(string(b), `"kernels": "`+kernelsDigest()+`"`, `"kernels": "0123456789abcdef"`, 1)),
		"no kernels":    []byte(strings.Replace(string(b), `"kernels": "`+kernelsDigest()+`"`, `"other": ""`, 1)),
		"corrupt":       b[:len(b)/2],
		"unknown tile":  []byte(strings.Replace(string(b), `"BM"`, `"XX"`, 1)),
		"absurd tile":   []byte(strings.Replace(string(b), `"BK": 8`, `"BK": 1e9`, 1)),
	} {
		if string(bad) == string(b) {
			t.Fatalf("%s: the file did not change", name)
		}
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := loadTuning(d.dev, path); len(got) != 0 {
			t.Errorf("%s: read %+v", name, got)
		}
	}
	if got := loadTuning(d.dev, ""); len(got) != 0 {
		t.Errorf("no path: %+v", got)
	}
}

// TestParseTuneMode: the three modes and a clear error otherwise.
func TestParseTuneMode(t *testing.T) {
	for s, want := range map[string]TuneMode{"auto": TuneAuto, "": TuneAuto, "off": TuneOff, "redo": TuneRedo} {
		if m, err := ParseTuneMode(s); err != nil || m != want {
			t.Errorf("%q: %v, %v", s, m, err)
		}
	}
	if _, err := ParseTuneMode("fast"); err == nil {
		t.Error(`"fast" accepted`)
	}
}

// TestTuneFailureKeepsDefaults: when no candidate can be timed, the batch
// still runs, with the default tiles, and the choice says why.
func TestTuneFailureKeepsDefaults(t *testing.T) {
	d := newTestDev(t)
	g, seqs, want := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(52, 2, c.NPositions, c.VocabSize) })
	g.sharedMatmul, g.vt = true, sharedVocabTile
	g.tuneFile = ""
	g.tuneCands = []matmulTiles{{BM: 4, BN: 4, BK: 3, TM: 4, TN: 4}} // BK not a multiple of 4: fits nothing
	g.SetTuning(TuneRedo)
	got, err := g.Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	if meanDiff(got, want) > 1e-5 {
		t.Errorf("%+v, cpu %+v", got, want)
	}
	for _, c := range g.Tuning() {
		if c.Err == "" || tilesOf(c.Tiles) != g.tiles {
			t.Errorf("%s: tiles %v, error %q: want the defaults %v and a reason", c.Shape, tilesOf(c.Tiles), c.Err, g.tiles)
		}
	}
	if len(g.Tuning()) != 4 {
		t.Errorf("%d shapes", len(g.Tuning()))
	}
}

// TestTuneTiming: a candidate's timing after its warm-up: none where the
// warm-up is tuneSkip times the best or more (never before a best), one
// dispatch where it is long, else tuneRuns submissions of as many dispatches
// as fit tuneRunNanos, one to tuneReps.
func TestTuneTiming(t *testing.T) {
	const ms = 1e6
	for _, c := range []struct {
		warm, best uint64
		runs, reps int
	}{
		{4 * ms, 1 * ms, 0, 0},
		{3.9 * ms, 1 * ms, 3, 2},
		{500 * ms, 0, 1, 1},
		{80 * ms, 20 * ms, 0, 0},
		{79 * ms, 20 * ms, 1, 1},
		{20 * ms, 0, 1, 1},
		{19.9 * ms, 0, 3, 1},
		{5 * ms, 0, 3, 2},
		{2.5 * ms, 2 * ms, 3, 4},
		{1000, 0, 3, 4},
		{0, 0, 3, 4},
	} {
		if runs, reps := tuneTiming(c.warm, c.best); runs != c.runs || reps != c.reps {
			t.Errorf("warm-up %d ns, best %d ns: %d runs of %d, want %d of %d", c.warm, c.best, runs, reps, c.runs, c.reps)
		}
	}
}

// TestTuneOperandsQKV: the tuner times c_attn with its KV-cache epilogue,
// so its operands must take it: one dispatch of matmul_shared.wgsl with
// EPI_QKV on tuneOperands' buffers and push constants writes q to out and
// every k and v into the cache where storeKV puts position m of head h,
// each the float64 product of the operands (read back from the device,
// which made them) within f32 rounding.
func TestTuneOperandsQKV(t *testing.T) {
	d := newTestDev(t)
	g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	sh := g.matmulShapes()[0]
	if sh.epi != epiQKV {
		t.Fatalf("GPT-2's first matmul has epilogue %v, want QKV", sh.epi)
	}
	const M = 70
	N, K, C, H := sh.N, sh.K, sh.N/3, g.cfg.NHead
	hd := C / H
	bufs, params, done, err := g.tuneOperands(M, sh)
	defer done()
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.matmulShared.pipeline(defaultMatmulTiles.constSet().with("EPI", float64(epiQKV)))
	if err != nil {
		t.Fatal(err)
	}
	d.run(t, p, bufs, params, grid(defaultMatmulTiles.groups(M, N)))
	read := func(name string, n int) []float64 { // an operand as the device made it
		out := make([]float64, n)
		if name == "x" || !g.f16 {
			for i, v := range d.readF32(t, bufs[name].Buffer, n) {
				out[i] = float64(v)
			}
			return out
		}
		raw := make([]byte, (2*n+3)&^3)
		if err := d.dev.Queue().ReadBuffer(bufs[name].Buffer, 0, raw); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			out[i] = float64(float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32())
		}
		return out
	}
	x, w, bias := read("x", M*K), read("w", K*N), read("bias", N)
	if slices.Max(x) == slices.Min(x) || slices.Max(w) == slices.Min(w) {
		t.Fatalf("operands x in [%g, %g], w in [%g, %g]: want random values", slices.Min(x), slices.Max(x), slices.Min(w), slices.Max(w))
	}
	out := d.readF32(t, bufs["out"].Buffer, M*N)
	kc, vc := d.readF32(t, bufs["kc"].Buffer, M*C), d.readF32(t, bufs["vc"].Buffer, M*C)
	for m := range M {
		for n := range N {
			y, mag := bias[n], math.Abs(bias[n])
			for k := range K {
				y += x[m*K+k] * w[k*N+n]
				mag += math.Abs(x[m*K+k] * w[k*N+n])
			}
			c := n % C
			var got float32
			switch {
			case n < C:
				got = out[m*N+n]
			case n < 2*C:
				got = kc[((c/hd)*M+m)*hd+c%hd]
			default:
				got = vc[((c/hd)*M+m)*hd+c%hd]
			}
			if math.Abs(float64(got)-y) > 1e-6*mag+1e-30 {
				t.Fatalf("row %d column %d: %v, want %v", m, n, got, y)
			}
		}
	}
}

// TestPipelinesConcurrent: pipelines of one kernel with different
// constants are created concurrently (compilePipelines, the tuners'), and
// callers asking for the same constants at once get the same pipeline, made
// once; a pipeline that fails fails every caller waiting for it and is
// tried again by the next. Run with -race, it also checks that creation
// shares nothing unguarded.
func TestPipelinesConcurrent(t *testing.T) {
	d := newTestDev(t)
	k, err := NewKernel(d.dev, "matmul_shared.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	var sets []constSet
	for _, tl := range matmulCandidates[:4] {
		if tl.fits(d.dev) == nil {
			sets = append(sets, tl.constSet().with("EPI", 0))
		}
	}
	if len(sets) < 2 {
		t.Fatalf("%d of matmul_shared.wgsl's first candidates fit the device", len(sets))
	}
	bad := consts("NOSUCH", 1)
	var jobs []pipelineJob
	for _, s := range append(sets, bad) {
		jobs = append(jobs, pipelineJob{k, s}, pipelineJob{k, s})
	}
	got := make([]*Pipeline, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { got[i], errs[i] = j.k.pipeline(j.consts) })
	}
	wg.Wait()
	for i := 0; i < len(jobs); i += 2 {
		if jobs[i].consts == bad {
			if errs[i] == nil || errs[i+1] == nil || !strings.Contains(errs[i].Error(), "no override") {
				t.Errorf("bad constants: errors %v, %v", errs[i], errs[i+1])
			}
			continue
		}
		if errs[i] != nil || errs[i+1] != nil {
			t.Fatalf("%v: %v, %v", jobs[i].consts, errs[i], errs[i+1])
		}
		if got[i] != got[i+1] {
			t.Errorf("%v: two callers at once got two pipelines", jobs[i].consts)
		}
		if i > 0 && got[i] == got[i-2] {
			t.Errorf("%v and %v: one pipeline", jobs[i].consts, jobs[i-2].consts)
		}
	}
	if _, err := k.pipeline(bad); err == nil {
		t.Error("bad constants: the second try succeeded")
	}
	compilePipelines(jobs) // all made: lookups only
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.pipes) != len(sets) || len(k.making) != 0 {
		t.Errorf("%d pipelines kept, %d being made; want %d and 0", len(k.pipes), len(k.making), len(sets))
	}
	for i, s := range sets {
		if k.pipes[s] != got[2*i] {
			t.Errorf("%v: the kept pipeline is not the one returned", s)
		}
	}
}

// randomF32 is n uniform values in [-1, 1) as f32 bytes, from a fixed seed,
// made on the host (the tuners' are made on the device: checkRun.random).
func randomF32(seed uint32, n int) []byte {
	b := make([]byte, 4*n)
	s := seed | 1
	for i := range n {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(s)/(1<<31)-1))
	}
	return b
}

// randomWeights is n random weights in the model's weight type, small as
// trained weights are.
func (g *GPT2) randomWeights(seed uint32, n int) []byte {
	f := randomF32(seed, n)
	if !g.f16 {
		return f
	}
	b := make([]byte, 2*n)
	for i := range n {
		v := math.Float32frombits(binary.LittleEndian.Uint32(f[4*i:])) * 0.05
		binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(v).Bits())
	}
	return b
}

// TestSetupTimes: a model's SetupTimes grow with the work they name and with
// nothing else. The first batch decides on the matrix units (Check), runs a
// tuning round (Tune) and makes its recording's pipelines (Compile); the
// same batch again adds nothing to any of them; a smaller batch, which
// borrows the tuning, adds only its own recording's pipelines; TuneRedo
// times the shape again (Tune) with the pipelines it has; SetMatrixUnits
// decides again (Check).
func TestSetupTimes(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
	g.tuneFile, g.autoTune = filepath.Join(t.TempDir(), "tuning.json"), true
	g.tuneCands = []matmulTiles{defaultMatmulTiles, {BM: 64, BN: 64, BK: 8, TM: 8, TN: 8}}
	var notices []string
	g.SetTuneNotice(func(msg string) { notices = append(notices, msg) })
	big, small := fullSeqs(4, 64, 50257), fullSeqs(1, 64, 50257)
	last := g.SetupTimes()
	if last != (SetupTimes{}) {
		t.Fatalf("a new model's setup times %+v, want none", last)
	}
	step := func(what string, run func() error, compile, tune, check bool) {
		t.Helper()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		now := g.SetupTimes()
		for _, f := range []struct {
			name      string
			was, is   time.Duration
			wantGrown bool
		}{{"Compile", last.Compile, now.Compile, compile}, {"Tune", last.Tune, now.Tune, tune}, {"Check", last.Check, now.Check, check}} {
			if grown := f.is > f.was; grown != f.wantGrown || f.is < f.was {
				t.Errorf("%s: %s went from %v to %v, want it grown %v", what, f.name, f.was, f.is, f.wantGrown)
			}
		}
		last = now
	}
	loss := func(seqs []model.Sequence) func() error {
		return func() error { _, err := g.Loss(ctx, seqs); return err }
	}
	step("the first batch", loss(big), true, true, true)
	if len(notices) == 0 {
		t.Fatal("the first batch was not tuned")
	}
	step("the same batch again", loss(big), false, false, false)
	tuned := len(notices)
	step("a smaller batch", loss(small), true, false, false)
	if len(notices) != tuned {
		t.Fatalf("the smaller batch was tuned: %q", notices[tuned:])
	}
	g.SetTuning(TuneRedo)
	step("the first batch, TuneRedo", loss(big), false, true, false)
	step("SetMatrixUnits", func() error { return g.SetMatrixUnits(MatrixUnitsAuto) }, false, false, true)
}

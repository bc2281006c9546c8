package shaders

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TuneMode says when a GPT2 times the candidate tile configurations of its
// matmuls on its device (the autotuner).
type TuneMode int

const (
	// TuneAuto tunes a matmul shape the first time a batch needs it on a
	// hardware GPU, unless the tuning file beside the pipeline cache has it
	// (keyed by device UUID, driver version and shape); software adapters keep
	// the default tiles.
	TuneAuto TuneMode = iota
	// TuneOff keeps the default tiles.
	TuneOff
	// TuneRedo times every shape again, on any adapter, and rewrites the
	// tuning file (bench --tune).
	TuneRedo
)

// ParseTuneMode parses "auto", "off" or "redo".
func ParseTuneMode(s string) (TuneMode, error) {
	switch s {
	case "auto", "":
		return TuneAuto, nil
	case "off":
		return TuneOff, nil
	case "redo":
		return TuneRedo, nil
	}
	return 0, fmt.Errorf("tuning %q: want auto, off or redo", s)
}

// TuneChoice is the autotuner's result for one matmul shape.
type TuneChoice struct {
	Shape      string             `json:"shape"`           // "f16 N2304 K768 M8192" (see tuneKey)
	Tiles      map[string]float64 `json:"tiles"`           // matmul_shared.wgsl's override constants
	Nanos      uint64             `json:"nanos"`           // GPU time of one dispatch with them, median
	Candidates []TuneTiming       `json:"candidates"`      // every configuration timed, in the order tried
	Err        string             `json:"error,omitempty"` // why tuning failed: Tiles are then the defaults
	// Borrowed names the shape, at more rows, whose choice this one took
	// instead of being timed (borrowTuning); never in the tuning file.
	Borrowed string `json:"borrowed_from,omitempty"`
	Cached   bool   `json:"-"` // read from the tuning file, not timed in this process
}

// TuneTiming is one candidate's time; Err says why it could not run.
type TuneTiming struct {
	Tiles map[string]float64 `json:"tiles"`
	Nanos uint64             `json:"nanos,omitempty"`
	Err   string             `json:"error,omitempty"`
}

// tuneFile is the tuning file of one device and driver.
type tuneFile struct {
	Device  string       `json:"device"`
	UUID    string       `json:"device_uuid"` // AdapterInfo.StateKey: the UUID, unless the driver reports none
	Driver  string       `json:"driver_version"`
	Kernels string       `json:"kernels"` // kernelsDigest of the build that tuned
	Choices []TuneChoice `json:"choices"`
}

// tuneM is the rows a shape is tuned at: the batch's rows rounded up to a
// power of two, at least 64 and at most tuneMaxRows. The rows that run are
// what counts: on an H200 the tiles tuned at 8192 rows ran at 2.2 TFLOP/s
// at 65536 (GPT-2 124M's c_fc, 64 windows of 1024), where others ran at 36.
func tuneM(rows int) int {
	m := 64
	if rows > 64 {
		m = 1 << bits.Len(uint(rows-1))
	}
	return min(m, tuneMaxRows)
}

// tuneMaxRows caps tuneM: 64 windows of 1024 tokens. Timing at the batch's
// rows costs time and memory (x and out of that many rows: 0.8 GB each for
// 65536 x 3072 f32); timePipeline bounds the time (see there).
const tuneMaxRows = 65536

// tuneKey names a matmul shape for the tuner.
func tuneKey(f16 bool, M, N, K int) string {
	t := "f32"
	if f16 {
		t = "f16"
	}
	return fmt.Sprintf("%s N%d K%d M%d", t, N, K, tuneM(M))
}

// tunePath is the tuning file of the device, beside its pipeline cache; ""
// when the device persists no pipeline cache.
func tunePath(dev *wgpu.Device) string {
	p := dev.PipelineCachePath()
	if p == "" {
		return ""
	}
	info := dev.AdapterInfo()
	return filepath.Join(filepath.Dir(p), fmt.Sprintf("%s-%08x-tuning.json", info.StateKey(), info.DriverVersionRaw))
}

// loadTuning reads the device's tuning file; a missing, unreadable or foreign
// file (another device, driver or build's kernels: kernelsDigest) is no
// tuning (it is rewritten after the next tuning), and so is anything but a
// small regular file, found before it is opened (readStateFile: a FIFO
// would block the read).
func loadTuning(dev *wgpu.Device, path string) map[string]TuneChoice {
	out := map[string]TuneChoice{}
	if path == "" {
		return out
	}
	b, err := readStateFile(path, "tuning file")
	if err != nil || b == nil {
		return out
	}
	var f tuneFile
	info := dev.AdapterInfo()
	if json.Unmarshal(b, &f) != nil || f.UUID != info.StateKey() || f.Driver != strconv.FormatUint(uint64(info.DriverVersionRaw), 10) ||
		f.Kernels != kernelsDigest() {
		return out
	}
	for _, c := range f.Choices {
		if c.Shape != "" && validChoice(c) == nil {
			c.Cached, c.Borrowed = true, ""
			out[c.Shape] = c
		}
	}
	return out
}

// saveTuning writes every choice to the device's tuning file (see
// writeStateFile: atomically, and never into a FIFO or a device).
func saveTuning(dev *wgpu.Device, path string, choices map[string]TuneChoice) error {
	if path == "" {
		return nil
	}
	info := dev.AdapterInfo()
	f := tuneFile{Device: info.Name, UUID: info.StateKey(), Driver: strconv.FormatUint(uint64(info.DriverVersionRaw), 10),
		Kernels: kernelsDigest()}
	for _, c := range choices {
		f.Choices = append(f.Choices, c)
	}
	slices.SortFunc(f.Choices, func(a, b TuneChoice) int { return strings.Compare(a.Shape, b.Shape) })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := writeStateFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("tuning file %s: %w", path, err)
	}
	return nil
}

// validTiles checks a tile configuration read from a file: the keys
// matmul_shared.wgsl has, each a small positive integer.
func validTiles(t map[string]float64) error {
	if len(t) == 0 {
		return errors.New("no tiles")
	}
	for k, v := range t {
		if !slices.Contains(tileKeys, k) {
			return fmt.Errorf("unknown tile constant %q", k)
		}
		if v < 1 || v > 1024 || v != math.Trunc(v) {
			return fmt.Errorf("tile constant %s = %v", k, v)
		}
	}
	return nil
}

// How a candidate is timed (tuneTiming): one warm-up submission of one
// dispatch, then tuneRuns timed submissions of up to tuneReps dispatches
// each (fewer where one takes long: at most tuneRunNanos a submission, at
// least one dispatch); the median counts. A candidate whose warm-up takes
// tuneSkip times the best time so far is not timed further (its warm-up
// time is its time), and one whose warm-up takes tuneLongNanos or more gets
// one timed submission of one dispatch: its timestamps' resolution and
// noise are nothing beside it. So a candidate costs at most about 1 +
// tuneRuns dispatches plus tuneRuns·tuneRunNanos, one dispatch where it is
// far off the best and two where a dispatch is long. (The H200's tuning of
// GPT-2 124M at 65536 rows with the matrix units timed 51 candidates of
// 2 to 250 ms a dispatch: by their recorded times some 10.8 s of GPU time
// at the earlier 50 ms a submission and no rule for long ones, 4.9 s now,
// with the same picks from the same times.)
const (
	tuneRuns      = 3
	tuneReps      = 4
	tuneRunNanos  = 10e6
	tuneLongNanos = 20e6
	tuneSkip      = 4
)

// tuneTiming is how a candidate whose warm-up took warm nanoseconds is timed
// further, best being the fastest time so far (0 before any): runs
// submissions of reps dispatches each; none where the warm-up is its time.
func tuneTiming(warm, best uint64) (runs, reps int) {
	switch {
	case best > 0 && warm >= tuneSkip*best:
		return 0, 0
	case warm >= tuneLongNanos:
		return 1, 1
	}
	return tuneRuns, int(min(max(tuneRunNanos/max(warm, 1), 1), tuneReps))
}

// timeMatmul times candidate tile configurations of matmul_shared.wgsl at
// (M, N, K) with random operands and returns the fastest (ties: the earlier
// candidate) with every timing. A candidate the device cannot run (its limits)
// is skipped with its error; when none runs, the error says why.
func (g *GPT2) timeMatmul(M int, sh matmulShape, cands []matmulTiles) (TuneChoice, error) {
	N, K := sh.N, sh.K
	ch := TuneChoice{Shape: tuneKey(g.f16, M, N, K)}
	if len(cands) == 0 {
		return ch, fmt.Errorf("tune %s: no tile configuration fits %s", ch.Shape, g.dev.AdapterInfo().Name)
	}
	M = tuneM(M)
	bufs, params, done, err := g.tuneOperands(M, sh)
	defer done()
	if err != nil {
		return ch, err
	}
	tiles := make([]map[string]float64, len(cands))
	for i, t := range cands {
		tiles[i] = t.constants()
	}
	compilePipelines(g.matmulJobs(sh, cands))
	ran := ch.timeCandidates(tiles, g.clocked(tiles, func(i int, best uint64) (uint64, error) {
		t := cands[i]
		if err := t.fits(g.dev); err != nil {
			return 0, err
		}
		return g.timePipeline(g.matmulShared, t.constSet().with("EPI", float64(sh.epi)), bufs, params, perWorkgroup(t.groups(M, N)), best)
	}))
	if !ran {
		return ch, fmt.Errorf("tune %s: no candidate ran: %s", ch.Shape, ch.Candidates[0].Err)
	}
	return ch, nil
}

// matmulJobs are the pipelines timeMatmul times for shape sh's candidates.
func (g *GPT2) matmulJobs(sh matmulShape, cands []matmulTiles) []pipelineJob {
	jobs := make([]pipelineJob, len(cands))
	for i, t := range cands {
		jobs[i] = pipelineJob{g.matmulShared, t.constSet().with("EPI", float64(sh.epi))}
	}
	return jobs
}

// pipelineJob is a pipeline a tuner is about to time: a kernel and its
// constants.
type pipelineJob struct {
	k      *Kernel
	consts constSet
}

// compilePipelines creates the pipelines of jobs, as many at a time as Go
// has processors, before a tuner times them one by one: a driver compiles
// a pipeline on one thread, for seconds where the kernel is big (the first
// tuning on an H200 compiled some 60 pipelines one after another for more
// than 3 minutes). An error is left to the tuner's own call, which makes
// that pipeline again and reports it.
func compilePipelines(jobs []pipelineJob) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, _ = j.k.pipeline(j.consts)
		})
	}
	wg.Wait()
}

// timeCandidates times candidates tiles[0], tiles[1], ... in turn with time
// (given the fastest time so far, 0 before any ran; a candidate that cannot
// run returns why) and records each in ch.Candidates; ch's Tiles and Nanos
// are then the fastest's (ties: the earlier). It reports whether any ran.
func (ch *TuneChoice) timeCandidates(tiles []map[string]float64, time func(i int, best uint64) (uint64, error)) bool {
	best := -1
	for i, t := range tiles {
		tt := TuneTiming{Tiles: t}
		var fastest uint64
		if best >= 0 {
			fastest = ch.Candidates[best].Nanos
		}
		ns, err := time(i, fastest)
		if err != nil {
			tt.Err = err.Error()
		} else {
			tt.Nanos = ns
			if best < 0 || ns < ch.Candidates[best].Nanos {
				best = len(ch.Candidates)
			}
		}
		ch.Candidates = append(ch.Candidates, tt)
	}
	if best < 0 {
		return false
	}
	ch.Tiles, ch.Nanos = ch.Candidates[best].Tiles, ch.Candidates[best].Nanos
	return true
}

// clocked is time, the timing of tiles[i] that a tuner passes to
// timeCandidates, with the times a test set in g.tuneClock for the
// candidates that ran. g.mu is held.
func (g *GPT2) clocked(tiles []map[string]float64, time func(i int, best uint64) (uint64, error)) func(int, uint64) (uint64, error) {
	if g.tuneClock == nil {
		return time
	}
	return func(i int, best uint64) (uint64, error) {
		ns, err := time(i, best)
		if err == nil {
			ns = g.tuneClock(tiles[i])
		}
		return ns, err
	}
}

// tuneOperands makes random operands of an (M, K) x (K, N) matmul with
// bias and sh's epilogue as the matmul kernels bind them (made on the
// device: checkRun.random; the outputs zeros), and their push constants;
// done releases them. The candidates are timed with the
// epilogue the forward pass runs, since a driver compiles each pipeline
// whole (on an H200, two tiles timed with EPI_STORE at 8192 rows, at 29
// and 32 TFLOP/s, ran at 2.2 and 2.3 in the forward pass, with EPI_GELU and
// EPI_QKV at 65536 rows, where the same runs' EPI_ADD matmuls kept their
// speed: the epilogue, most likely, or the rows; both are now as the
// forward pass has them). For EPI_QKV the M
// rows are one sequence of M positions and the KV cache has room for them
// (k and v: M x N/3 f32 each); where the kernels bind no KV cache
// (kvEpilogue), there is none.
func (g *GPT2) tuneOperands(M int, sh matmulShape) (map[string]Buf, Params, func(), error) {
	N, K := sh.N, sh.K
	kvBytes, T, H, S := 16, 1, 1, 1 // the KV cache bindings, unused but by EPI_QKV
	if sh.epi == epiQKV {
		kvBytes, T, H, S = 4*M*(N/3), M, g.cfg.NHead, M
	}
	r := &checkRun{g: g}
	seed := uint32(M*31 + N*7 + K)
	out := map[string]Buf{}
	for _, op := range []struct {
		name string
		o    operand // random values; zeros where n is 0
		n    int     // bytes of zeros
	}{
		{"x", activations(seed, M*K), 0},
		{"w", weights(seed+1, K*N, g.f16), 0},
		{"bias", weights(seed+2, N, g.f16), 0},
		{"out", operand{}, 4 * M * N},
		{"kc", operand{}, kvBytes},
		{"vc", operand{}, kvBytes},
	} {
		if (op.name == "kc" || op.name == "vc") && !g.kvEpilogue() {
			continue // the kernels have no KV cache bindings here
		}
		var b *wgpu.Buffer
		var err error
		if op.o.n > 0 {
			b, err = r.random(op.name, op.o)
		} else {
			b, err = r.zeros("tune "+op.name, op.n)
		}
		if err != nil {
			return nil, nil, r.close, err
		}
		out[op.name] = Buf{Buffer: b}
	}
	return out, Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": float64(T), "H": float64(H), "S": float64(S), "pos0": 0}, r.close, nil
}

// timePipeline times kernel k with constants cs on bufs: a warm-up
// submission of one dispatch, then as tuneTiming says (best is the fastest
// time so far, 0 before any), timed with timestamp queries where the device
// has them (else by the host's clock around submit and wait); the median
// per dispatch.
func (g *GPT2) timePipeline(k *Kernel, cs constSet, bufs map[string]Buf, params Params, work extent, best uint64) (uint64, error) {
	if g.tuneTimed != nil {
		g.tuneTimed(k, cs)
	}
	pl, err := k.pipeline(cs)
	if err != nil {
		return 0, err
	}
	bg, err := pl.Bind(bufs)
	if err != nil {
		return 0, err
	}
	defer bg.Close()
	pc, err := pl.Push(params)
	if err != nil {
		return 0, err
	}
	ts := g.dev.HasFeature(wgpu.FeatureTimestampQuery)
	var times []uint64
	reps, runs := 1, 1 // the warm-up's; then tuneTiming's
	for run := 0; run < runs; run++ {
		var qs *wgpu.QuerySet
		if ts {
			if qs, err = g.dev.CreateQuerySet(&wgpu.QuerySetDescriptor{Label: "tune", Count: 2}); err != nil {
				return 0, err
			}
		}
		enc, err := g.dev.CreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "tune " + pl.Label()})
		if err != nil {
			return 0, err
		}
		if qs != nil {
			enc.WriteTimestamp(qs, 0)
		}
		pass := enc.BeginComputePass(nil)
		for range reps {
			pl.Dispatch(pass, bg, pc, pl.Groups(work))
		}
		pass.End()
		if qs != nil {
			enc.WriteTimestamp(qs, 1)
		}
		cb, err := enc.Finish()
		start := time.Now()
		if err == nil {
			var idx wgpu.SubmissionIndex
			if idx, err = g.dev.Queue().Submit(cb); err == nil {
				err = g.dev.Queue().WaitFor(idx)
			}
		}
		wall := time.Since(start)
		var ns uint64
		if err == nil && qs != nil {
			var v []uint64
			if v, err = qs.Read(0, 2); err == nil {
				ns = elapsedNanos(v[0], v[1], qs.ValidBits(), g.dev.Limits().TimestampPeriod)
			}
		} else if err == nil {
			ns = uint64(wall.Nanoseconds())
		}
		if qs != nil {
			qs.Close()
		}
		if err != nil {
			return 0, err
		}
		if run == 0 {
			more, r := tuneTiming(ns, best)
			if more == 0 {
				return ns, nil
			}
			runs, reps = 1+more, r
			continue
		}
		times = append(times, ns/uint64(reps))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// SetTuning sets when the model tunes its matmuls (TuneAuto by default); it
// applies to the batches submitted after it.
func (g *GPT2) SetTuning(mode TuneMode) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tuneMode = mode
	if mode == TuneRedo {
		g.tuneRedone = map[string]bool{}
	}
}

// SetTuneEachSize makes a batch of fewer rows than one already tuned in this
// process get a round of tuning at its own rows, as the first batch of any
// size does, instead of borrowing that batch's choices (borrowTuning): for
// benchmarks, where each batch size is measured as tuned for itself and the
// order of the sizes must not matter.
func (g *GPT2) SetTuneEachSize(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tuneEachSize = on
}

// SetTuneNotice sets f to be told when the autotuner first times kernels in
// this process: on a device and driver whose tuning file lacks the batch's
// shapes, the first batch waits for it (seconds; minutes where the driver
// compiles slowly, such as NVIDIA's with a cold shader cache). Then, as it
// takes each further shape, f gets a short line with the time so far, so
// that a long first run shows it is moving. nil gives no notice.
func (g *GPT2) SetTuneNotice(f func(msg string)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tuneNote = f
}

// noteTuning gives SetTuneNotice's notices as the autotuner is about to time
// key's candidates: the first one says what and why, the later ones name
// the shape. g.mu is held.
func (g *GPT2) noteTuning(key string) {
	if g.tuneNote == nil {
		return
	}
	name := g.dev.AdapterInfo().Name
	if !g.tuneNoted.IsZero() {
		g.tuneNote(fmt.Sprintf("wgpu-eval: tuning %s on %s (%s so far)", key, name, time.Since(g.tuneNoted).Round(time.Second)))
		return
	}
	g.tuneNoted = time.Now()
	kept := "the choices are kept in " + g.tuneFile
	if g.tuneFile == "" {
		kept = "no tuning file to keep them in"
	}
	g.tuneNote(fmt.Sprintf("wgpu-eval: tuning the kernels for %s, starting with %s: once per device, driver and batch shape (%s)",
		name, key, kept))
}

// Tuning is the autotuner's choice for every matmul shape the model has run,
// by shape (see TuneChoice.Shape), sorted; empty before the first batch, on
// software adapters in TuneAuto, and with TuneOff.
func (g *GPT2) Tuning() []TuneChoice {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []TuneChoice
	for _, c := range g.tuned {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b TuneChoice) int { return strings.Compare(a.Shape, b.Shape) })
	return out
}

// MatmulTiles names the tile configuration of matmul_shared.wgsl by shape
// (the tuned ones, else "default" with the default's), for provenance; nil
// for the software kernels. With the matrix units in use it names
// matmul_coop.wgsl's tiling as "coop", the tilings the autotuner picked
// by their keys ("coop ...", "coop-head ..."), and by its "attn ..." keys
// the attention kernel it picked: attention_shared.wgsl, or
// attention_coop.wgsl with its tiling (as profiles name it).
func (g *GPT2) MatmulTiles() map[string]string {
	if !g.sharedMatmul {
		return nil
	}
	g.mu.Lock()
	ck := g.coop
	g.mu.Unlock()
	if ck != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		out := ck.tilings()
		for k, a := range g.attnPicks {
			out[k] = "attention_shared.wgsl"
			if a != nil {
				out[k] = attnCoopLabel(a.tiles)
			}
		}
		return out
	}
	out := map[string]string{"default": g.tiles.String()}
	for _, c := range g.Tuning() {
		out[c.Shape] = tilesOf(c.Tiles).String()
	}
	return out
}

// tilesFor is the tile configuration of an (M, K) x (K, N) matmul: the tuned
// one for the shape, else the default for the device. g.mu is held.
func (g *GPT2) tilesFor(M, K, N int) matmulTiles {
	if c, ok := g.tuned[tuneKey(g.f16, M, N, K)]; ok {
		return tilesOf(c.Tiles)
	}
	return g.tiles
}

// matmulShape is one of the model's weight matmuls: (K, N) and the epilogue
// the forward pass runs it with.
type matmulShape struct {
	K, N int
	epi  epilogue
}

// matmulShapes are the model's four weight matmuls per block: GPT-2's c_attn
// (the KV cache write), attn.c_proj and mlp.c_proj (the residual add), c_fc
// (GELU); the Llama family's q|k|v, o_proj and down_proj (the residual add),
// gate|up (SwiGLU).
func (g *GPT2) matmulShapes() []matmulShape {
	C, I := g.cfg.NEmbd, g.cfg.Inner()
	if g.llama != nil {
		w := g.widths()
		return []matmulShape{{C, w.qkv, epiStore}, {w.att, C, epiAdd}, {C, 2 * w.fc, epiSwiGLU}, {w.fc, C, epiAdd}}
	}
	qkv := epiQKV
	if !g.kvEpilogue() { // c_attn stores q, k and v; kv_write.wgsl follows
		qkv = epiStore
	}
	return []matmulShape{{C, 3 * C, qkv}, {C, C, epiAdd}, {C, I, g.geluEpilogue()}, {I, C, epiAdd}}
}

// kvEpilogue reports whether the weight matmuls take EPI_QKV and bind the
// KV cache: matmul_shared.wgsl (and matmul_coop.wgsl, of the same includes)
// on a device with the storage buffers for it (kvEpilogueBuffers).
func (g *GPT2) kvEpilogue() bool { return g.matmulShared != nil && g.matmulShared.BindsKV() }

// geluEpilogue is c_fc's epilogue: GPT-2's gelu_new, or the exact GELU
// where the config says activation_function "gelu".
func (g *GPT2) geluEpilogue() epilogue {
	if g.cfg.ExactGELU {
		return epiGELUErf
	}
	return epiGELU
}

// ensureTuned makes sure every weight matmul of a batch of rows rows has its
// tiles: from memory, from the tuning file, or timed now (and the file
// rewritten). Tuning never fails a batch: a shape whose timing fails (no
// memory for its operands, say) keeps the default tiles, with the reason in
// its TuneChoice.Err, and is not timed again in this process; a tuning
// file that cannot be written is only slower next time (keepTuning says
// so). g.mu is held.
func (g *GPT2) ensureTuned(rows int) {
	if g.coop != nil {
		g.ensureCoopTuned(rows)
		return
	}
	if !g.sharedMatmul || g.tuneMode == TuneOff || (g.tuneMode == TuneAuto && !g.autoTune) {
		return
	}
	if g.tuned == nil {
		g.tuned = map[string]TuneChoice{}
	}
	var file map[string]TuneChoice
	path := g.tuneFile
	changed := false
	for _, sh := range g.matmulShapes() {
		K, N := sh.K, sh.N
		if K%4 != 0 || N%4 != 0 {
			continue // matmul.wgsl serves it
		}
		key := tuneKey(g.f16, rows, N, K)
		if _, ok := g.tuned[key]; ok && (g.tuneMode != TuneRedo || g.tuneRedone[key]) {
			continue
		}
		if g.tuneMode == TuneAuto {
			if file == nil {
				file = loadTuning(g.dev, path)
			}
			if c, ok := file[key]; ok && tilesOf(c.Tiles).fits(g.dev) == nil {
				g.tuned[key] = c
				continue
			}
			if c, ok := g.borrowTuning(key, rows, func(m int) string { return tuneKey(g.f16, m, N, K) }); ok {
				g.tuned[key] = c
				continue
			}
		}
		g.noteTuning(key)
		c, err := g.timeMatmul(rows, sh, g.matmulCandidatesFit())
		if err != nil {
			c.Tiles, c.Err = g.tiles.constants(), err.Error()
		}
		g.tuned[key] = c
		if g.tuneRedone != nil {
			g.tuneRedone[key] = true
		}
		changed = true
	}
	if changed && path != "" {
		if file == nil {
			file = loadTuning(g.dev, path)
		}
		for k, c := range g.tuned {
			if c.Borrowed == "" {
				file[k] = c
			}
		}
		for k, c := range file {
			if c.Err != "" {
				delete(file, k) // a failure is retried by the next process, not kept
			}
		}
		g.keepTuning(file)
	}
}

// borrowTuning is, for shape key at rows that neither memory nor the
// tuning file has, the choice this process already has for the same shape
// at the fewest rows above (keyAt names the shape at a power of two of
// rows; a choice timed or read, not itself borrowed, whose timing did not
// fail), marked Borrowed: a batch smaller than one already run, a run's
// last, is not worth a round of tuning of its own (at 16384 rows about a
// quarter of one at 65536: on an H200 with the matrix units some 1.2 s of
// GPU time, for one batch of 80 ms). TuneAuto only (TuneRedo times what it
// is asked to), and not after SetTuneEachSize; borrowed choices stay out
// of the tuning file, so a later run whose batches are all of those rows
// tunes them. g.mu is held.
func (g *GPT2) borrowTuning(key string, rows int, keyAt func(M int) string) (TuneChoice, bool) {
	if g.tuneMode != TuneAuto || g.tuneEachSize {
		return TuneChoice{}, false
	}
	for m := 2 * tuneM(rows); m <= tuneMaxRows; m *= 2 {
		if c, ok := g.tuned[keyAt(m)]; ok && c.Borrowed == "" && c.Err == "" {
			return TuneChoice{Shape: key, Tiles: c.Tiles, Borrowed: c.Shape}, true
		}
	}
	return TuneChoice{}, false
}

// matmulCandidatesFit are the autotuner's matmul_shared.wgsl candidates
// (matmulCandidates, or a test's) that fit the device.
func (g *GPT2) matmulCandidatesFit() []matmulTiles {
	all := matmulCandidates
	if g.tuneCands != nil {
		all = g.tuneCands
	}
	var cands []matmulTiles
	for _, t := range all {
		if t.fits(g.dev) == nil {
			cands = append(cands, t)
		}
	}
	return cands
}

// keepTuning writes choices to the tuning file (the autotuner's choices
// of every process on the device, best effort: without the file the next
// run tunes again). The first write that fails in this process is told to
// SetTuneNotice's function, since every later run would pay the tuning
// again: a read-only or full cache folder, say. g.mu is held.
func (g *GPT2) keepTuning(choices map[string]TuneChoice) {
	err := saveTuning(g.dev, g.tuneFile, choices)
	if err == nil || g.tuneSaveFailed {
		return
	}
	g.tuneSaveFailed = true
	if g.tuneNote != nil {
		g.tuneNote(fmt.Sprintf("wgpu-eval: warning: the autotuner's choices for %s are not kept (%v): the next run tunes again",
			g.dev.AdapterInfo().Name, err))
	}
}

// TilesName spells matmul_shared.wgsl's tile constants as BMxBNxBK/TMxTN,
// and a matmul_coop.wgsl tiling (a choice keyed "coop ...") as
// SGMxSGN*FMxFN/BK/EC/ST (the LM head's with /NT before /ST, the matmul's
// with /WT1 after it for w's n-major tile): subgroups times result matrices
// per subgroup, step, epilogue chunk, stages.
func TilesName(c map[string]float64) string {
	if _, ok := c["FM"]; ok {
		return coopTilesName(c)
	}
	return tilesOf(c).String()
}

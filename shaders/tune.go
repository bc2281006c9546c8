package shaders

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
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
	Cached     bool               `json:"-"`               // read from the tuning file, not timed in this process
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
	UUID    string       `json:"device_uuid"`
	Driver  string       `json:"driver_version"`
	Choices []TuneChoice `json:"choices"`
}

// tuneM is the rows a shape is tuned at: the batch's rows rounded up to a
// power of two, at least 64 and at most 8192 (more rows change nothing but
// the number of waves).
func tuneM(rows int) int {
	m := 64
	if rows > 64 {
		m = 1 << bits.Len(uint(rows-1))
	}
	return min(m, 8192)
}

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
	return filepath.Join(filepath.Dir(p), fmt.Sprintf("%s-%08x-tuning.json", info.DeviceUUID, info.DriverVersionRaw))
}

// loadTuning reads the device's tuning file; a missing, unreadable or foreign
// file is no tuning (it is rewritten after the next tuning).
func loadTuning(dev *wgpu.Device, path string) map[string]TuneChoice {
	out := map[string]TuneChoice{}
	if path == "" {
		return out
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 1<<20 {
		return out
	}
	var f tuneFile
	info := dev.AdapterInfo()
	if json.Unmarshal(b, &f) != nil || f.UUID != info.DeviceUUID || f.Driver != strconv.FormatUint(uint64(info.DriverVersionRaw), 10) {
		return out
	}
	for _, c := range f.Choices {
		if c.Shape != "" && (validTiles(c.Tiles) == nil || validAttnChoice(c)) { // attention's: attention_tune.go
			c.Cached = true
			out[c.Shape] = c
		}
	}
	return out
}

// saveTuning writes every choice to the device's tuning file.
func saveTuning(dev *wgpu.Device, path string, choices map[string]TuneChoice) error {
	if path == "" {
		return nil
	}
	info := dev.AdapterInfo()
	f := tuneFile{Device: info.Name, UUID: info.DeviceUUID, Driver: strconv.FormatUint(uint64(info.DriverVersionRaw), 10)}
	for _, c := range choices {
		f.Choices = append(f.Choices, c)
	}
	slices.SortFunc(f.Choices, func(a, b TuneChoice) int { return strings.Compare(a.Shape, b.Shape) })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("tuning file: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("tuning file: %w", err)
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

// tuneRuns is how many timed submissions a candidate gets (after one
// warm-up), each of tuneReps dispatches; the median counts.
const (
	tuneRuns = 3
	tuneReps = 4
)

// timeMatmul times candidate tile configurations of matmul_shared.wgsl at
// (M, N, K) with random operands and returns the fastest (ties: the earlier
// candidate) with every timing. A candidate the device cannot run (its limits)
// is skipped with its error; when none runs, the error says why.
func (g *GPT2) timeMatmul(M, N, K int, cands []matmulTiles) (TuneChoice, error) {
	ch := TuneChoice{Shape: tuneKey(g.f16, M, N, K)}
	if len(cands) == 0 {
		return ch, fmt.Errorf("tune %s: no tile configuration fits %s", ch.Shape, g.dev.AdapterInfo().Name)
	}
	d := g.dev
	M = tuneM(M)
	var bufs []*wgpu.Buffer
	defer func() {
		for _, b := range bufs {
			b.Close()
		}
	}()
	mk := func(label string, data []byte) (*wgpu.Buffer, error) {
		b, err := d.CreateBuffer(&wgpu.BufferDescriptor{Label: "tune " + label, Size: uint64(max(len(data), 16)),
			Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopyDst})
		if err == nil {
			bufs = append(bufs, b)
			err = d.Queue().WriteBuffer(b, 0, data)
		}
		return b, err
	}
	seed := uint32(M*31 + N*7 + K)
	x, err := mk("x", randomF32(seed, M*K))
	if err != nil {
		return ch, err
	}
	w, err := mk("w", g.randomWeights(seed+1, K*N))
	if err != nil {
		return ch, err
	}
	bias, err := mk("bias", g.randomWeights(seed+2, N))
	if err != nil {
		return ch, err
	}
	out, err := mk("out", make([]byte, 4*M*N))
	if err != nil {
		return ch, err
	}
	kv, err := mk("kv", make([]byte, 16)) // the KV cache bindings, unused by EPI 0
	if err != nil {
		return ch, err
	}
	best := -1
	for _, t := range cands {
		tt := TuneTiming{Tiles: t.constants()}
		ns, err := g.timeOne(t, map[string]Buf{"x": {Buffer: x}, "w": {Buffer: w}, "bias": {Buffer: bias}, "out": {Buffer: out}, "kc": {Buffer: kv}, "vc": {Buffer: kv}},
			Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0}, M, N)
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
		return ch, fmt.Errorf("tune %s: no candidate ran: %s", ch.Shape, ch.Candidates[0].Err)
	}
	ch.Tiles, ch.Nanos = ch.Candidates[best].Tiles, ch.Candidates[best].Nanos
	return ch, nil
}

// timeOne times one tile configuration: a warm-up submission, then tuneRuns
// submissions of tuneReps dispatches each, timed with timestamp queries where
// the device has them (else by the host's clock around submit and wait); the
// median per dispatch.
func (g *GPT2) timeOne(t matmulTiles, bufs map[string]Buf, params Params, M, N int) (uint64, error) {
	if err := t.fits(g.dev); err != nil {
		return 0, err
	}
	pl, err := g.matmulShared.Pipeline(t.constants())
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
	for run := range tuneRuns + 1 {
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
		for range tuneReps {
			pl.Dispatch(pass, bg, pc, grid(t.groups(M, N)))
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
			if v, err = qs.Read(0, 2); err == nil && v[1] > v[0] {
				ns = v[1] - v[0]
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
		if run > 0 {
			times = append(times, ns/tuneReps)
		}
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// randomF32 is n uniform values in [-1, 1) as f32 bytes, from a fixed seed
// (never zeros: they can run faster than real data).
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
// matmul_coop.wgsl's tiling as "coop".
func (g *GPT2) MatmulTiles() map[string]string {
	if !g.sharedMatmul {
		return nil
	}
	g.mu.Lock()
	ck := g.coop
	g.mu.Unlock()
	if ck != nil {
		return map[string]string{"coop": ck.mm.String()}
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

// matmulShapes are the (K, N) of the model's four weight matmuls per block:
// GPT-2's c_attn, attn.c_proj, c_fc, mlp.c_proj; the Llama family's q|k|v,
// o_proj, gate|up, down_proj.
func (g *GPT2) matmulShapes() [][2]int {
	C := g.cfg.NEmbd
	if g.llama != nil {
		w := g.widths()
		return [][2]int{{C, w.qkv}, {w.att, C}, {C, 2 * w.fc}, {w.fc, C}}
	}
	return [][2]int{{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}}
}

// ensureTuned makes sure every weight matmul of a batch of rows rows has its
// tiles: from memory, from the tuning file, or timed now (and the file
// rewritten). Tuning never fails a batch: a shape whose timing fails (no
// memory for its operands, say) keeps the default tiles, with the reason in
// its TuneChoice.Err, and is not timed again; a tuning file that cannot be
// written is only slower next time. g.mu is held.
func (g *GPT2) ensureTuned(rows int) {
	if !g.sharedMatmul || g.coop != nil || g.tuneMode == TuneOff || (g.tuneMode == TuneAuto && !g.autoTune) {
		return
	}
	if g.tuned == nil {
		g.tuned = map[string]TuneChoice{}
	}
	var file map[string]TuneChoice
	path := g.tuneFile
	changed := false
	for _, kn := range g.matmulShapes() {
		K, N := kn[0], kn[1]
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
		}
		var cands []matmulTiles
		all := matmulCandidates
		if g.tuneCands != nil {
			all = g.tuneCands
		}
		for _, t := range all {
			if t.fits(g.dev) == nil {
				cands = append(cands, t)
			}
		}
		c, err := g.timeMatmul(rows, N, K, cands)
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
			file[k] = c
		}
		for k, c := range file {
			if c.Err != "" {
				delete(file, k) // a failure is retried by the next process, not kept
			}
		}
		_ = saveTuning(g.dev, path, file) // best effort: without the file the next run tunes again
	}
}

// TilesName spells matmul_shared.wgsl's tile constants as BMxBNxBK/TMxTN.
func TilesName(c map[string]float64) string { return tilesOf(c).String() }

package shaders

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// MatrixUnitsStatus says whether a GPT2 runs on the device's matrix units
// and why, for provenance and for the user.
type MatrixUnitsStatus struct {
	Mode   MatrixUnits `json:"mode"`             // the choice (SetMatrixUnits, $WGPU_EVAL_MATRIX_UNITS)
	Used   bool        `json:"used"`             // matmul_coop.wgsl and lmhead_loss_coop.wgsl run
	Config string      `json:"config,omitempty"` // the subgroup-matrix configuration, M x N x K, when one was tried
	Reason string      `json:"reason"`           // why they run or not
	// Lowered: the device has no matrix units enabled (a test forced the
	// kernels there), so the compiler lowered the subgroup matrices to
	// invocation code.
	Lowered bool `json:"lowered,omitempty"`
	// Cached: the self-check's verdict came from the verdict file of the
	// device and driver, not from a check in this process.
	Cached bool `json:"cached,omitempty"`
	// Attention names the attention kernel the matrix units bring
	// (attention_coop.wgsl, or why attention_shared.wgsl stays).
	Attention string `json:"attention,omitempty"`
	// Warning is one line for the user when the self-check turned the
	// matrix units off (or the verdict file was unreadable); "" otherwise.
	Warning string `json:"warning,omitempty"`
}

// SetMatrixUnits chooses whether the model multiplies on the device's
// matrix units (the default is $WGPU_EVAL_MATRIX_UNITS's, else auto) and
// decides now: with MatrixUnitsAuto or MatrixUnitsOn, on a device that
// offers a configuration the kernels take, the first decision for a device
// and driver runs the self-check (see the package doc) and records its
// verdict beside the pipeline cache. With MatrixUnitsOn, the error says why
// the model cannot use them. MatrixUnits reports the outcome.
func (g *GPT2) SetMatrixUnits(m MatrixUnits) error {
	m, err := ParseMatrixUnits(string(m))
	if err != nil {
		return fmt.Errorf("gpu model: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mxMode, g.mx, g.coop, g.mxErr = m, nil, nil, nil
	return g.ensureMatrixUnits()
}

// MatrixUnits reports whether the model runs on the matrix units and why,
// deciding first if no batch or SetMatrixUnits has yet.
func (g *GPT2) MatrixUnits() MatrixUnitsStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ensureMatrixUnits()
	return *g.mx
}

// MatrixUnitsUsed reports whether the model runs on the matrix units.
func (g *GPT2) MatrixUnitsUsed() bool { return g.MatrixUnits().Used }

// ensureMatrixUnits decides once (again after SetMatrixUnits) whether the
// weight matmuls and the LM head run on the matrix units. g.mu is held.
func (g *GPT2) ensureMatrixUnits() error {
	if g.mx != nil {
		return g.mxErr
	}
	start := time.Now()
	st, ck, err := g.decideMatrixUnits()
	g.setup.Check += time.Since(start)
	g.mx, g.coop, g.mxErr = &st, ck, err
	return err
}

// matrixConfig is the configuration the coop kernels would use on g's
// device, or why there is none.
func (g *GPT2) matrixConfig() (MatrixConfig, string) {
	switch {
	case !g.sharedMatmul:
		return MatrixConfig{}, "the software kernel set runs on this device (a CPU implementation of Vulkan has no matrix units)"
	case !g.f16:
		return MatrixConfig{}, "the weights are f32; the matrix units multiply f16"
	case !g.dev.HasFeature(wgpu.FeatureSubgroups):
		return MatrixConfig{}, "the device has no subgroup operations enabled"
	case !subgroupShuffles(g.dev): // attention_coop.wgsl shuffles
		return MatrixConfig{}, "the device offers no subgroup shuffles in compute shaders"
	case g.coopForce != nil:
		return *g.coopForce, ""
	}
	cfg, ok := pickMatrixConfig(deviceMatrixConfigs(g.dev))
	if !ok {
		return MatrixConfig{}, fmt.Sprintf("the device offers no f16 x f16 -> f32 subgroup-matrix configuration of 8 or 16 (VK_KHR_cooperative_matrix absent, or %s not enabled)", wgpu.FeatureCooperativeMatrix)
	}
	return cfg, ""
}

// decideMatrixUnits is ensureMatrixUnits' decision: the coop kernels to use
// (nil for SIMT), the status, and for MatrixUnitsOn the error when they
// cannot be used.
func (g *GPT2) decideMatrixUnits() (MatrixUnitsStatus, *coopKernels, error) {
	st := MatrixUnitsStatus{Mode: g.mxMode}
	if g.mxMode == MatrixUnitsOff {
		st.Reason = "off by choice"
		return st, nil, nil
	}
	cfg, why := g.matrixConfig()
	var ck *coopKernels
	if why == "" {
		st.Config, st.Lowered = cfg.String(), !g.dev.HasFeature(wgpu.FeatureCooperativeMatrix)
		var err error
		if ck, err = g.newCoopKernels(cfg); err != nil {
			why = "their kernels cannot run here: " + err.Error()
		} else if g.loopLimit > 0 {
			why = g.coopLoopsFit(ck)
		}
	}
	if why == "" {
		v, cached, warn := g.verdict(ck)
		st.Cached, st.Warning = cached, warn
		if !v.OK {
			why = "they failed the self-check against the SIMT kernels: " + v.Detail
			fileWarn := st.Warning
			st.Warning = fmt.Sprintf("wgpu-eval: not using the matrix units of %s (%s): %s; the SIMT kernels run instead (%s)",
				g.dev.AdapterInfo().Name, cfg, why, verdictHint(g.coopFile))
			if fileWarn != "" {
				st.Warning += " (" + strings.TrimPrefix(fileWarn, "wgpu-eval: ") + ")"
			}
			ck = nil
		} else {
			st.Used, st.Reason = true, "passed the self-check: "+v.Detail
			st.Attention = ck.attnStatus()
		}
	}
	if why != "" {
		st.Reason = why
		if g.mxMode == MatrixUnitsOn {
			return st, nil, fmt.Errorf("gpu model: matrix units required (%s), but %s", MatrixUnitsOn, why)
		}
	}
	return st, ck, nil
}

// coopLoopsFit says why the lowered coop kernels would run past the
// adapter's shader loop limit (see fitLoopLimit) on the model's shapes or
// the self-check's, "" when they fit.
func (g *GPT2) coopLoopsFit(ck *coopKernels) string {
	ks := []int{checkK}
	for _, sh := range g.matmulShapes() {
		ks = append(ks, sh.K)
	}
	for _, k := range ks {
		if n := ck.mm.loweredLoops(k, 0); n > coopLoopBudget {
			return fmt.Sprintf("lowered, matmul_coop.wgsl would loop some %d times an invocation at K = %d, past %s's limit", n, k, g.dev.AdapterInfo().Name)
		}
	}
	for _, cv := range [][2]int{{checkC, checkV}, {g.cfg.NEmbd, g.cfg.VocabSize}} {
		if n := ck.head.loweredLoops(cv[0], ceilDiv(cv[1], ck.head.vt)); n > coopLoopBudget {
			return fmt.Sprintf("lowered, lmhead_loss_coop.wgsl would loop some %d times an invocation at C = %d, past %s's limit", n, cv[0], g.dev.AdapterInfo().Name)
		}
	}
	return ""
}

// verdictHint says where a verdict is kept, for the warning.
func verdictHint(path string) string {
	if path == "" {
		return "checked again by the next process"
	}
	return "verdict kept in " + path + "; delete it to check again"
}

// coopVerdict is the self-check's outcome for one kernel text and device.
type coopVerdict struct {
	Key    string `json:"key"` // configuration, tiles and a hash of the kernels' text
	OK     bool   `json:"ok"`
	Detail string `json:"detail"` // the largest differences, against their bounds
}

// coopVerdictFile is the file of verdicts of one device and driver.
type coopVerdictFile struct {
	Device   string        `json:"device"`
	UUID     string        `json:"device_uuid"` // AdapterInfo.StateKey: the UUID, unless the driver reports none
	Driver   string        `json:"driver_version"`
	Kernels  string        `json:"kernels"` // kernelsDigest of the build that checked
	Verdicts []coopVerdict `json:"verdicts"`
}

// coopPath is the device's file of self-check verdicts, beside its tuning
// file; "" when the device persists no pipeline cache.
func coopPath(dev *wgpu.Device) string {
	p := tunePath(dev)
	if p == "" {
		return ""
	}
	return strings.TrimSuffix(p, "-tuning.json") + "-matrix-units.json"
}

// key names what a verdict is about: the configuration, the tilings and the
// kernels' text (a new release's kernels are checked again).
func (ck *coopKernels) key() string {
	h := sha256.New()
	h.Write([]byte(ck.matmul.src.Text))
	h.Write([]byte(ck.lmHd.src.Text))
	h.Write([]byte(ck.toF16.src.Text))
	if ck.attn != nil {
		h.Write([]byte(ck.attn.k.src.Text))
	}
	return fmt.Sprintf("%s | %v | %v | %s", ck.cfg, ck.mm, ck.head, hex.EncodeToString(h.Sum(nil))[:16])
}

// verdict is the self-check's outcome for ck: from the device's verdict
// file when it has one for ck's key (cached), else from a check now, which
// is then added to the file. A file that cannot be read as one is ignored
// with a warning and rewritten; one that cannot be written only costs a
// check in the next process.
func (g *GPT2) verdict(ck *coopKernels) (v coopVerdict, cached bool, warning string) {
	return g.verdictFor(ck.key(), func(r *checkRun) (bool, string, error) { return r.selfCheck(ck) })
}

// verdictFor is verdict for any key and check: from the verdict file, else
// from check now (a checkRun of its own), added to the file.
func (g *GPT2) verdictFor(key string, check func(r *checkRun) (bool, string, error)) (v coopVerdict, cached bool, warning string) {
	f, err := loadVerdicts(g.dev, g.coopFile)
	if err != nil {
		warning = fmt.Sprintf("wgpu-eval: ignoring %v; checking the matrix units again", err)
	}
	if i := slices.IndexFunc(f.Verdicts, func(v coopVerdict) bool { return v.Key == key }); i >= 0 {
		return f.Verdicts[i], true, warning
	}
	g.coopChecks++
	v = coopVerdict{Key: key}
	// A dry run first, which only names the check's pipelines, so that they
	// compile on every core at once rather than one after another as the
	// check dispatches them: the first check on a device compiles some
	// seven, where a driver compiling from a cold shader cache (NVIDIA's)
	// takes seconds for each of the big ones.
	var jobs []pipelineJob
	_, _, _ = check(&checkRun{g: g, jobs: &jobs})
	compilePipelines(jobs)
	r := &checkRun{g: g}
	v.OK, v.Detail, err = check(r)
	r.close()
	if err != nil { // the check could not run: no verdict to keep
		v.OK, v.Detail = false, err.Error()
		return v, false, warning
	}
	f.Verdicts = append(slices.DeleteFunc(f.Verdicts, func(o coopVerdict) bool { return o.Key == key }), v)
	_ = saveVerdicts(g.dev, g.coopFile, f) // best effort
	return v, false, warning
}

// loadVerdicts reads the verdict file at path. A missing file (or path "")
// is no verdicts; one that is not a verdict file of this device and driver
// is an error naming it, with no verdicts.
func loadVerdicts(dev *wgpu.Device, path string) (coopVerdictFile, error) {
	info := dev.AdapterInfo()
	empty := coopVerdictFile{Device: info.Name, UUID: info.StateKey(), Driver: strconv.FormatUint(uint64(info.DriverVersionRaw), 10)}
	if path == "" {
		return empty, nil
	}
	empty.Kernels = kernelsDigest()
	// A verdict file is small and regular: anything else (a FIFO, which
	// would block the read, a device, a huge file) is refused before it is
	// opened (readStateFile).
	b, err := readStateFile(path, "verdict file")
	if err != nil {
		return empty, fmt.Errorf("matrix-unit verdicts: %w", err)
	}
	if b == nil {
		return empty, nil
	}
	var f coopVerdictFile
	if err := json.Unmarshal(b, &f); err != nil {
		return empty, fmt.Errorf("matrix-unit verdicts %s: %w", path, err)
	}
	if f.UUID != empty.UUID || f.Driver != empty.Driver {
		return empty, fmt.Errorf("matrix-unit verdicts %s: for device %q driver %s, not this one", path, f.UUID, f.Driver)
	}
	if f.Kernels != empty.Kernels { // another build's code: checked again, without a warning
		return empty, nil
	}
	f.Device = empty.Device
	return f, nil
}

// saveVerdicts writes f to path atomically (writeStateFile: never into a
// FIFO or a device).
func saveVerdicts(dev *wgpu.Device, path string, f coopVerdictFile) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := writeStateFile(path, append(b, '\n')); err != nil {
		return fmt.Errorf("matrix-unit verdicts %s: %w", path, err)
	}
	return nil
}

// f16Unit is the unit roundoff of f16 (round to nearest): |fl16(x) - x| <=
// 2⁻¹¹·|x| within its normal range.
const f16Unit = 1.0 / 2048

// accumSlack is the bound's allowance per product for the f32 accumulation
// of both kernels, in units of Σ|x·w|: each adds K products in f32
// (rounding at most K·2⁻²⁴ relative to Σ|x·w| in any order), and matrix
// units may align their partial sums with truncation (twice that again).
const accumSlack = 4.0 / (1 << 24)

// The self-check's shapes: none a multiple of the tiles, several steps
// along K and C, the LM head over several tiles of ids. Small enough that
// the lowered kernels stay within lavapipe's loop limit (65535 iterations
// an invocation), where the tests run the check: the lowered LM head loops
// some 2300 times per tile and step of BK.
const (
	checkM, checkK, checkN = 77, 136, 84
	checkP, checkC, checkV = 37, 56, 300
)

// selfCheck runs a matmul, an LM-head and an attention case (attnCheck)
// with the coop kernels and with the SIMT kernels (matmul_shared.wgsl,
// lmhead_loss_shared.wgsl, attention_shared.wgsl) on r's buffers, with
// random inputs, and compares them against a bound derived from the inputs:
// the coop kernels round the activations to f16 (relative error at most
// 2⁻¹¹ each; the f16 weights are exact in both), so an output
// y = Σ x_k·w_k may move by at most 2⁻¹¹·Σ|x_k·w_k|, plus accumSlack of it
// for the f32 sums; a logsumexp moves by at most the largest of its logits'
// moves (plus V·2⁻²⁴ for the f32 exps and sums). ok is false on a
// difference beyond that, with the worst one in detail; err when the check
// could not run.
func (r *checkRun) selfCheck(ck *coopKernels) (ok bool, detail string, err error) {
	okM, dm, err := r.matmulCase(ck.matmulVariant(checkK, checkN))
	if err != nil {
		return false, "", fmt.Errorf("matrix-unit self-check, matmul: %w", err)
	}
	okL, dl, err := r.headCase(ck.lmHd, ck.head, ck.toF16)
	if err != nil {
		return false, "", fmt.Errorf("matrix-unit self-check, LM head: %w", err)
	}
	okA, da, err := r.attnCheck(ck)
	if err != nil {
		return false, "", fmt.Errorf("matrix-unit self-check, attention: %w", err)
	}
	return okM && okL && okA, dm + "; " + dl + da, nil
}

// checkRun holds the self-check's buffers and bind groups until it ends.
type checkRun struct {
	g      *GPT2
	closer []interface{ Close() error }
	// jobs, when not nil, makes the run a dry one that only names its
	// pipelines: dispatch adds its kernel and constants here and does
	// nothing else, buffer makes none, read gives zeros (verdictFor).
	jobs *[]pipelineJob
}

func (r *checkRun) close() {
	for _, c := range slices.Backward(r.closer) {
		c.Close()
	}
}

// buffer makes a storage buffer holding data (zeros past it: at least 16
// bytes, a multiple of 16).
func (r *checkRun) buffer(label string, data []byte) (*wgpu.Buffer, error) {
	if r.jobs != nil {
		return nil, nil
	}
	if pad := len(data) % 4; pad != 0 { // buffers take whole words
		data = append(data[:len(data):len(data)], make([]byte, 4-pad)...)
	}
	return r.holding("self-check "+label, len(data), data)
}

// dispatch runs one dispatch of k and waits for it.
func (r *checkRun) dispatch(k *Kernel, cs constSet, bufs map[string]Buf, params Params, work extent) error {
	if r.jobs != nil {
		*r.jobs = append(*r.jobs, pipelineJob{k, cs})
		return nil
	}
	if r.g.checkDispatched != nil {
		r.g.checkDispatched(k, cs)
	}
	pl, err := k.pipeline(cs)
	if err != nil {
		return err
	}
	bg, err := pl.Bind(bufs)
	if err != nil {
		return err
	}
	r.closer = append(r.closer, bg)
	pc, err := pl.Push(params)
	if err != nil {
		return err
	}
	enc, err := r.g.dev.CreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "self-check " + pl.Label()})
	if err != nil {
		return err
	}
	pass := enc.BeginComputePass(nil)
	pl.Dispatch(pass, bg, pc, pl.Groups(work))
	pass.End()
	cb, err := enc.Finish()
	if err != nil {
		return err
	}
	idx, err := r.g.dev.Queue().Submit(cb)
	if err != nil {
		return err
	}
	return r.g.dev.Queue().WaitFor(idx)
}

// read is the first n f32 values of b.
func (r *checkRun) read(b *wgpu.Buffer, n int) ([]float32, error) {
	if r.jobs != nil {
		return make([]float32, n), nil
	}
	raw := make([]byte, 4*n)
	if err := r.g.dev.Queue().ReadBuffer(b, 0, raw); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// checkData is n values uniform in [-scale, scale) from seed, as f32 and as
// the f16 the device gets where f16 (each value rounded to f16 first, so
// that both are the same numbers).
func checkData(seed uint64, n int, scale float64, f16 bool) ([]float64, []byte) {
	rng := rand.New(rand.NewPCG(seed, 0x5e1fc4ec))
	vals := make([]float64, n)
	var b []byte
	for i := range vals {
		v := float32((2*rng.Float64() - 1) * scale)
		if f16 {
			h := float16.Fromfloat32(v)
			v = h.Float32()
			b = binary.LittleEndian.AppendUint16(b, h.Bits())
		} else {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		vals[i] = float64(v)
	}
	return vals, b
}

// corrupt passes the coop results of a case to the test hook, if any.
func (r *checkRun) corrupt(kind string, v []float32) {
	if r.g.coopCorrupt != nil && r.jobs == nil {
		r.g.coopCorrupt(kind, v)
	}
}

// worst tracks the largest difference of a case relative to its bound.
type worst struct {
	ratio, diff, bound float64
	where              string
}

func (w *worst) add(diff, bound float64, where func() string) {
	if r := diff / bound; r > w.ratio || math.IsNaN(diff) {
		if math.IsNaN(diff) {
			r = math.Inf(1)
		}
		w.ratio, w.diff, w.bound, w.where = r, diff, bound, where()
	}
}

func (w *worst) String() string {
	if w.where == "" {
		return "no difference"
	}
	return fmt.Sprintf("largest difference %.3g at %s, %.2f of its bound %.3g", w.diff, w.where, w.ratio, w.bound)
}

// matmulCase compares matmul_coop.wgsl as cv with matmul_shared.wgsl on an
// (checkM, checkK) x (checkK, checkN) product with bias, added into zeros
// (epilogue ADD): STORE's values, in the pipelines the forward pass's
// residual-add matmuls make anyway (the same tiling and VEC), not one more
// compile for each tiling checked.
func (r *checkRun) matmulCase(cv matmulVariant) (bool, string, error) {
	g := r.g
	M, K, N := checkM, checkK, checkN
	x, xb := checkData(1, M*K, 1, false)
	w, wb := checkData(2, K*N, 0.1, true)
	_, bb := checkData(3, N, 0.1, true) // added in f32 by both: no part of the bound
	bufs := map[string]Buf{}
	for _, b := range []struct {
		name string
		data []byte
	}{{"x", xb}, {"w", wb}, {"bias", bb}, {"kc", nil}, {"vc", nil}} {
		if (b.name == "kc" || b.name == "vc") && !g.kvEpilogue() {
			continue // the kernels have no KV cache bindings here
		}
		buf, err := r.buffer(b.name, b.data)
		if err != nil {
			return false, "", err
		}
		bufs[b.name] = Buf{Buffer: buf}
	}
	params := Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0}
	var outs [2][]float32
	for i, mm := range []matmulVariant{cv, g.sharedVariant(K, N, g.tiles)} {
		out, err := r.buffer("out", make([]byte, 4*M*N))
		if err != nil {
			return false, "", err
		}
		bufs["out"] = Buf{Buffer: out}
		if err := r.dispatch(mm.k, mm.consts.with("EPI", float64(epiAdd)), bufs, params, mm.work(M, N)); err != nil {
			return false, "", err
		}
		if outs[i], err = r.read(out, M*N); err != nil {
			return false, "", err
		}
	}
	r.corrupt("matmul", outs[0])
	var wst worst
	for m := range M {
		for n := range N {
			var abs float64
			for k := range K {
				abs += math.Abs(x[m*K+k] * w[k*N+n])
			}
			bound := (f16Unit+accumSlack*float64(K))*abs + 1e-6*(1+math.Abs(float64(outs[1][m*N+n])))
			diff := math.Abs(float64(outs[0][m*N+n]) - float64(outs[1][m*N+n]))
			wst.add(diff, bound, func() string {
				return fmt.Sprintf("out[%d,%d] (%.6g on the matrix units, %.6g SIMT)", m, n, outs[0][m*N+n], outs[1][m*N+n])
			})
		}
	}
	return wst.ratio <= 1, fmt.Sprintf("matmul %dx%dx%d: %v", M, K, N, &wst), nil
}

// headCase compares lmhead_loss_coop.wgsl (kernel k, tiling ht), h rounded
// to f16 by to_f16.wgsl (conv) as the forward pass rounds it, with
// lmhead_loss_shared.wgsl over checkP positions and checkV ids of checkC
// channels: each position's logsumexp (from the partials, in float64) and
// its target's logit.
func (r *checkRun) headCase(k *Kernel, ht coopTiles, conv *Kernel) (bool, string, error) {
	g := r.g
	P, C, V := checkP, checkC, checkV
	h, hb := checkData(4, P*C, 4, false)
	wte, wb := checkData(5, V*C, 0.1, true)
	rng := rand.New(rand.NewPCG(6, 0))
	tg := make([]int, P)
	var tb []byte
	for p := range tg {
		tg[p] = rng.IntN(V)
		tb = binary.LittleEndian.AppendUint32(tb, uint32(tg[p]))
	}
	bufs := map[string]Buf{}
	for _, b := range []struct {
		name string
		data []byte
	}{{"h", hb}, {"wte", wb}} {
		buf, err := r.buffer(b.name, b.data)
		if err != nil {
			return false, "", err
		}
		bufs[b.name] = Buf{Buffer: buf}
	}
	h32 := bufs["h"]
	h16, err := r.buffer("h16", make([]byte, 2*P*C))
	if err != nil {
		return false, "", err
	}
	if err := r.dispatch(conv, consts("WG", toF16WG), map[string]Buf{"x": h32, "y": {Buffer: h16}}, Params{"n": float64(P * C / 4)},
		perInvocation(P*C/4)); err != nil {
		return false, "", err
	}
	nt := g.lmSlice()
	parts := ceilDiv(V, g.vt*nt)
	params := Params{"P": float64(P), "C": float64(C), "V": float64(V), "v0": 0}
	var lse, tgt [2][]float32
	for i, run := range []struct {
		k    *Kernel
		cs   constSet
		work extent
		h    Buf
	}{
		{k, ht.constSet(), headGroups(ht, P, V), Buf{Buffer: h16}},
		{g.lmHeadShared, consts("BM", float64(g.lmRows)).with("VT", float64(g.vt)).with("NT", float64(nt)),
			perWorkgroup(ceilDiv(P, g.lmRows)).withY(ceilDiv(V, g.vt*nt)), h32},
	} {
		bufs["h"] = run.h
		part, err := r.buffer("part", make([]byte, 8*parts*P))
		if err != nil {
			return false, "", err
		}
		tgtB, err := r.buffer("targets", append(tb, make([]byte, 4*P)...)) // the ids, then room for their logits
		if err != nil {
			return false, "", err
		}
		bufs["part"], bufs["targets"] = Buf{Buffer: part}, Buf{Buffer: tgtB}
		if err := r.dispatch(run.k, run.cs, bufs, params, run.work); err != nil {
			return false, "", err
		}
		ps, err := r.read(part, 2*parts*P)
		if err != nil {
			return false, "", err
		}
		both, err := r.read(tgtB, 2*P)
		if err != nil {
			return false, "", err
		}
		tgt[i] = both[P:]
		lse[i] = make([]float32, P)
		for p := range P {
			mx := math.Inf(-1)
			for s := range parts {
				mx = math.Max(mx, float64(ps[2*(s*P+p)]))
			}
			var sum float64
			for s := range parts {
				sum += float64(ps[2*(s*P+p)+1]) * math.Exp(float64(ps[2*(s*P+p)])-mx)
			}
			lse[i][p] = float32(mx + math.Log(sum))
		}
	}
	r.corrupt("lmhead", tgt[0])
	var wst worst
	scale := f16Unit + accumSlack*float64(C)
	for p := range P {
		var maxAbs, tAbs float64
		for v := range V {
			var abs float64
			for c := range C {
				abs += math.Abs(h[p*C+c] * wte[v*C+c])
			}
			maxAbs = math.Max(maxAbs, abs)
			if v == tg[p] {
				tAbs = abs
			}
		}
		lb := scale*maxAbs + float64(V)/(1<<24) + 1e-6*math.Abs(float64(lse[1][p]))
		wst.add(math.Abs(float64(lse[0][p])-float64(lse[1][p])), lb, func() string {
			return fmt.Sprintf("logsumexp of position %d (%.6g on the matrix units, %.6g SIMT)", p, lse[0][p], lse[1][p])
		})
		tb := scale*tAbs + 1e-6*(1+math.Abs(float64(tgt[1][p])))
		wst.add(math.Abs(float64(tgt[0][p])-float64(tgt[1][p])), tb, func() string {
			return fmt.Sprintf("target logit of position %d (%.6g on the matrix units, %.6g SIMT)", p, tgt[0][p], tgt[1][p])
		})
	}
	return wst.ratio <= 1, fmt.Sprintf("LM head %d positions x %d ids x %d channels: %v", P, V, C, &wst), nil
}

package shaders

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// GPT2 is a decoder on a device, GPT-2 or one of the Llama family (the
// type keeps GPT-2's name; model.Config.Arch says which): its weights
// uploaded once (f16 or f32) and the kernels of its forward pass. Submit
// scores a batch with one command buffer and one readback of 4 bytes per
// target (its NLLs, which the host adds exactly), two batches in flight, into
// activation memory allocated once and reused. A GPT2 is safe for concurrent
// use.
type GPT2 struct {
	dev    *wgpu.Device
	cfg    model.Config
	f16    bool
	layers []gpuLayer   // GPT-2's blocks
	llama  *llamaParts  // the Llama family's blocks and kernels (llama.go); nil for GPT-2
	wte    *wgpu.Buffer // (V, C) token embeddings
	head   *wgpu.Buffer // (V, C) the LM head: wte where tied (GPT-2 always)
	wpe    *wgpu.Buffer // (positions, C) GPT-2's
	lnfW   *wgpu.Buffer // ln_f's weight; the Llama family's final RMSNorm
	lnfB   *wgpu.Buffer // ln_f's bias (GPT-2)

	// positions is the most positions a sequence may have here: the
	// model's, fewer where the adapter's loop limit, the rotary table's
	// binding or the device's binding limit caps them (see fitLoopLimit,
	// fitBindingLimit); capWhy says which, for messages.
	positions int
	capWhy    string

	weights          []*wgpu.Buffer // every weight buffer, for Close
	weightBytesTotal int64

	bindLimit    int   // tests: a smaller binding limit, to exercise wte in ranges
	sliceTiles   int   // tests: lmhead_loss_shared.wgsl's NT instead of the default, for ranges of fewer tiles
	sharedMatmul bool  // matmul_shared.wgsl, lmhead_loss_shared.wgsl and topk_logits_shared.wgsl rather than the register-tiled kernels: on hardware GPUs (tests set it with vt)
	arenaLimit   int64 // tests: arenas larger than this fail as out of device memory
	vt           int   // lmhead_loss.wgsl's VT for this adapter and model
	lmRows       int   // lmhead_loss_shared.wgsl's BM: sharedLMHeadRows where the device's workgroup memory holds it (lmSharedRows)
	loopLimit    int   // the adapter's shader loop limit (iterations per invocation), 0 for none

	tiles     matmulTiles   // matmul_shared.wgsl's default tiles on this device
	tuneFile  string        // the autotuner's file beside the pipeline cache ("" for none)
	autoTune  bool          // TuneAuto tunes here: a hardware GPU (tests set it on others)
	tuneCands []matmulTiles // tests: the autotuner's candidates instead of matmulCandidates
	// tuneClock (tests) gives a timed candidate's time, by its tiles,
	// instead of the one measured (clocked).
	tuneClock func(tiles map[string]float64) uint64
	// tuneTimed (tests) is told of every pipeline a tuner times.
	tuneTimed func(k *Kernel, cs constSet)
	// checkDispatched (tests) is told of every dispatch of a self-check.
	checkDispatched func(k *Kernel, cs constSet)
	// opRecorded (tests) is told of every dispatch a batch records.
	opRecorded func(k *Kernel, cs constSet)

	coopFile       string                         // the self-check's verdicts, beside the tuning file ("" for none)
	coopForce      *MatrixConfig                  // tests: use this configuration on a device without matrix units (the compiler lowers it)
	coopCorrupt    func(kind string, v []float32) // tests: alters the coop kernels' results the self-check compares
	coopChecks     int                            // self-checks run (tests)
	coopShapes     []coopShape                    // tests: the coop autotuner's tilings instead of coopShapes
	coopHeadShapes []coopHeadShape                // tests: its LM-head tilings instead of coopHeadShapes
	attnShapes     []attnCoopShape                // tests: its attention tilings instead of attnCoopShapes

	mu              sync.Mutex                    // guards the fields below and the recording of batches
	tuneNote        func(msg string)              // SetTuneNotice
	tuneNoted       time.Time                     // when the first notice was given; zero before
	tuneSaveFailed  bool                          // a write of the tuning file failed (keepTuning said so)
	mxMode          MatrixUnits                   // SetMatrixUnits; $WGPU_EVAL_MATRIX_UNITS at NewGPT2
	mx              *MatrixUnitsStatus            // the decision (ensureMatrixUnits); nil until made
	mxErr           error                         // why MatrixUnitsOn cannot be had
	coop            *coopKernels                  // the matrix-unit kernels in use; nil for SIMT
	coopKernelCache map[[2]coopTiles]*coopKernels // every coop kernel pair compiled, by tilings
	coopMM          map[coopTiles]*Kernel         // the coop kernels compiled for the autotuner's tilings, by text (cfg, FM, FN, SGS, head)
	fillRandom      *Kernel                       // fill_random.wgsl: the tuners' random operands (checkRun.random); nil until first used
	tuneMode        TuneMode
	tuned           map[string]TuneChoice       // matmul tiles by tuneKey, from the autotuner
	tuneRedone      map[string]bool             // TuneRedo: the shapes timed again since
	tuneEachSize    bool                        // SetTuneEachSize: no borrowing of a larger batch's choices
	prepared        map[recordingKey]bool       // the shapes of recording makePipelines has made the pipelines of
	setup           SetupTimes                  // what SetupTimes reports
	attnTuned       map[string]TuneChoice       // the attention kernel by attnTuneKey, from the autotuner (attention_tune.go)
	attnPicks       map[string]*attnCoop        // what runs for each of attnTuned (attnPick): nil for attention_shared.wgsl
	coopAttn        map[attnCoopTiles]*attnCoop // attention_coop.wgsl compiled for the autotuner's tilings other than the default
	arenas          [arenaCount]*arena
	nextArena       int
	chunk           int  // SetChunk
	profile         bool // SetProfiling
	closed          bool

	embed, layernorm, matmul, kvWrite, attention, lmHead, nllCombine *Kernel
	matmulShared, lmHeadShared, attentionShared                      *Kernel
	layernormSubgroup, attentionSharedSubgroup                       *Kernel     // nil without subgroup operations
	layernormRows                                                    *rowsKernel // for the model's width; nil without subgroup operations or where its rows do not fit
	logits                                                           *Kernel     // decoding: one position's logits (Session)
	topK                                                             *Kernel     // topk_logits.wgsl: --top-logprobs
	topKShared                                                       *Kernel     // topk_logits_shared.wgsl: --top-logprobs on hardware GPUs
}

// fitLoopLimit chooses tunables for an adapter whose shader loops are limited:
// Mesa's llvmpipe (lavapipe) ends the loops of an invocation after 65535
// iterations in all, nested ones counted, and carries on with wrong values
// (measured: lm_head at C = 768 with 256 ids per tile). Software adapters get
// vocabulary tiles small enough for lmhead_loss.wgsl (VT x (C + 1)
// iterations) and at most attnPositions positions (attention.wgsl loops once
// per key: its loops over a head's channels are unrolled); with the hardware
// kernels forced on them, fewer: attention_shared.wgsl loops per tile of BKV
// keys ⌈BKV·HD/4 / (BQ·QS)⌉ times to load it and, counted as if not unrolled,
// 2·BKV + 2 times over its keys (some 14000 positions at head size 128).
// The matmuls loop along K, their input's width: matmul.wgsl once per k,
// matmul_shared.wgsl BK + 2 times a step of BK (BK >= 8; measured on
// lavapipe: right at K = 52000, wrong from 56000); a model whose widest
// input (the MLP's down projection, usually) loops past the budget is
// refused (no released model comes near: Llama 3.1 405B's is 53248).
func (g *GPT2) fitLoopLimit() error {
	if !Software(g.dev.AdapterInfo()) {
		return nil
	}
	g.loopLimit = 65535
	C := g.cfg.NEmbd
	for g.vt > 4 && g.vt*(C+1) > loopBudget {
		g.vt /= 2
	}
	if g.vt*(C+1) > loopBudget {
		return fmt.Errorf("gpu model: %d channels are too many for %s's shader loop limit", C, g.dev.AdapterInfo().Name)
	}
	w := g.widths()
	K := max(C, w.att, w.fc) // the matmuls' inputs: the residual stream, the attention's output, the MLP's hidden layer
	loops := K + 8
	if g.sharedMatmul {
		loops = K + K/4
	}
	if loops > loopBudget {
		return fmt.Errorf("gpu model: a matrix %d rows deep (the model's widest matmul input: channels %d, attention %d, MLP %d) is too deep for %s's shader loop limit",
			K, C, w.att, w.fc, g.dev.AdapterInfo().Name)
	}
	g.capPositions(attnPositions, "the shader loop limit")
	if g.sharedMatmul {
		hd := g.cfg.HeadDim()
		t := attnTilesFor(g.dev, hd)
		perTile := ceilDiv(t.BKV*hd/4, t.invocations()) + 2*t.BKV + 2
		g.capPositions(loopBudget/perTile*t.BKV, "the shader loop limit")
	}
	return nil
}

// fitBindingLimit caps the positions so that the activations of one
// sequence of them fit the device's binding limit (maxStorageBufferRange):
// every activation buffer is bound whole, so a window whose widest rows
// (the MLP's, 4 bytes an element) or whose LM-head partials (8 bytes a
// part per target) exceed it cannot run, whatever the memory. Without the
// cap such a window fails at its first batch with the binding's size in a
// bind-group error; with it, a window too long is refused naming the
// positions the device takes (lavapipe binds 128 MiB: Qwen2.5-0.5B's MLP
// rows for 6898 positions there, its partials for 7068; a GPU binding 4 GiB
// holds Llama-3.2-1B's MLP rows for 131071 of its 131072 positions).
// MaxBatchTokens bounds batches of several sequences the same way.
func (g *GPT2) fitBindingLimit() {
	limit := int64(g.dev.Limits().MaxStorageBufferBindingSize)
	w := g.widths()
	widest := int64(max(g.cfg.NEmbd, w.qkv, w.att, w.fc))
	rows := limit / (4 * widest)                // a sequence's rows
	targets := limit/(8*int64(g.lmParts())) + 1 // a sequence of n positions has n-1 targets
	g.capPositions(int(min(rows, targets)), fmt.Sprintf("one sequence's activations within the device's binding limit of %d bytes", limit))
}

// capPositions lowers the positions to n where n is fewer, why naming the cause.
func (g *GPT2) capPositions(n int, why string) {
	if n < g.positions {
		g.positions, g.capWhy = max(n, 1), why
	}
}

// Positions is the most positions a sequence may have on this device: the
// model's, or fewer where the adapter's shader loop limit (attention), the
// rotary table's binding or the device's binding limit (one sequence's
// activations: fitBindingLimit) caps them.
func (g *GPT2) Positions() int { return g.positions }

// capped says, for messages, why Positions is below the model's positions.
func (g *GPT2) capped() string {
	if g.positions == g.cfg.NPositions {
		return ""
	}
	return fmt.Sprintf(" on %s (of %d; capped by %s)", g.dev.AdapterInfo().Name, g.cfg.NPositions, g.capWhy)
}

// attnPositions is the most positions attention.wgsl can attend over on an
// adapter with a loop limit: one loop iteration per key, a few besides.
const attnPositions = loopBudget - 8

// slot is where the buffer of tensor s goes; nil for a role the GPU does not
// hold (Config.Tensors lists none).
func (g *GPT2) slot(s model.TensorSpec) **wgpu.Buffer {
	var l *gpuLayer
	if s.Layer >= 0 {
		l = &g.layers[s.Layer]
	}
	switch s.Role {
	case model.RoleWTE:
		return &g.wte
	case model.RoleWPE:
		return &g.wpe
	case model.RoleLNFW:
		return &g.lnfW
	case model.RoleLNFB:
		return &g.lnfB
	case model.RoleLN1W:
		return &l.ln1w
	case model.RoleLN1B:
		return &l.ln1b
	case model.RoleQKVW:
		return &l.qkvW
	case model.RoleQKVB:
		return &l.qkvB
	case model.RoleProjW:
		return &l.projW
	case model.RoleProjB:
		return &l.projB
	case model.RoleLN2W:
		return &l.ln2w
	case model.RoleLN2B:
		return &l.ln2b
	case model.RoleFCW:
		return &l.fcW
	case model.RoleFCB:
		return &l.fcB
	case model.RoleFCProjW:
		return &l.fcProjW
	case model.RoleFCProjB:
		return &l.fcProjB
	case model.RoleLMHead:
		return &g.head
	}
	return nil
}

// gpuLayer is one block's weights on the device, in Hugging Face's layout.
type gpuLayer struct {
	ln1w, ln1b, qkvW, qkvB, projW, projB, ln2w, ln2b, fcW, fcB, fcProjW, fcProjB *wgpu.Buffer
}

// maxHeadDim is the largest head size attention.wgsl and
// attention_shared.wgsl hold in registers (GPT-2 has 64, Qwen3 128).
const maxHeadDim = 128

// NewGPT2 uploads the weights src holds to dev, tensor by tensor in the
// weight type (f16 when f16 is set, which needs shader-f16, else f32): an F16
// checkpoint goes to the device as its stored bytes, and no whole-model copy
// is made on the host. src may be GPT-2 or a model of the Llama family, whose
// nn.Linear matrices are transposed into the matmul kernels' layout one block
// at a time (uploadLlama). It compiles the kernels. progress, when not nil,
// gets the bytes uploaded so far and the total.
func NewGPT2(ctx context.Context, dev *wgpu.Device, src model.TensorReader, f16 bool, progress func(done, total int64)) (*GPT2, error) {
	cfg := src.Config()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gpu model: %w", err)
	}
	if hd := cfg.HeadDim(); hd > maxHeadDim || hd%4 != 0 {
		return nil, fmt.Errorf("gpu model: head size %d not supported (a multiple of 4 up to %d)", hd, maxHeadDim)
	}
	if cfg.NEmbd%4 != 0 { // GPT-2's is a multiple of its head size; the LM head reads vec4s of channels
		return nil, fmt.Errorf("gpu model: %d channels not supported (a multiple of 4)", cfg.NEmbd)
	}
	if f16 && !dev.HasFeature(wgpu.FeatureShaderF16) {
		return nil, fmt.Errorf("gpu model: f16 weights need the device feature %s", wgpu.FeatureShaderF16)
	}
	llama := cfg.Arch == model.ArchLlama
	set, err := KernelSetFromEnv()
	if err != nil {
		return nil, fmt.Errorf("gpu model: %w", err)
	}
	mx, err := MatrixUnitsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("gpu model: %w", err)
	}
	g := &GPT2{dev: dev, cfg: cfg, f16: f16, sharedMatmul: set.hardware(dev.AdapterInfo()), vt: maxVocabTile, positions: cfg.NPositions,
		mxMode: mx, coopFile: coopPath(dev)}
	if llama {
		g.capPositions(llamaPositions(cfg), "the rotary table's size")
	}
	if g.sharedMatmul {
		g.vt = sharedVocabTile
	}
	g.lmRows = lmSharedRows(int(dev.Limits().MaxComputeWorkgroupStorageSize))
	if err := g.fitLoopLimit(); err != nil {
		return nil, err
	}
	g.fitBindingLimit()
	g.tuneFile, g.autoTune = tunePath(dev), !Software(dev.AdapterInfo())
	// The tiles are chosen on every adapter: tests force the hardware kernels on software ones.
	if g.tiles, err = matmulTilesFor(dev); err != nil && g.sharedMatmul {
		return nil, fmt.Errorf("gpu model: %w", err)
	}
	dt := model.F32
	if f16 {
		dt = model.F16
	}
	if llama {
		err = g.uploadLlama(ctx, src, dt, progress)
	} else {
		err = g.uploadGPT2(ctx, src, dt, progress)
	}
	if err != nil {
		g.Close()
		return nil, fmt.Errorf("gpu model: %w", err)
	}
	for _, k := range []struct {
		dst  **Kernel
		name string
	}{
		{&g.embed, "embed.wgsl"}, {&g.layernorm, "layernorm.wgsl"}, {&g.matmul, "matmul.wgsl"},
		{&g.kvWrite, "kv_write.wgsl"}, {&g.attention, "attention.wgsl"},
		{&g.lmHead, "lmhead_loss.wgsl"}, {&g.nllCombine, "nll_combine.wgsl"}, {&g.matmulShared, "matmul_shared.wgsl"}, {&g.lmHeadShared, "lmhead_loss_shared.wgsl"}, {&g.attentionShared, "attention_shared.wgsl"}, {&g.logits, "logits.wgsl"}, {&g.topK, "topk_logits.wgsl"}, {&g.topKShared, "topk_logits_shared.wgsl"},
	} {
		if *k.dst, err = NewKernel(dev, k.name, f16); err != nil {
			g.Close()
			return nil, err
		}
	}
	if dev.HasFeature(wgpu.FeatureSubgroups) {
		if g.layernormSubgroup, err = NewKernel(dev, "layernorm_subgroup.wgsl", f16); err != nil {
			g.Close()
			return nil, err
		}
		if g.layernormRows, err = newRowsKernel(dev, "layernorm_rows.wgsl", f16, g.cfg.NEmbd); err != nil {
			g.Close()
			return nil, err
		}
		if g.attentionSharedSubgroup, err = NewKernel(dev, "attention_shared_subgroup.wgsl", f16); err != nil {
			g.Close()
			return nil, err
		}
	}
	if llama {
		if err := g.newLlamaKernels(); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

// uploadGPT2 puts GPT-2's weights on the device in the weight type dt, tensor
// by tensor as they are stored (Conv1D's (in, out) is the kernels' layout),
// lm_head.weight too where it is not wte (tie_word_embeddings false, as
// the CPU path reads it).
func (g *GPT2) uploadGPT2(ctx context.Context, src model.TensorReader, dt model.DType, progress func(done, total int64)) error {
	specs := g.cfg.Tensors()
	tied, err := src.LMHeadTied(ctx)
	if err != nil {
		return err
	}
	if !tied {
		specs = append(specs, g.cfg.LMHeadSpec())
	}
	var total, done int64
	for _, s := range specs {
		total += int64(s.NumElements() * dt.Size())
	}
	if progress != nil {
		progress(0, total) // the start, so that a display's rate counts from here
	}
	g.layers = make([]gpuLayer, g.cfg.NLayer)
	for _, s := range specs {
		dst := g.slot(s)
		if dst == nil {
			return fmt.Errorf("tensor %s (%v) has no place on the GPU", s.Name, s.Role)
		}
		data, err := src.ReadTensor(ctx, s, dt)
		if err == nil {
			*dst, err = g.upload(s.Name, data)
		}
		if err != nil {
			return err
		}
		done += int64(len(data))
		if progress != nil {
			progress(done, total)
		}
	}
	if g.head == nil {
		g.head = g.wte
	}
	return nil
}

// upload makes a storage buffer holding data, the bytes of a tensor in the
// weight type (padded to 4 bytes).
func (g *GPT2) upload(name string, data []byte) (*wgpu.Buffer, error) {
	if len(data)%4 != 0 {
		data = append(data, make([]byte, 4-len(data)%4)...)
	}
	b, err := g.dev.CreateBufferInit(&wgpu.BufferDescriptor{Label: name, Size: uint64(len(data)),
		Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopyDst}, data)
	if err != nil {
		return nil, fmt.Errorf("upload %s: %w", name, err)
	}
	g.weights = append(g.weights, b)
	g.weightBytesTotal += int64(b.Size())
	return b, nil
}

// F16 reports whether the weights are f16 on the device (else f32).
func (g *GPT2) F16() bool { return g.f16 }

// Name names the device and weight type, for results.
func (g *GPT2) Name() string {
	t := "f32"
	if g.f16 {
		t = "f16"
	}
	return g.dev.AdapterInfo().Name + " (" + t + ")"
}

// maxGroupsX is the workgroups per dimension every Vulkan device allows.
const maxGroupsX = 65535

// grid spreads n workgroups over x and y; kernels index them as
// wid.y * num_workgroups.x + wid.x and return past their work.
func grid(n int) [3]uint32 {
	n = max(n, 1)
	x := min(n, maxGroupsX)
	return [3]uint32{uint32(x), uint32(ceilDiv(n, x)), 1}
}

// What the host knows of the kernels beyond their interfaces: the work of
// an invocation where the WGSL's vec4 code fixes it, override values the
// host sets, and bounds it must respect. Workgroup sizes are not among them:
// dispatches take them from the pipeline (Pipeline.Groups).
// TestHostConstantsMatchWGSL checks each against the WGSL's value.
const (
	matmulTileM, matmulTileN = 4, 4 // matmul.wgsl: outputs per invocation (vec4 code)
	matmulWG                 = 64   // matmul.wgsl: WG, set by the host
	maxVocabTile             = 256  // lmhead_loss.wgsl: VT's default, vocabulary ids per tile
	nllCombineWG             = 256  // nll_combine.wgsl: WG, set by the host: targets per workgroup
	lnSubgroupValues         = 8    // layernorm_subgroup.wgsl, rmsnorm_subgroup.wgsl: MAXE, channels per invocation
	lnRowVec4s               = 16   // include/row_subgroup.wgsl (layernorm_rows.wgsl, rmsnorm_rows.wgsl): MAXV, vec4s of a row per invocation, the most newRowsKernel writes
	sharedSliceTiles         = 8    // lmhead_loss_shared.wgsl: NT's default, vocabulary tiles per workgroup
	lmHeadRows               = 4    // lmhead_loss.wgsl: positions per invocation (vec4 code)
	sharedVocabTile          = 128  // lmhead_loss_shared.wgsl: VT's default
	sharedLMHeadRows         = 64   // lmhead_loss_shared.wgsl: BM's default, positions per workgroup
)

// flatWG is the workgroup size, at most n, of a kernel whose invocations
// each take one item and whose WG is any size (nll_combine.wgsl,
// to_f16.wgsl): n, or the device's limit where that is smaller (Vulkan
// promises 128 invocations, desktop GPUs offer 1024). Their dispatches take
// the size from the pipeline.
func flatWG(l wgpu.Limits, n int) int {
	return max(1, min(n, int(l.MaxComputeInvocationsPerWorkgroup), int(l.MaxComputeWorkgroupSizeX)))
}

// lmSharedBytes is lmhead_loss_shared.wgsl's workgroup memory at BM bm with
// the host's VT (sharedVocabTile) and the kernel's default BK 8 and TN 8 (its
// header's formula).
func lmSharedBytes(bm int) int {
	const bk, tn = 8, 8
	return 2*bk*(bm+sharedVocabTile+8)*4 + bm*(sharedVocabTile/tn)*4 + bm*4
}

// lmSharedRows is lmhead_loss_shared.wgsl's BM on a device with limit bytes
// of workgroup memory: sharedLMHeadRows (16.75 KiB), or 32 (12.6 KiB) where
// that is more than the device allows (Vulkan promises 16 KiB; desktop GPUs
// have 32 to 64). Every position's partials are the same bits at either
// (TestLossShared): BM only groups positions into workgroups.
func lmSharedRows(limit int) int {
	if lmSharedBytes(sharedLMHeadRows) <= limit {
		return sharedLMHeadRows
	}
	return sharedLMHeadRows / 2
}

// wteRanges cuts the vocabulary into ranges [v0, v1) of ids whose rows of wte
// fit one binding (the device's maxStorageBufferBindingSize: 128 MiB on
// lavapipe, less than GPT-2's f32 wte or GPT-2 XL's f16 one); every range but
// the last is a whole number of lm_head vocabulary tiles, so its byte offset
// keeps the storage offset alignment.
func (g *GPT2) wteRanges() [][2]int {
	V, row := g.cfg.VocabSize, g.cfg.NEmbd*g.weightBytes()
	limit := int(min(g.dev.Limits().MaxStorageBufferBindingSize, 1<<31))
	if g.bindLimit > 0 {
		limit = g.bindLimit
	}
	step := g.vt * g.lmSlice() // a range is a whole number of the LM head's slices
	per := max(limit/row/step, 1) * step
	align := int(max(g.dev.Limits().MinStorageBufferOffsetAlignment, 1))
	for per > step && (per*row)%align != 0 {
		per -= step
	}
	var rs [][2]int
	for v0 := 0; v0 < V; v0 += per {
		rs = append(rs, [2]int{v0, min(v0+per, V)})
	}
	return rs
}

// wteRange is the binding of wte's rows [vr[0], vr[1]) (the embedding).
func (g *GPT2) wteRange(vr [2]int) Buf { return g.vocabRange(g.wte, vr) }

// headRange is the binding of the LM head's rows [vr[0], vr[1]): wte's where
// tied. It has wte's shape, so wteRanges cuts both.
func (g *GPT2) headRange(vr [2]int) Buf { return g.vocabRange(g.head, vr) }

// vocabRange is the binding of rows [vr[0], vr[1]) of b, a (V, C) matrix of weights.
func (g *GPT2) vocabRange(b *wgpu.Buffer, vr [2]int) Buf {
	row := uint64(g.cfg.NEmbd * g.weightBytes())
	size := uint64(vr[1]-vr[0]) * row
	if end := uint64(vr[1]) * row; end == uint64(g.cfg.VocabSize)*row {
		size = b.Size() - uint64(vr[0])*row // the last range keeps the buffer's padding
	}
	return Buf{Buffer: b, Offset: uint64(vr[0]) * row, Size: size}
}

// weightBytes is the bytes of one stored weight.
func (g *GPT2) weightBytes() int {
	if g.f16 {
		return 2
	}
	return 4
}

// lmSlice is the vocabulary tiles one workgroup of the LM head takes: NT of
// lmhead_loss_shared.wgsl (sharedSliceTiles, fewer when a slice would not fit
// one binding of wte on the device), 1 for lmhead_loss.wgsl. A range of wte
// (wteRanges) is a whole number of slices, even when a test's bindLimit asks
// for less. With GPT-2's 50257 ids, 8 tiles of 128 make 50 slices: 50
// partials per position for nll_combine.wgsl to merge, and ceil(P/64) x 50
// workgroups of 128 invocations, 800 for one window of 1024 positions and
// thousands for a batch, enough for several per multiprocessor of a big GPU.
// It does not depend on P, so the partials' order (and the sums' bits) of a
// batch do not either.
func (g *GPT2) lmSlice() int {
	if !g.sharedMatmul {
		return 1
	}
	if g.sliceTiles > 0 {
		return g.sliceTiles
	}
	// From the device's binding limit only, not a test's smaller one: the slices
	// decide the order of the sums, which must not depend on how wte is bound.
	limit := int(min(g.dev.Limits().MaxStorageBufferBindingSize, 1<<31))
	return max(min(sharedSliceTiles, limit/(g.cfg.NEmbd*g.weightBytes()*g.vt)), 1)
}

// lmParts is the LM head's partials per target: one per slice of lmSlice
// tiles (wteRanges keeps every range but the last a whole number of slices).
func (g *GPT2) lmParts() int {
	return ceilDiv(g.cfg.VocabSize, g.vt*g.lmSlice())
}

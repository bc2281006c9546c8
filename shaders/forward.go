package shaders

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// SetChunk makes Submit score each batch in chunks of n positions per
// sequence (chunked prefill): the layers run over positions [0, n), then
// [n, 2n), ..., each chunk's attention reading the keys and values of the
// earlier ones from a KV cache that holds every layer. The sums equal a
// whole-window pass; activation memory shrinks to n rows per sequence while
// the cache grows to every layer. n <= 0 (the default) scores a batch in one
// pass with one layer's cache.
func (g *GPT2) SetChunk(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.chunk = max(n, 0)
}

// SetProfiling makes later batches time every dispatch with timestamp
// queries (the device needs wgpu.FeatureTimestampQuery): Pending.Profile then
// gives GPU time per kernel. It costs a pass per dispatch.
func (g *GPT2) SetProfiling(on bool) error {
	if on && !g.dev.HasFeature(wgpu.FeatureTimestampQuery) {
		return fmt.Errorf("gpu: profiling needs the device feature %s", wgpu.FeatureTimestampQuery)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.profile = on
	return nil
}

// KernelTime is the GPU time of one kernel over a batch, from timestamps.
type KernelTime struct {
	Kernel     string  // "attention_shared", "layernorm", ...; matmuls with their weight's shape: "matmul_shared K768 N2304"; the _rows norms with their MAXV: "layernorm_rows[MAXV 6]"
	Dispatches int     // dispatches of it in the batch
	Workgroups uint64  // workgroups of those dispatches, all together
	Nanos      uint64  // GPU time, summed over its dispatches
	Flops      float64 // floating-point operations (multiply-add = 2), from the shapes
	Bytes      float64 // bytes read and written, from the shapes (a lower bound: each operand once)
}

// Pending is a batch submitted by Submit; Wait gives its sums.
type Pending struct {
	g     *GPT2
	a     *arena
	count int
	qs    []*wgpu.QuerySet // profiling: the batch's timestamp queries, maxProfileQueries a set (profileQuery)
	ops   []opRecord

	perToken bool
	topK     int // SubmitOptions.TopLogprobs

	done    bool
	sums    model.LossSums
	nll     []float32
	top     []model.TokenLogprob
	err     error
	profile []KernelTime
}

// SubmitOptions are the choices of one SubmitWith.
type SubmitOptions struct {
	// PerToken keeps every target's NLL for Pending.PerToken (every batch
	// reads them back, 4 bytes per target, for its sums; this keeps them).
	PerToken bool
	// TopLogprobs, with PerToken, also keeps the TopLogprobs (1 to
	// MaxTopLogprobs) highest log-probabilities of every target's position
	// for Pending.TopLogprobs: topk_logits.wgsl (topk_logits_shared.wgsl on
	// hardware GPUs) streams the vocabulary once
	// more at the scored positions, and 8 bytes per target and K, plus 4 per
	// target, are read back.
	TopLogprobs int
}

// PerToken is every target's NLL (f32, as the device computed it) in batch
// order: sequences in order, each one's targets by position. It is nil
// before Wait and for a batch submitted without SubmitOptions.PerToken.
func (p *Pending) PerToken() []float32 {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	return p.nll
}

// opRecord is what profiling keeps of one dispatch.
type opRecord struct {
	kernel       string
	groups       uint64
	flops, bytes float64
}

// Wait blocks until the batch is scored and returns its sums. It may be
// called again and returns the same result. ctx is checked before waiting;
// the wait itself is for work already submitted and ends with it.
func (p *Pending) Wait(ctx context.Context) (model.LossSums, error) {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	if !p.done {
		if err := ctx.Err(); err != nil {
			return model.LossSums{}, err
		}
		p.finish()
	}
	return p.sums, p.err
}

// Profile is the GPU time per kernel of the batch (with SetProfiling), in
// the order kernels first ran; nil without profiling or before Wait.
func (p *Pending) Profile() []KernelTime { return p.profile }

// finish reads the batch's NLLs back, adds them exactly into its sums, and
// frees its arena for the next batch. g.mu must be held.
func (p *Pending) finish() {
	p.done = true
	defer closeQuerySets(p.qs) // on every path: an error below leaves the timestamps unread
	if p.a.pending == p {
		p.a.pending = nil
	}
	out := make([]byte, 4*p.count)
	if err := p.g.dev.Queue().ReadBuffer(p.a.nllRead, 0, out); err != nil {
		p.err = fmt.Errorf("gpu loss: read back per-target NLLs: %w", err)
		return
	}
	var nll []float32
	if p.perToken {
		nll = make([]float32, p.count)
	}
	for i := range p.count {
		x := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		p.sums.AddNLL(float64(x))
		if nll != nil {
			nll[i] = x
		}
	}
	p.nll = nll
	if p.perToken {
		if p.topK > 0 {
			if err := p.readTopK(); err != nil {
				p.err = err
				return
			}
		}
	}
	if p.qs != nil {
		if err := p.readProfile(); err != nil {
			p.err = err
		}
	}
}

// maxProfileQueries is the most timestamp queries one query set holds
// (wgpu's limit, WebGPU's maxQuerySetSize): a profiled batch with more than
// half as many dispatches (a long window in small --chunk steps, a model of
// many layers) spreads its queries over several sets.
const maxProfileQueries = 4096

// profileQuery is where query i of a profiled batch lies: the set, and the
// index in it.
func profileQuery(i int) (set int, index uint32) {
	return i / maxProfileQueries, uint32(i % maxProfileQueries)
}

// newProfileQueries makes the query sets of a batch of at most ops
// dispatches, two queries each.
func (g *GPT2) newProfileQueries(ops int) ([]*wgpu.QuerySet, error) {
	var sets []*wgpu.QuerySet
	for left := 2 * ops; left > 0; left -= maxProfileQueries {
		qs, err := g.dev.CreateQuerySet(&wgpu.QuerySetDescriptor{Label: fmt.Sprintf("gpt2 profile %d", len(sets)), Count: uint32(min(left, maxProfileQueries))})
		if err != nil {
			closeQuerySets(sets)
			return nil, fmt.Errorf("profile of %d dispatches: %w", ops, err)
		}
		sets = append(sets, qs)
	}
	return sets, nil
}

// closeQuerySets closes the query sets of a profiled batch.
func closeQuerySets(sets []*wgpu.QuerySet) {
	for _, qs := range sets {
		qs.Close()
	}
}

// readProfile reads the timestamps of the batch's dispatches (two a
// dispatch, in p.qs) into p.profile, the time per kernel. g.mu must be held.
func (p *Pending) readProfile() error {
	// Only the queries written are read: the sets' size is an upper bound, since fused epilogues skip dispatches.
	ts := make([]uint64, 0, 2*len(p.ops))
	for left, k := 2*len(p.ops), 0; left > 0; left, k = left-maxProfileQueries, k+1 {
		part, err := p.qs[k].Read(0, uint32(min(left, maxProfileQueries)))
		if err != nil {
			return fmt.Errorf("gpu loss: timestamps: %w", err)
		}
		ts = append(ts, part...)
	}
	p.profile = profileOf(p.ops, ts, p.qs[0].ValidBits(), p.g.dev.Limits().TimestampPeriod)
	return nil
}

// profileOf is the time per kernel of the dispatches ops, whose start and
// end timestamps are ts[2i] and ts[2i+1] (wgpu.QuerySet.Read's nanoseconds,
// of a counter of bits valid bits at period ns a tick), kernels in the order
// of their first dispatch.
func profileOf(ops []opRecord, ts []uint64, bits uint32, period float32) []KernelTime {
	var profile []KernelTime
	byName := map[string]int{}
	for i, op := range ops {
		j, ok := byName[op.kernel]
		if !ok {
			j = len(profile)
			byName[op.kernel] = j
			profile = append(profile, KernelTime{Kernel: op.kernel})
		}
		kt := &profile[j]
		kt.Dispatches++
		kt.Workgroups += op.groups
		kt.Nanos += elapsedNanos(ts[2*i], ts[2*i+1], bits, period)
		kt.Flops += op.flops
		kt.Bytes += op.bytes
	}
	return profile
}

// elapsedNanos is the time from timestamp start to timestamp end, written
// after it, both as wgpu.QuerySet.Read returns them (nanoseconds of a counter
// of bits valid bits at period ns a tick): end - start, or, where the counter
// wrapped in between (end < start), end - start + 2^bits ticks, to a
// nanosecond (Read truncates each timestamp). A 64-bit counter does not wrap
// (584 years at 1 ns a tick): there, as where 2^bits ticks exceed 2^64 ns, an
// end before its start counts 0.
func elapsedNanos(start, end uint64, bits uint32, period float32) uint64 {
	if end >= start {
		return end - start
	}
	span := math.Ldexp(float64(period), int(bits)) // the counter's wrap, in ns
	if bits >= 64 || !(span < math.Ldexp(1, 64)) {
		return 0
	}
	back, wrap := start-end, uint64(math.Round(span))
	if back >= wrap {
		return 0
	}
	return wrap - back
}

// Loss scores seqs as one batch padded to its longest sequence and waits for
// the sums: Submit then Wait.
func (g *GPT2) Loss(ctx context.Context, seqs []model.Sequence) (model.LossSums, error) {
	p, err := g.Submit(ctx, seqs, 0)
	if err != nil {
		return model.LossSums{}, err
	}
	return p.Wait(ctx)
}

// Submit starts scoring seqs (see model.Sequence) as one batch of len(seqs)
// rows padded to width positions (0: the longest sequence's length) and
// returns without waiting for the GPU. The batch is one command buffer; the
// per-target NLL is summed on the device and Wait reads back 8 bytes. Up to
// two batches are in flight; submitting a third waits for the oldest one's
// result (kept for its Wait). A batch larger than the activation memory
// allocated so far grows it; when the device cannot, the error wraps
// wgpu.ErrOutOfMemory, and a smaller batch may still fit.
func (g *GPT2) Submit(ctx context.Context, seqs []model.Sequence, width int) (*Pending, error) {
	return g.SubmitWith(ctx, seqs, width, SubmitOptions{})
}

// SubmitWith is Submit with options: with opt.PerToken the batch also copies
// its per-target NLLs to the host (see Pending.PerToken).
func (g *GPT2) SubmitWith(ctx context.Context, seqs []model.Sequence, width int, opt SubmitOptions) (*Pending, error) {
	if err := model.CheckSequences(g.cfg, seqs); err != nil {
		return nil, err
	}
	if k := opt.TopLogprobs; k != 0 && (!opt.PerToken || k < 0 || k > min(MaxTopLogprobs, g.cfg.VocabSize)) {
		return nil, fmt.Errorf("gpu loss: %d top log-probabilities asked (with per-token NLLs %v): want 1 to %d with them",
			k, opt.PerToken, min(MaxTopLogprobs, g.cfg.VocabSize))
	}
	T := 0
	for _, s := range seqs {
		T = max(T, len(s.Tokens))
	}
	switch {
	case width == 0:
		width = T
	case width < T:
		return nil, fmt.Errorf("gpu loss: batch width %d is shorter than its longest sequence (%d tokens)", width, T)
	case width > g.cfg.NPositions:
		return nil, fmt.Errorf("gpu loss: batch width %d exceeds the model's %d positions", width, g.cfg.NPositions)
	}
	if width > g.positions {
		return nil, fmt.Errorf("gpu loss: batch width %d exceeds the model's %d positions%s", width, g.positions, g.capped())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("gpu loss: model closed")
	}
	if err := g.ensureMatrixUnits(); err != nil {
		return nil, err
	}
	b := g.newBatch(seqs, width)
	start := time.Now()
	compiled, round := g.compileAhead(b.B, b.chunk)
	g.ensureTuned(b.B * b.chunk)
	g.ensureAttnTuned(b.B, b.chunk)
	compiled()
	if round {
		g.setup.Tune += time.Since(start)
	}
	a, err := g.arenaFor(b.need)
	if err != nil {
		return nil, err
	}
	p := &Pending{g: g, a: a, count: b.P, perToken: opt.PerToken, topK: opt.TopLogprobs}
	if b.P == 0 {
		p.done = true
		if opt.PerToken {
			p.nll = []float32{}
		}
		if p.topK > 0 {
			p.top = []model.TokenLogprob{}
		}
		return p, nil
	}
	if p.topK > 0 {
		if _, err := g.topBuffersFor(a, p.topK); err != nil {
			return nil, err
		}
	}
	if err := g.record(p, b); err != nil {
		return nil, err
	}
	a.pending = p
	return p, nil
}

// batch is one Submit's shapes and host data.
type batch struct {
	seqs      []model.Sequence
	B, W, P   int
	chunk     int // positions per chunk
	chunks    int
	chunkToks int // token slots per chunk in the tokens buffer (B*chunk, padded)
	need      arenaSize
	tokens    []byte // (chunks, chunkToks) u32
	targets   []byte // (P) u32
	firstTgt  []int  // per sequence: index of its first target
}

func (g *GPT2) newBatch(seqs []model.Sequence, W int) *batch {
	b := &batch{seqs: seqs, B: len(seqs), W: W}
	for _, s := range seqs {
		b.P += s.Scored()
	}
	b.chunk = W
	if g.chunk > 0 && g.chunk < W {
		b.chunk = g.chunk
	}
	b.chunks = ceilDiv(W, b.chunk)
	b.chunkToks = (b.B*b.chunk + 63) &^ 63 // 256-byte aligned chunk offsets
	layers := 1
	if b.chunks > 1 {
		layers = g.cfg.NLayer
	}
	b.need = arenaSize{rows: b.B * b.chunk, cacheTok: b.B * W, cacheLayers: layers, targets: b.P, tokens: b.chunks * b.chunkToks}
	b.tokens = make([]byte, 4*b.chunks*b.chunkToks)
	b.targets = make([]byte, 4*b.P)
	p := 0
	for i, s := range seqs {
		for t, id := range s.Tokens {
			c, tc := t/b.chunk, t%b.chunk
			rows := min(b.chunk, W-c*b.chunk) // the chunk's rows per sequence
			binary.LittleEndian.PutUint32(b.tokens[4*(c*b.chunkToks+i*rows+tc):], uint32(id))
		}
		for _, id := range s.Tokens[s.First:] {
			binary.LittleEndian.PutUint32(b.targets[4*p:], uint32(id))
			p++
		}
	}
	return b
}

// recorder records the dispatches of one batch, reusing the arena's bind groups.
type recorder struct {
	g    *GPT2
	enc  *wgpu.CommandEncoder
	pass *wgpu.ComputePass
	a    *arena
	p    *Pending
	err  error
	// dry, when not nil, makes the recording a dry one that only names its
	// pipelines: op adds each kernel and its constants here and records
	// nothing (makePipelines).
	dry *[]pipelineJob
}

// op records a dispatch of kernel k with the override constants consts, the
// bindings bufs and push constants params (the kernel's structs: see
// embedBufs, embedParams) over work
// (workgroups from the pipeline's size). Profiling asks params for the
// dispatch's work (cost.go).
func (r *recorder) op(k *Kernel, consts constSet, bufs, params any, work extent) {
	if r.err != nil {
		return
	}
	if r.dry != nil {
		*r.dry = append(*r.dry, pipelineJob{k, consts})
		return
	}
	if r.g.opRecorded != nil {
		r.g.opRecorded(k, consts)
	}
	pl, err := k.pipeline(consts)
	if err != nil {
		r.err = err
		return
	}
	groups := pl.Groups(work)
	key, err := pl.bindKey(bufs)
	if err != nil {
		r.err = err
		return
	}
	bg, ok := r.a.groups[key]
	if !ok {
		byName, err := pl.bindMap(bufs)
		if err == nil {
			bg, err = pl.Bind(byName)
		}
		if err != nil {
			r.err = err
			return
		}
		r.a.groups[key] = bg
	}
	pc, err := pl.PushStruct(params)
	if err != nil {
		r.err = err
		return
	}
	if r.p.qs != nil { // profiling: a pass per dispatch, timestamps around it
		start, si := profileQuery(2 * len(r.p.ops))
		end, ei := profileQuery(2*len(r.p.ops) + 1)
		if end >= len(r.p.qs) {
			r.err = fmt.Errorf("profile: more dispatches than the %d counted (opsPerBatch)", len(r.p.ops))
			return
		}
		r.pass.End()
		r.enc.WriteTimestamp(r.p.qs[start], si)
		r.pass = r.enc.BeginComputePass(nil)
		pl.Dispatch(r.pass, bg, pc, groups)
		r.pass.End()
		r.enc.WriteTimestamp(r.p.qs[end], ei)
		r.pass = r.enc.BeginComputePass(nil)
		r.p.ops = append(r.p.ops, r.profiled(k, consts, params, groups))
		return
	}
	pl.Dispatch(r.pass, bg, pc, groups)
}

// profiled is what profiling keeps of a dispatch of k with consts and
// params over groups: the kernel's name (with the weight's shape for the
// matmuls) and its work (cost.go).
func (r *recorder) profiled(k *Kernel, consts constSet, params any, groups [3]uint32) opRecord {
	name := strings.TrimSuffix(strings.TrimSuffix(k.Name(), ".wgsl"), "[f16]")
	name += coopProfileTiling(name, consts)
	if pr, ok := params.(profileRow); ok {
		name += " " + pr.row()
	}
	op := opRecord{kernel: name, groups: uint64(groups[0]) * uint64(groups[1]) * uint64(groups[2])}
	if c, ok := params.(costed); ok {
		op.flops, op.bytes = c.cost(costCtx{wb: float64(r.g.weightBytes()), consts: consts})
	}
	return op
}

// maxBindings bounds the binding numbers of a kernel whose bind groups an
// arena keeps (the kernels have at most 6).
const maxBindings = 8

// bindKey names a bind group of an arena: its pipeline and each binding's
// buffer range, by binding number (comparable: no string is made per
// dispatch).
type bindKey struct {
	p    *Pipeline
	bufs [maxBindings]Buf
}

// opsPerBatch is at most the dispatches of a batch, for the query set
// (the LM head's: to_f16.wgsl where the matrix units run, one per range of
// the vocabulary, nll_combine.wgsl).
func (g *GPT2) opsPerBatch(chunks, ranges int) int {
	return chunks*(ranges+8*g.cfg.NLayer+1) + ranges + 3
}

// record writes the batch's tokens, records its command buffer and submits
// it. g.mu must be held.
func (g *GPT2) record(p *Pending, b *batch) error {
	a := p.a
	q := g.dev.Queue()
	if err := q.WriteBuffer(a.tokens, 0, b.tokens); err != nil {
		return fmt.Errorf("gpu loss: %w", err)
	}
	if err := q.WriteBuffer(a.targets, 0, b.targets); err != nil {
		return fmt.Errorf("gpu loss: %w", err)
	}
	ranges := g.wteRanges()
	g.compileBatch(p, b, ranges)
	enc, err := g.dev.CreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "gpt2 loss"})
	if err != nil {
		return fmt.Errorf("gpu loss: %w", err)
	}
	if g.profile {
		n := g.opsPerBatch(b.chunks, len(ranges))
		if p.topK > 0 {
			n += g.topDispatches(ranges, p.topK)
		}
		if p.qs, err = g.newProfileQueries(n); err != nil {
			enc.Finish()
			return fmt.Errorf("gpu loss: %w", err)
		}
	}
	r := &recorder{g: g, enc: enc, pass: enc.BeginComputePass(nil), a: a, p: p}
	g.encode(r, b, ranges)
	if r.err == nil {
		r.pass.End()
		enc.CopyBufferToBuffer(a.nll, 0, a.nllRead, 0, uint64(4*b.P))
		if p.topK > 0 {
			g.copyTopK(enc, a, b.P, p.topK)
		}
	}
	cb, err := enc.Finish()
	if r.err != nil {
		err = r.err
	}
	if err == nil {
		_, err = q.Submit(cb)
	}
	if err != nil {
		closeQuerySets(p.qs)
		return fmt.Errorf("gpu loss: %w", err)
	}
	return nil
}

// compileBatch creates, on every core at once, the pipelines that batch b's
// recording will ask for and that are not made yet (makePipelines). g.mu
// is held.
func (g *GPT2) compileBatch(p *Pending, b *batch, ranges [][2]int) {
	key := recordingKey{B: b.B, W: b.W, T: b.chunk, topK: p.topK}
	g.makePipelines(key, p.a, p, func(r *recorder) { g.encode(r, b, ranges) })
}

// recordingKey is the shape of a recording, for makePipelines: a batch's
// sequences, width, chunk and top-K, or (session) a session's chunk of T
// positions into a cache of W.
type recordingKey struct {
	session       bool
	B, W, T, topK int
}

// makePipelines creates, on every core at once, the pipelines that record
// will ask for and that are not made yet, as a dry recording (record given a
// recorder whose op only names them) finds them: a first recording's every
// one, which it would otherwise create one after another as it reached them
// (seconds each for the big ones where a driver compiles from a cold shader
// cache). Once per shape of recording (key): the dry walk took 0.13 ms for
// 12 layers here, which a generation would otherwise pay for every token,
// and a later recording of the same shape asks for the same pipelines (one
// that does not, after a new tuning, is made as the recording reaches it).
// g.mu is held.
func (g *GPT2) makePipelines(key recordingKey, a *arena, p *Pending, record func(r *recorder)) {
	if g.prepared[key] {
		return
	}
	start := time.Now()
	defer func() { g.setup.Compile += time.Since(start) }()
	if g.prepared == nil {
		g.prepared = map[recordingKey]bool{}
	}
	g.prepared[key] = true
	var jobs []pipelineJob
	record(&recorder{g: g, a: a, p: p, dry: &jobs})
	type job struct {
		k *Kernel
		c constSet
	}
	seen := map[job]bool{}
	missing := jobs[:0]
	for _, j := range jobs {
		if !seen[job{j.k, j.consts}] && !j.k.made(j.consts) {
			seen[job{j.k, j.consts}] = true
			missing = append(missing, j)
		}
	}
	if len(missing) > 0 {
		compilePipelines(missing)
	}
}

// encode records the forward pass of every chunk, the gather of the rows
// that predict targets, the LM head with its loss and the sums.
func (g *GPT2) encode(r *recorder, b *batch, ranges [][2]int) {
	a := r.a
	cfg := g.cfg
	B, C := b.B, cfg.NEmbd
	const f = 4
	whole := func(x *wgpu.Buffer) Buf { return Buf{Buffer: x} }
	for c := range b.chunks {
		t0 := c * b.chunk
		T := min(b.chunk, b.W-t0) // rows per sequence in this chunk
		tok := Buf{Buffer: a.tokens, Offset: uint64(4 * c * b.chunkToks), Size: uint64(4 * b.chunkToks)}
		g.forwardChunk(r, tok, B, T, t0, b.W, b.chunks > 1, ranges)
		if r.err != nil {
			return
		}
		if r.dry != nil {
			continue
		}
		// Gather the rows of this chunk that predict a target: contiguous per sequence.
		r.pass.End()
		for i, s := range b.seqs {
			lo, hi := max(s.First-1, t0), min(len(s.Tokens)-1, t0+T) // predicting positions in the chunk
			if lo < hi {                                             // position t predicts target targetBase(i) + t - (First-1)
				r.enc.CopyBufferToBuffer(a.ln, uint64(f*(i*T+lo-t0)*C), a.hP, uint64(f*(b.targetBase(i)+lo-(s.First-1))*C), uint64(f*(hi-lo)*C))
			}
		}
		r.pass = r.enc.BeginComputePass(nil)
	}
	P := b.P
	parts := g.lmParts()
	h := whole(a.hP)
	// lmhead_loss.wgsl: lmHeadRows positions per invocation, one vocabulary tile per workgroup row.
	lm, lmConsts, lmGroups := g.lmHead, consts("VT", float64(g.vt)), func(P, V int) extent {
		return perInvocation(ceilDiv(P, lmHeadRows)).withY(ceilDiv(V, g.vt))
	}
	if g.sharedMatmul {
		nt := g.lmSlice()
		// Slices of nt tiles: ceil(P/BM) x ceil(V/(nt*VT)) workgroups, 50 partials per GPT-2 position.
		lm, lmConsts, lmGroups = g.lmHeadShared, consts("BM", float64(g.lmRows)).with("VT", float64(g.vt)).with("NT", float64(nt)), func(P, V int) extent {
			return perWorkgroup(ceilDiv(P, g.lmRows)).withY(ceilDiv(V, g.vt*nt))
		}
		if g.coop != nil { // the matrix units: the same slices, so the same partials; h rounded to f16 once
			lm, lmConsts, lmGroups = g.coopHeadFor(C)
			h = whole(a.hP16)
			g.coop.roundH(r, whole(a.hP), h, P*C)
		}
	}
	if r.p.topK > 0 {
		// Before the loss, so that the NLLs' copy to the host, which follows
		// nll_combine, orders every earlier write before the copies.
		g.encodeTopK(r, b, ranges)
	}
	for _, vr := range ranges {
		r.op(lm, lmConsts, lmHeadBufs{H: h, WTE: g.headRange(vr), Targets: whole(a.targets), Part: whole(a.part)},
			lmHeadParams{P: uint32(P), C: uint32(C), V: uint32(vr[1] - vr[0]), V0: uint32(vr[0])},
			lmGroups(P, vr[1]-vr[0]))
	}
	// The loss per target; the host adds them.
	r.op(g.nllCombine, consts("WG", float64(flatWG(g.dev.Limits(), nllCombineWG))), nllCombineBufs{Part: whole(a.part), Targets: whole(a.targets), NLL: whole(a.nll)},
		nllCombineParams{P: uint32(P), Tiles: uint32(parts)}, perInvocation(P))
}

// chunkShape is where the chunk a forward pass records lies: B sequences x T
// positions starting at t0, over KV caches of S positions per sequence.
type chunkShape struct{ B, T, t0, S int }

// forwardChunk records the forward pass of one chunk of B sequences x T
// positions starting at t0 (tokens in tok, (B, T) u32), over KV caches of S
// positions per sequence (one per layer when layered, else one reused by
// every layer), leaving the final norm's output in the arena's ln buffer
// (B*T, C): GPT-2's here, the Llama family's in forwardLlama.
func (g *GPT2) forwardChunk(r *recorder, tok Buf, B, T, t0, S int, layered bool, ranges [][2]int) {
	sh := chunkShape{B: B, T: T, t0: t0, S: S}
	if g.llama != nil {
		g.forwardLlama(r, tok, sh, layered, ranges)
		return
	}
	a := r.a
	cfg := g.cfg
	C, H, I := cfg.NEmbd, cfg.NHead, cfg.Inner()
	N := B * T
	whole := func(x *wgpu.Buffer) Buf { return Buf{Buffer: x} }
	ln := g.normFor(g.layernorm, g.layernormSubgroup, g.layernormRows, C)
	layernorm := func(out, x, w, bias *wgpu.Buffer, rows int) {
		r.op(ln.k, ln.consts, layerNormBufs{X: whole(x), W: whole(w), B: whole(bias), Out: whole(out)},
			layerNormParams{Rows: uint32(rows), C: uint32(C), Eps: float32(cfg.LayerNormEps)}, ln.groups(rows))
	}
	for _, vr := range ranges {
		r.op(g.embed, constSet{}, embedBufs{Tokens: tok, WTE: g.wteRange(vr), WPE: whole(g.wpe), Out: whole(a.res)},
			embedParams{N: uint32(N), T: uint32(T), C: uint32(C), Pos0: uint32(t0), V0: uint32(vr[0]), V: uint32(vr[1] - vr[0])},
			perInvocation(N*C))
	}
	kvw := kvWriteParams{B: uint32(B), T: uint32(T), C: uint32(C), H: uint32(H), S: uint32(S), Pos0: uint32(t0)}
	for i := range g.layers {
		w := &g.layers[i]
		kc, vc := g.layerCache(a, i, layered)
		layernorm(a.ln, a.res, w.ln1w, w.ln1b, N)
		if !g.matmulOp(r, sh, a.qkv, a.ln, w.qkvW, w.qkvB, kc, vc, N, C, 3*C, epiQKV) {
			r.op(g.kvWrite, constSet{}, kvWriteBufs{QKV: whole(a.qkv), KC: kc, VC: vc}, kvw, perInvocation(N*C/4))
		}
		g.attentionOp(r, sh, i, kc, vc, 3*C)
		g.matmulOp(r, sh, a.res, a.att, w.projW, w.projB, kc, vc, N, C, C, epiAdd)
		layernorm(a.ln, a.res, w.ln2w, w.ln2b, N)
		g.matmulOp(r, sh, a.fc, a.ln, w.fcW, w.fcB, kc, vc, N, C, I, g.geluEpilogue())
		g.matmulOp(r, sh, a.res, a.fc, w.fcProjW, w.fcProjB, kc, vc, N, I, C, epiAdd)
	}
	layernorm(a.ln, a.res, g.lnfW, g.lnfB, N)
}

// layerCache is layer i's K and V cache in arena a: its own range when every
// layer keeps its cache (layered), else the one range all layers reuse.
func (g *GPT2) layerCache(a *arena, i int, layered bool) (kc, vc Buf) {
	li := 0
	if layered {
		li = i
	}
	kc = Buf{Buffer: a.kc, Offset: uint64(li) * a.layerStride, Size: a.layerStride}
	vc = Buf{Buffer: a.vc, Offset: uint64(li) * a.layerStride, Size: a.layerStride}
	return kc, vc
}

// matmulOp records out = epilogue(x·w + bias), x (M, K), w (K, N); kc and vc
// are the layer's KV cache, which matmul_shared.wgsl binds for every
// epilogue and writes with epiQKV only. It reports whether the kernel took
// the epilogue (matmul.wgsl, and matmul_shared.wgsl without the KV cache
// bindings, have no epiQKV: it is then epiStore, to be followed by
// kv_write.wgsl).
func (g *GPT2) matmulOp(r *recorder, sh chunkShape, out, x, w, bias *wgpu.Buffer, kc, vc Buf, M, K, N int, epi epilogue) bool {
	mm := g.matmulFor(M, K, N, x.Size(), w.Size())
	if epi == epiQKV && !mm.kv {
		epi = epiStore
	}
	cs := mm.consts.with("EPI", float64(epi))
	var bufs, params any = matmulBufs{X: Buf{Buffer: x}, W: Buf{Buffer: w}, Bias: Buf{Buffer: bias}, Out: Buf{Buffer: out}},
		matmulParams{M: uint32(M), N: uint32(N), K: uint32(K)}
	if mm.shared {
		params = matmulSharedParams{M: uint32(M), N: uint32(N), K: uint32(K),
			T: uint32(sh.T), H: uint32(g.cfg.NHead), S: uint32(sh.S), Pos0: uint32(sh.t0)}
	}
	if mm.kv {
		bufs = matmulSharedBufs{X: Buf{Buffer: x}, W: Buf{Buffer: w}, Bias: Buf{Buffer: bias}, Out: Buf{Buffer: out}, KC: kc, VC: vc}
	}
	r.op(mm.k, cs, bufs, params, mm.work(M, N))
	return epi == epiQKV
}

// attentionOp records the attention of the chunk sh over layer l's cache
// kc, vc: queries from the arena's qkv (rows of ld values, the queries
// first), output to its att. attention.wgsl on software adapters,
// attention_shared.wgsl (flash attention, K/V tiles in workgroup memory) on
// GPUs, attention_coop.wgsl where the matrix units are in use (attnCoopFor).
func (g *GPT2) attentionOp(r *recorder, sh chunkShape, l int, kc, vc Buf, ld int) {
	a, cfg := r.a, g.cfg
	H, hd := cfg.NHead, cfg.HeadDim()
	QD := H * hd
	params := attentionParams{B: uint32(sh.B), T: uint32(sh.T), C: uint32(QD), H: uint32(H), KV: uint32(cfg.KVHeads()),
		S: uint32(sh.S), Pos0: uint32(sh.t0), LD: uint32(ld), LScale: 1 / cfg.AttnLayerDivisor(l)}
	k, cs, work := g.attention, consts("HD", float64(hd)), perInvocation(sh.B*H*sh.T)
	if ac := g.attnCoopFor(sh.B, sh.T); ac != nil { // on the matrix units
		k, cs, work = ac.k, constSet{}, ac.work(sh.B, H, sh.T)
	} else if g.sharedMatmul { // flash attention: K/V tiles in workgroup memory
		tiles := attnTilesFor(g.dev, hd)
		k, cs, work = g.attnShared(tiles), tiles.constSet(hd), perWorkgroup(tiles.groups(sh.B, H, sh.T))
	}
	r.op(k, cs, attentionBufs{QKV: Buf{Buffer: a.qkv}, KC: kc, VC: vc, Out: Buf{Buffer: a.att}}, params, work)
}

// targetBase is the index of sequence i's first target among the batch's
// targets (sequences in order).
func (b *batch) targetBase(i int) int {
	if b.firstTgt == nil {
		b.firstTgt = make([]int, len(b.seqs))
		n := 0
		for j, s := range b.seqs {
			b.firstTgt[j] = n
			n += s.Scored()
		}
	}
	return b.firstTgt[i]
}

// loopBudget is the most loop iterations a kernel invocation may run on an
// adapter with a loop limit, with room to spare below Mesa's 65535.
const loopBudget = 60000

// Close releases the weights, the activation memory and the pipelines;
// batches not waited for are waited for first (their results are lost).
func (g *GPT2) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	var errs []error
	g.freeArenas()
	for _, b := range g.weights {
		errs = append(errs, b.Close())
	}
	return errors.Join(errs...)
}

// matmulVariant is a matmul kernel, the constants its pipeline is created
// with and its dispatch geometry, computed from those constants.
type matmulVariant struct {
	k      *Kernel
	shared bool                  // matmul_shared.wgsl's push constants: it or matmul_coop.wgsl (else matmul.wgsl)
	kv     bool                  // binds the KV cache and takes EPI_QKV (Kernel.BindsKV): shared, on a device with the storage buffers
	consts constSet              // tiles, VEC, WG (EPI is added per dispatch)
	work   func(M, N int) extent // the dispatch of an (M, N) output
}

// matmulFor is the matmul kernel for an (M, K) x (K, N) product on this
// adapter (see the package doc), x and w bound whole from buffers of xBytes
// and wBytes bytes: register tiles without barriers on software adapters;
// workgroup-memory tiles on GPUs, with the tiles the autotuner chose for the
// shape (or the device's default when those do not fit it), vector global
// loads (VEC) where K and N are multiples of 4. matmul_shared.wgsl binds x and
// w as vec4 arrays, so for other K, N it needs buffers that hold the last
// partial vec4 whole (sharedCovers); where they do not, matmul.wgsl serves.
//
// With the matrix units in use (g.coop, see MatrixUnits), matmul_coop.wgsl
// takes the products matmul_shared.wgsl would (same bindings).
func (g *GPT2) matmulFor(M, K, N int, xBytes, wBytes uint64) matmulVariant {
	if g.sharedMatmul && sharedCovers(M, K, N, g.weightBytes(), xBytes, wBytes) {
		if g.coop != nil {
			return g.coopMatmulFor(M, K, N)
		}
		t := g.tilesFor(M, K, N)
		if t.fits(g.dev) != nil {
			t = g.tiles
		}
		return g.sharedVariant(K, N, t)
	}
	return matmulVariant{k: g.matmul, consts: consts("WG", matmulWG), work: func(M, N int) extent {
		return perInvocation(ceilDiv(M, matmulTileM) * ceilDiv(N, matmulTileN)) // a 4 x 4 tile per invocation
	}}
}

// sharedVariant is matmul_shared.wgsl with tiles t, vector global loads
// (VEC) where K and N are multiples of 4.
func (g *GPT2) sharedVariant(K, N int, t matmulTiles) matmulVariant {
	vec := 0.0
	if K%4 == 0 && N%4 == 0 {
		vec = 1
	}
	return matmulVariant{k: g.matmulShared, shared: true, kv: g.matmulShared.BindsKV(), consts: t.constSet().with("VEC", vec), work: func(M, N int) extent {
		return perWorkgroup(t.groups(M, N)) // a BM x BN tile per workgroup
	}}
}

// sharedCovers reports whether buffers of xBytes and wBytes bytes hold x
// (M, K) and w (K, N) (wb bytes per weight) as matmul_shared.wgsl's vec4
// bindings read them: ⌈M*K/4⌉ and ⌈K*N/4⌉ whole vec4s.
func sharedCovers(M, K, N, wb int, xBytes, wBytes uint64) bool {
	return xBytes >= uint64(16*ceilDiv(M*K, 4)) && wBytes >= uint64(4*wb*ceilDiv(K*N, 4))
}

// Software reports whether an adapter is a software rasterizer (lavapipe,
// SwiftShader: Vulkan device type "cpu"), which gets the barrier-free kernels.
func Software(info wgpu.AdapterInfo) bool { return info.DeviceType == "cpu" }

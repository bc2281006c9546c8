package model

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// CPU is the pure-Go GPT-2 forward pass and loss: exact Hugging Face
// GPT2LMHeadModel semantics in float32, on all cores. It is the fallback where no
// GPU exists and the reference the GPU path is tested against. A CPU is safe for
// concurrent use. Its results are bit-identical for any thread count, and each
// target's NLL does not depend on which other sequences share its batch.
//
// On amd64 the matrix products and exponentials run generated assembly kernels
// (AVX-512 or AVX2+FMA, the widest the CPU has; ops_kernels_amd64.go), elsewhere
// portable scalar Go; the results differ between kernel sets in the last bits
// (another summation order, fused multiply-adds), never between thread counts.
// Weights read by LoadCPU from an F16 or BF16 checkpoint stay 16-bit and are
// widened exactly inside the kernels; all arithmetic is float32. In the bf16
// mode (LoadOptions.BF16, NewCPUBF16; bf16.go) the weight products take
// bf16 operands instead, as AVX512_BF16 computes them.
type CPU struct {
	cfg        Config
	wte        matrix    // (V, C)
	wpe        []float32 // (NPositions, C)
	lnfw, lnfb []float32 // (C)
	layers     []cpuLayer
	lmHead     matrix // (V, C); the same elements as wte when tied
	threads    int
	maxRows    int   // rows (tokens) per chunk of a batch; at least one sequence
	err        error // what is wrong with the model, reported by Loss

	bf16 bf16Set // the bf16 mode's kernels; bf16Off: the f32 mode
	rope *rope   // the rotary embedding's table (the Llama family)

	mu      sync.Mutex
	spare   []float32 // an arena kept for the next call
	spare16 []uint16  // a bf16 panel kept for the next call (bf16 mode)
}

// cpuLayer is one block's weights as the CPU kernels want them: every
// matrix (out, in), so every matmul reduces along contiguous rows, in float32
// or in a checkpoint's 16 bits (LoadCPU), or in the f32 mode with the
// AVX-512, AVX2 or NEON kernels the same (out, in) matrix in panels of 32 rows
// (ops_panel.go); the vectors in float32. GPT-2's
// Conv1D matrices are transposed to that layout; the Llama family's
// nn.Linear ones are already in it, with q, k and v stacked into qkvW, o_proj
// as projW, gate_proj as fcW, up_proj as upW and down_proj as fcProjW. An
// absent bias or norm is nil.
type cpuLayer struct {
	ln1w, ln1b   []float32 // (C) ln_1; input_layernorm (ln1b nil)
	qkvW         matrix    // (3C, C); the Llama family's (QDim+2·KVDim, C)
	qkvB         []float32 // (3C)
	qNorm, kNorm []float32 // (HeadDim) Qwen3's q_norm and k_norm
	projW        matrix    // (C, C); o_proj (C, QDim)
	projB        []float32 // (C)
	ln2w, ln2b   []float32 // (C) ln_2; post_attention_layernorm (ln2b nil)
	fcW          matrix    // (Inner, C), Inner 4C but for n_inner; gate_proj (Inner, C)
	fcB          []float32 // (Inner)
	upW          matrix    // up_proj (Inner, C); GPT-2 has none
	upB          []float32 // (Inner)
	fcProjW      matrix    // (C, Inner); down_proj (C, Inner)
	fcProjB      []float32 // (C)
}

// matrices lists the layer's matrices that hold elements.
func (l *cpuLayer) matrices() []*matrix {
	var ms []*matrix
	for _, m := range []*matrix{&l.qkvW, &l.projW, &l.fcW, &l.upW, &l.fcProjW} {
		if m.len() > 0 {
			ms = append(ms, m)
		}
	}
	return ms
}

// NewCPU prepares m for the CPU forward on threads goroutines (threads <= 0:
// GOMAXPROCS; at most MaxThreads). It keeps a transposed copy of every block's matrices (as much
// memory again as the blocks' weights) and references the embeddings, so m
// stays usable; where the kernels read the panel layout (AVX-512 or AVX2,
// ops_panel.go) every matrix, the embeddings too, is a packed copy instead.
// A nil Weights.LMHead means tied to WTE. A model whose weights
// do not match its Config is not rejected here: Loss reports the problem.
// NewCPUOwned holds one copy instead.
func NewCPU(m *Model, threads int) *CPU {
	c := newCPU(m, threads, false)
	if c.err == nil {
		c.packPanels()
	}
	return c
}

// NewCPUOwned is NewCPU for a Model nobody else uses: it consumes m. Each
// block matrix is transposed in place (through one scratch matrix), the CPU
// takes the slice over and the Layer field is set to nil; the vectors and
// embeddings are shared. So the CPU holds one copy of the weights, and the
// peak while packing is the model plus one block matrix. Results are
// bit-identical to NewCPU's. After the call m's block matrices are nil: do not
// use m (or its Reader) for anything else. Where the kernels read the panel
// layout (ops_panel.go) the matrices are packed one after another (the peak
// one matrix more) and m's embeddings are set to nil too, the CPU holding
// its packed copy. A model whose weights do not match
// its Config is left untouched, and Loss reports the problem.
func NewCPUOwned(m *Model, threads int) *CPU {
	c := newCPU(m, threads, true)
	if c.err == nil && c.packPanels() {
		m.Weights.WTE, m.Weights.LMHead = nil, nil
	}
	return c
}

// MaxThreads is the most goroutines a CPU uses, whatever it is asked: four
// per core, at least 64. Each has its own scratch, so a count far above the
// cores costs memory (--threads 100000 asked for 7.2 GB) and buys no speed.
func MaxThreads() int { return max(64, 4*runtime.NumCPU()) }

// cpuThreads is the goroutines a CPU asked for threads uses: GOMAXPROCS for
// threads <= 0, at most MaxThreads.
func cpuThreads(threads int) int {
	if threads <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return min(threads, MaxThreads())
}

func newCPU(m *Model, threads int, own bool) *CPU {
	threads = cpuThreads(threads)
	if m == nil {
		return &CPU{threads: threads, err: errors.New("cpu: nil model")}
	}
	c := &CPU{cfg: m.Config, threads: threads, maxRows: 2048}
	if err := checkShapes(m); err != nil {
		c.err = fmt.Errorf("cpu: model %s: %w", m.Source, err)
		return c
	}
	c.maxRows = max(c.maxRows, m.Config.NPositions)
	if m.Config.Arch == ArchLlama {
		return newLlamaCPU(c, m, own)
	}
	w := &m.Weights
	c.wte, c.wpe, c.lnfw, c.lnfb = f32Matrix(w.WTE), w.WPE, w.LNFW, w.LNFB
	c.lmHead = c.wte
	if w.LMHead != nil {
		c.lmHead = f32Matrix(w.LMHead)
	}
	C, I := m.Config.NEmbd, m.Config.Inner()
	c.layers = make([]cpuLayer, len(m.Weights.Layers))
	layer := func(l *Layer, tr func(w *[]float32, rows, cols int) []float32) cpuLayer {
		return cpuLayer{
			ln1w: l.LN1W, ln1b: l.LN1B,
			qkvW: f32Matrix(tr(&l.QKVW, C, 3*C)), qkvB: l.QKVB,
			projW: f32Matrix(tr(&l.ProjW, C, C)), projB: l.ProjB,
			ln2w: l.LN2W, ln2b: l.LN2B,
			fcW: f32Matrix(tr(&l.FCW, C, I)), fcB: l.FCB,
			fcProjW: f32Matrix(tr(&l.FCProjW, I, C)), fcProjB: l.FCProjB,
		}
	}
	if !own {
		c.parallelFor(len(c.layers), func(_, i int) {
			c.layers[i] = layer(&m.Weights.Layers[i], func(w *[]float32, rows, cols int) []float32 {
				return transpose(*w, rows, cols)
			})
		})
		return c
	}
	// One matrix after another, so one scratch matrix (the largest, C x 3C
	// or C x Inner) is all the memory packing adds.
	scratch := make([]float32, max(3*C, I)*C)
	for i := range c.layers {
		c.layers[i] = layer(&m.Weights.Layers[i], func(w *[]float32, rows, cols int) []float32 {
			t := *w
			transposeInto(c, scratch[:rows*cols], t, rows, cols)
			copy(t, scratch)
			*w = nil
			return t
		})
	}
	return c
}

// NewCPUBF16 is NewCPU for the bf16 mode (bf16.go): the CPU holds every
// matrix of m rounded to bf16 (m stays usable), and its weight products take
// bf16 operands as VDPBF16PS does. portable runs them on the portable
// kernels (same bits, any CPU, slow); without it a CPU lacking AVX512_BF16
// is an error (unless WGPU_EVAL_CPU_KERNELS=generic).
func NewCPUBF16(m *Model, threads int, portable bool) (*CPU, error) {
	set, err := pickBF16(portable)
	if err != nil {
		return nil, err
	}
	c := newCPU(m, threads, false)
	if c.err != nil {
		return c, nil // Loss reports it
	}
	tied, head := c.lmHead.same(c.wte), c.lmHead
	c.bf16 = set
	c.wte = c.toBF16(c.wte, set)
	c.lmHead = c.wte
	if !tied {
		c.lmHead = c.toBF16(head, set)
	}
	for i := range c.layers {
		l := &c.layers[i]
		for _, w := range l.matrices() {
			*w = c.toBF16(*w, set)
		}
	}
	return c, nil
}

// Name is the backend's name, "cpu".
func (c *CPU) Name() string { return "cpu" }

// transpose returns the (cols, rows) transpose of w (rows, cols).
func transpose(w []float32, rows, cols int) []float32 {
	t := make([]float32, rows*cols)
	transposeBlocks(t, w, rows, cols, 0, rows)
	return t
}

// transposeInto writes the (cols, rows) transpose of w (rows, cols) to t,
// bands of rows in parallel on c's threads.
func transposeInto[T float32 | uint16](c *CPU, t, w []T, rows, cols int) {
	const band = 256
	c.parallelFor((rows+band-1)/band, func(_, b int) {
		transposeBlocks(t, w, rows, cols, b*band, min(rows, (b+1)*band))
	})
}

// transposeBlocks writes rows [r0, r1) of w (rows, cols) to their columns of
// t (cols, rows), in 32x32 blocks so both sides stay in cache.
func transposeBlocks[T float32 | uint16](t, w []T, rows, cols, r0, r1 int) {
	const b = 32
	for rb := r0; rb < r1; rb += b {
		for c0 := 0; c0 < cols; c0 += b {
			for r := rb; r < min(r1, rb+b); r++ {
				for col := c0; col < min(cols, c0+b); col++ {
					t[col*rows+r] = w[r*cols+col]
				}
			}
		}
	}
}

// checkShapes reports the first weight whose length does not match m.Config.
func checkShapes(m *Model) error {
	cfg, w := m.Config, &m.Weights
	if err := checkConfig(cfg); err != nil {
		return err
	}
	if len(w.Layers) != cfg.NLayer {
		return fmt.Errorf("%d layers, config says %d", len(w.Layers), cfg.NLayer)
	}
	specs := cfg.Tensors()
	if w.LMHead != nil {
		specs = append(specs, cfg.LMHeadSpec())
	}
	for _, s := range specs {
		if got := len(*w.slot(s)); got != s.NumElements() {
			return fmt.Errorf("%s has %d values, want %d", s.Name, got, s.NumElements())
		}
	}
	return nil
}

// checkConfig reports a Config the CPU forward cannot run.
func checkConfig(cfg Config) error {
	if cfg.Arch != ArchGPT2 {
		return cfg.Validate()
	}
	if cfg.NLayer <= 0 || cfg.NHead <= 0 || cfg.NEmbd <= 0 || cfg.NPositions <= 0 || cfg.VocabSize <= 0 {
		return fmt.Errorf("invalid config %+v", cfg)
	}
	if cfg.NEmbd%cfg.NHead != 0 {
		return fmt.Errorf("n_embd %d is not a multiple of n_head %d", cfg.NEmbd, cfg.NHead)
	}
	return nil
}

// validate checks every sequence of a batch against the model.
func (c *CPU) validate(seqs []Sequence) error {
	if err := CheckSequences(c.cfg, seqs); err != nil {
		return fmt.Errorf("cpu loss: %w", err)
	}
	return nil
}

// Loss returns the NLL sums of every target of seqs (Tokens[t] for t >= First,
// predicted from Tokens[:t]). Sequences are run back to back in chunks of about
// maxRows tokens, every op parallel over the CPU's threads; per-target NLLs are
// added in float64 in sequence and position order. ctx is checked between
// layers; a ctx from WithLossProgress gets the progress after each layer.
func (c *CPU) Loss(ctx context.Context, seqs []Sequence) (LossSums, error) {
	return c.loss(ctx, seqs, nil)
}

// LossPerToken is Loss that also returns every target's NLL, float32, in
// sequence and position order (the order Loss adds them in): nll[i] is the
// i-th target of the batch. The sums are bit-identical to Loss's.
func (c *CPU) LossPerToken(ctx context.Context, seqs []Sequence) (LossSums, []float32, error) {
	kp := &kept{nll: []float32{}}
	sums, err := c.loss(ctx, seqs, kp)
	if err != nil {
		return LossSums{}, nil, err
	}
	return sums, kp.nll, nil
}

// loss is Loss; when keep is not nil, every target's NLL (and top
// log-probabilities) are appended to it.
func (c *CPU) loss(ctx context.Context, seqs []Sequence, keep *kept) (LossSums, error) {
	if c.err != nil {
		return LossSums{}, c.err
	}
	if err := c.validate(seqs); err != nil {
		return LossSums{}, err
	}
	var todo []Sequence // sequences with at least one target
	targets := 0
	for _, s := range seqs {
		if s.Scored() > 0 {
			todo = append(todo, s)
			targets += s.Scored()
		}
	}
	meter := newLossMeter(ctx, targets)
	var sums LossSums
	for len(todo) > 0 {
		n, rows := 0, 0
		for n < len(todo) && (n == 0 || rows+len(todo[n].Tokens) <= c.maxRows) {
			rows += len(todo[n].Tokens)
			n++
		}
		if err := c.lossChunk(ctx, todo[:n], &sums, keep, meter); err != nil {
			return LossSums{}, err
		}
		todo = todo[n:]
	}
	return sums, nil
}

// lossChunk runs the forward over seqs back to back and adds their NLLs to sums
// (and appends them to keep, when not nil), reporting its progress to meter
// (nil: none). Every sequence has at least one target, so at least two tokens.
func (c *CPU) lossChunk(ctx context.Context, seqs []Sequence, sums *LossSums, keep *kept, meter *lossMeter) error {
	cfg := c.cfg
	C := cfg.NEmbd
	spans := make([]span, len(seqs))
	d := chunkDims{workers: c.threads}
	for i, s := range seqs {
		// The last token predicts nothing that is scored: its row is not run.
		n := len(s.Tokens) - 1
		spans[i] = span{d.N, n}
		d.N += n
		d.P += s.Scored()
		d.maxT = max(d.maxT, n)
		d.keyPanels += keyPanels(n)
	}
	tokens := make([]int32, 0, d.N)
	targets := make([]int32, 0, d.P)
	rows := make([]int, 0, d.P) // the residual row predicting each target
	for i, s := range seqs {
		tokens = append(tokens, s.Tokens[:spans[i].n]...)
		for t := s.First; t < len(s.Tokens); t++ {
			targets = append(targets, s.Tokens[t])
			rows = append(rows, spans[i].off+t-1)
		}
	}

	var a acts
	table := a.layout(cfg, d)
	arena := c.getArena(arenaSize(table))
	defer c.putArena(arena)
	carve(arena, table)

	N := d.N
	meter.chunk(cfg, spans, N, d.P)
	encoderForward(a.residual, tokens, c.wte, c.wpe, spans, C) // (N, C)
	buf := blockBufs{residual: a.residual, ln: a.ln, qkv: a.qkv, atty: a.atty, fch: a.fch, tile: a.tile}
	att := &chunkAttention{c: c, spans: spans, kt: a.kt, vt: a.vt, scores: a.scores, maxT: d.maxT}
	for l := range c.layers {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cpu loss: %w", err)
		}
		c.block(l, &buf, att, N)
		meter.layerDone(l + 1)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cpu loss: %w", err)
	}
	for p, r := range rows { // ln_f only where a target is predicted
		copy(a.ln[p*C:][:C], a.residual[r*C:][:C])
	}
	c.finalNorm(a.lnf, a.ln, d.P) // (P, C)
	c.lmHeadLossForward(a.nll, a.lnf, c.lmHead, targets, d.P, C, cfg.VocabSize, a.tileMax, a.tileSum, a.tgt, a.logits)
	for _, v := range a.nll {
		sums.AddNLL(float64(v))
	}
	if keep != nil {
		keep.add(c, a.nll, a.lnf, d.P)
	}
	meter.chunkDone()
	return nil
}

// finalNorm: out (n, C) = ln_f(inp), or the Llama family's final RMSNorm.
func (c *CPU) finalNorm(out, inp []float32, n int) {
	C, eps := c.cfg.NEmbd, c.cfg.LayerNormEps
	if c.cfg.Arch == ArchLlama {
		c.rmsnormForward(out, inp, c.lnfw, n, C, eps)
		return
	}
	c.layernormForward(out, inp, c.lnfw, c.lnfb, n, C, eps)
}

// getArena returns n floats of scratch, reusing the spare arena when it is big enough.
func (c *CPU) getArena(n int) []float32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return takeSpare(&c.spare, n)
}

// putArena keeps a for the next call when it is the biggest seen.
func (c *CPU) putArena(a []float32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keepSpare(&c.spare, a)
}

// takeSpare returns n elements of *spare, emptying it, when it holds that
// many, else new ones.
func takeSpare[T any](spare *[]T, n int) []T {
	if cap(*spare) >= n {
		p := (*spare)[:n]
		*spare = nil
		return p
	}
	return make([]T, n)
}

// keepSpare keeps p in *spare when it is bigger than what *spare holds.
func keepSpare[T any](spare *[]T, p []T) {
	if cap(p) > cap(*spare) {
		*spare = p
	}
}

// parallelFor runs fn(worker, task) for every task in [0, n) on up to c.threads
// goroutines; tasks are handed out from a shared counter (the machine may be
// busy), and worker in [0, c.threads) selects the caller's scratch.
func (c *CPU) parallelFor(n int, fn func(worker, task int)) {
	workers := min(c.threads, n)
	if workers <= 1 {
		for t := range n {
			fn(0, t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for worker := range workers {
		wg.Go(func() {
			for {
				t := int(next.Add(1)) - 1
				if t >= n {
					return
				}
				fn(worker, t)
			}
		})
	}
	wg.Wait()
}

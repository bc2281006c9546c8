package shaders

import (
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// The activation memory of batches: arenas, their sizes for a model, and the
// batch size a device's memory allows.

// arenaCount is how many batches can be in flight: one runs on the GPU while
// the host writes the next one's tokens and records its command buffer.
const arenaCount = 2

// arenaSize is what an arena holds: activations for rows rows of a chunk,
// a KV cache for cacheTok padded tokens in each of cacheLayers layers, and
// targets targets.
type arenaSize struct {
	rows, cacheTok, cacheLayers, targets, tokens int
}

func (a arenaSize) holds(b arenaSize) bool {
	return a.rows >= b.rows && a.cacheTok >= b.cacheTok && a.cacheLayers >= b.cacheLayers &&
		a.targets >= b.targets && a.tokens >= b.tokens
}

func (a arenaSize) union(b arenaSize) arenaSize {
	return arenaSize{max(a.rows, b.rows), max(a.cacheTok, b.cacheTok), max(a.cacheLayers, b.cacheLayers),
		max(a.targets, b.targets), max(a.tokens, b.tokens)}
}

// arena is the device memory of one batch in flight: the activations, the KV
// cache, the loss buffers, a host-visible readback of the NLLs, and the bind
// groups made for them (made once, reused by every batch that fits).
type arena struct {
	size    arenaSize
	bufs    []*wgpu.Buffer
	groups  map[bindKey]*wgpu.BindGroup // by pipeline and buffer ranges
	pending *Pending                    // the batch that last used the arena, until it is waited for

	// The buffers of arenaLayout.
	tokens, targets, res, ln, qkv, att, fc, kc, vc, hP, part, nll *wgpu.Buffer
	// hP16 is hP rounded to f16 for lmhead_loss_coop.wgsl (to_f16.wgsl);
	// 16 bytes where the matrix units cannot run (arenaDims.h16).
	hP16 *wgpu.Buffer
	// nllRead is the host-visible copy of nll: every batch reads its
	// per-target NLLs back, and the host adds them exactly.
	nllRead     *wgpu.Buffer
	layerStride uint64 // bytes between layers' caches

	// top holds the buffers of SubmitOptions.TopLogprobs (topk.go); made on first use.
	top *topBuffers
}

func (a *arena) close() {
	for _, g := range a.groups {
		g.Close()
	}
	for _, b := range a.bufs {
		b.Close()
	}
	a.groups, a.bufs, a.top = nil, nil, nil
}

// widths are the f32 values per row of the activations that differ between
// the decoders: qkv (GPT-2's 3C; the Llama family's q|k|v), att (the
// attention's output: C; NHead * HeadDim), fc (the MLP's hidden layer: 4C;
// the SwiGLU's I), and kv, per cached token and layer (C; KVHeads *
// HeadDim).
type widths struct{ qkv, att, fc, kv int }

func (g *GPT2) widths() widths {
	c := g.cfg
	if c.Arch == model.ArchLlama {
		return widths{qkv: c.QDim() + 2*c.KVDim(), att: c.QDim(), fc: c.Inner(), kv: c.KVDim()}
	}
	return widths{qkv: 3 * c.NEmbd, att: c.NEmbd, fc: c.Inner(), kv: c.NEmbd}
}

// arenaBuffer is one buffer of an arena, a row of arenaLayout: where it
// goes, its label, and its bytes for an arena size.
type arenaBuffer struct {
	label    string
	field    func(a *arena) **wgpu.Buffer
	bytes    func(d arenaDims, s arenaSize) int64
	readback bool // host-visible (map read), not storage
}

// arenaDims are the model's numbers an arena's buffers are sized by.
type arenaDims struct {
	C           int64 // channels of the residual stream
	w           widths
	parts       int64 // the LM head's partials per target
	layerStride int64 // bytes of one layer's K (or V) cache
	h16         bool  // the matrix units may run (f16 weights, the hardware kernels): hP16 is needed
}

// arenaLayout is the one table of an arena's buffers: newArena allocates
// each, arenaBytes adds them up (so MaxBatchTokens sizes batches by what is
// allocated). Activations are f32.
var arenaLayout = []arenaBuffer{
	{"tokens", func(a *arena) **wgpu.Buffer { return &a.tokens }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.tokens) }, false},
	// The target ids, then their logits (include/lmhead.wgsl).
	{"targets", func(a *arena) **wgpu.Buffer { return &a.targets }, func(d arenaDims, s arenaSize) int64 { return 8 * int64(s.targets) }, false},
	{"residual", func(a *arena) **wgpu.Buffer { return &a.res }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.rows) * d.C }, false},
	{"ln", func(a *arena) **wgpu.Buffer { return &a.ln }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.rows) * d.C }, false},
	{"qkv", func(a *arena) **wgpu.Buffer { return &a.qkv }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.rows) * int64(d.w.qkv) }, false},
	{"att", func(a *arena) **wgpu.Buffer { return &a.att }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.rows) * int64(d.w.att) }, false},
	{"fc", func(a *arena) **wgpu.Buffer { return &a.fc }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.rows) * int64(d.w.fc) }, false},
	{"k cache", func(a *arena) **wgpu.Buffer { return &a.kc }, func(d arenaDims, s arenaSize) int64 { return d.layerStride * int64(s.cacheLayers) }, false},
	{"v cache", func(a *arena) **wgpu.Buffer { return &a.vc }, func(d arenaDims, s arenaSize) int64 { return d.layerStride * int64(s.cacheLayers) }, false},
	{"h", func(a *arena) **wgpu.Buffer { return &a.hP }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.targets) * d.C }, false},
	{"h f16", func(a *arena) **wgpu.Buffer { return &a.hP16 }, func(d arenaDims, s arenaSize) int64 {
		if !d.h16 {
			return 0
		}
		return 2 * int64(s.targets) * d.C
	}, false},
	{"partials", func(a *arena) **wgpu.Buffer { return &a.part }, func(d arenaDims, s arenaSize) int64 { return 8 * d.parts * int64(s.targets) }, false},
	{"nll", func(a *arena) **wgpu.Buffer { return &a.nll }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.targets) }, false},
	{"nll readback", func(a *arena) **wgpu.Buffer { return &a.nllRead }, func(d arenaDims, s arenaSize) int64 { return 4 * int64(s.targets) }, true},
}

// arenaDims are this model's, for an arena of size s.
func (g *GPT2) arenaDims(s arenaSize) arenaDims {
	return arenaDims{C: int64(g.cfg.NEmbd), w: g.widths(), parts: int64(g.lmParts()), layerStride: g.layerStride(s.cacheTok),
		h16: g.f16 && g.sharedMatmul}
}

// arenaBytes is the device memory an arena of size s takes for this model:
// arenaLayout's buffers.
func (g *GPT2) arenaBytes(s arenaSize) int64 {
	d := g.arenaDims(s)
	var n int64
	for _, b := range arenaLayout {
		n += b.bytes(d, s)
	}
	return n
}

// layerStride is the bytes of one layer's K (or V) cache for tok padded
// tokens, rounded up to 256 so that every layer's range keeps any device's
// storage offset alignment.
func (g *GPT2) layerStride(tok int) int64 {
	return (int64(tok)*int64(g.widths().kv)*4 + 255) &^ 255
}

// newArena allocates an arena of size s, arenaLayout's buffers. An
// allocation the device cannot satisfy gives an error that wraps
// wgpu.ErrOutOfMemory and names the sizes.
func (g *GPT2) newArena(s arenaSize) (*arena, error) {
	total := g.arenaBytes(s)
	if g.arenaLimit > 0 && total > g.arenaLimit {
		return nil, fmt.Errorf("gpu: an arena of %d bytes for %d rows, %d cached tokens x %d layers, %d targets exceeds the test limit of %d: %w",
			total, s.rows, s.cacheTok, s.cacheLayers, s.targets, g.arenaLimit, wgpu.ErrOutOfMemory)
	}
	d := g.arenaDims(s)
	a := &arena{size: s, groups: map[bindKey]*wgpu.BindGroup{}, layerStride: uint64(d.layerStride)}
	for _, ab := range arenaLayout {
		usage := wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
		if ab.readback {
			usage = wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst
		}
		size := ab.bytes(d, s)
		b, err := g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: ab.label, Size: uint64(max(size, 16)), Usage: usage})
		if err != nil {
			a.close()
			return nil, fmt.Errorf("gpu: activation buffer %s of %d bytes (an arena of %d bytes for %d rows, %d cached tokens x %d layers, %d targets): %w",
				ab.label, size, total, s.rows, s.cacheTok, s.cacheLayers, s.targets, err)
		}
		a.bufs = append(a.bufs, b)
		*ab.field(a) = b
	}
	return a, nil
}

// arenaFor returns an arena that holds need and is not in use, waiting for
// the older batch in flight when both are. g.mu must be held.
func (g *GPT2) arenaFor(need arenaSize) (*arena, error) {
	// Round robin: the next arena, so that the previous batch keeps running.
	i := g.nextArena
	g.nextArena = (i + 1) % arenaCount
	a := g.arenas[i]
	if a != nil && a.pending != nil {
		a.pending.finish() // its result stays for its Wait
	}
	if a != nil && a.size.holds(need) {
		return a, nil
	}
	size := need
	if a != nil {
		size = a.size.union(need)
		a.close()
		g.arenas[i] = nil
	}
	// Keep both arenas of one size, so the next batch does not reallocate.
	for _, o := range g.arenas {
		if o != nil {
			size = size.union(o.size)
		}
	}
	a, err := g.newArena(size)
	if err != nil && size != need {
		a, err = g.newArena(need) // the union may not fit where need alone does
	}
	if err != nil {
		return nil, err
	}
	g.arenas[i] = a
	return a, nil
}

// FreeActivations releases the activation memory of the batches submitted
// so far (a batch not yet finished is finished first; its result stays for
// its Wait), so that the next batch allocates for its own size. Otherwise
// that memory is kept and only grows, which suits an evaluation's batches;
// a benchmark of several batch sizes frees it between them, so that a size's
// peak memory does not hold a larger size's batches timed before it.
func (g *GPT2) FreeActivations() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.freeArenas()
}

// freeArenas finishes the batches in flight and releases their arenas.
// g.mu is held.
func (g *GPT2) freeArenas() {
	for i, a := range g.arenas {
		if a == nil {
			continue
		}
		if a.pending != nil {
			a.pending.finish()
		}
		a.close()
		g.arenas[i] = nil
	}
}

// MaxBatchTokens is the most padded tokens (sequences x width) one batch can
// hold on this device, from its memory budget less the weights, with two
// batches in flight and room kept for the driver, and from its largest
// binding. It is at least one window of the model's positions when that fits
// at all; 0 when not even that fits.
func (g *GPT2) MaxBatchTokens() (int, error) {
	budget, err := g.dev.MemoryBudget()
	if err != nil {
		return 0, fmt.Errorf("gpu: memory budget: %w", err)
	}
	// Available excludes what is allocated already, the weights included;
	// keep some for the driver, the display and the pipelines.
	free := int64(float64(budget.Available()) * 0.85)
	per := g.arenaBytes(arenaSize{rows: 1, cacheTok: 1, cacheLayers: 1, targets: 1, tokens: 1}) - 64
	n := int(max(free/int64(arenaCount)/per, 0))
	// No buffer may exceed the binding limit: the widest activation (GPT-2's fc, 4C f32 per row), partials 8 bytes per tile per target.
	limit := int64(g.dev.Limits().MaxStorageBufferBindingSize)
	w := g.widths()
	widest := int64(max(g.cfg.NEmbd, w.qkv, w.att, w.fc))
	n = min(n, int(limit/(4*widest)), int(limit/(8*int64(g.lmParts()))))
	return n, nil
}

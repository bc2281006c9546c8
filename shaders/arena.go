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
	groups  map[string]*wgpu.BindGroup
	pending *Pending // the batch that last used the arena, until it is waited for

	tokens, targets, res, ln, qkv, att, fc, kc, vc, hP, part, tgt, nll *wgpu.Buffer
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
	return widths{qkv: 3 * c.NEmbd, att: c.NEmbd, fc: 4 * c.NEmbd, kv: c.NEmbd}
}

// arenaBytes is the device memory an arena of size s takes for this model.
func (g *GPT2) arenaBytes(s arenaSize) int64 {
	C := int64(g.cfg.NEmbd)
	w := g.widths()
	parts := int64(g.lmParts())
	rows, tg := int64(s.rows), int64(s.targets)
	f := int64(4)
	return f*rows*(2*C+int64(w.qkv+w.att+w.fc)) + // res, ln, qkv, att, fc
		2*g.layerStride(s.cacheTok)*int64(s.cacheLayers) + // k, v caches
		f*tg*(C+2*parts+3) + // hP, part, tgt, nll and its readback
		f*int64(s.tokens)
}

// layerStride is the bytes of one layer's K (or V) cache for tok padded
// tokens, rounded up to 256 so that every layer's range keeps any device's
// storage offset alignment.
func (g *GPT2) layerStride(tok int) int64 {
	return (int64(tok)*int64(g.widths().kv)*4 + 255) &^ 255
}

// newArena allocates an arena of size s. An allocation the device cannot
// satisfy gives an error that wraps wgpu.ErrOutOfMemory and names the sizes.
func (g *GPT2) newArena(s arenaSize) (*arena, error) {
	if g.arenaLimit > 0 && g.arenaBytes(s) > g.arenaLimit {
		return nil, fmt.Errorf("gpu: an arena of %d bytes for %d rows, %d cached tokens x %d layers, %d targets exceeds the test limit of %d: %w",
			g.arenaBytes(s), s.rows, s.cacheTok, s.cacheLayers, s.targets, g.arenaLimit, wgpu.ErrOutOfMemory)
	}
	a := &arena{size: s, groups: map[string]*wgpu.BindGroup{}}
	var err error
	buf := func(label string, size int64, usage wgpu.BufferUsage) *wgpu.Buffer {
		if err != nil {
			return nil
		}
		b, e := g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: label, Size: uint64(max(size, 16)), Usage: usage})
		if e != nil {
			err = fmt.Errorf("gpu: activation buffer %s of %d bytes (an arena of %d bytes for %d rows, %d cached tokens x %d layers, %d targets): %w",
				label, size, g.arenaBytes(s), s.rows, s.cacheTok, s.cacheLayers, s.targets, e)
			return nil
		}
		a.bufs = append(a.bufs, b)
		return b
	}
	st := wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
	C := int64(g.cfg.NEmbd)
	w := g.widths()
	rows, tg := int64(s.rows), int64(s.targets)
	parts := int64(g.lmParts())
	a.layerStride = uint64(g.layerStride(s.cacheTok))
	a.tokens = buf("tokens", 4*int64(s.tokens), st)
	a.targets = buf("targets", 4*tg, st)
	a.res = buf("residual", 4*rows*C, st)
	a.ln = buf("ln", 4*rows*C, st)
	a.qkv = buf("qkv", 4*rows*int64(w.qkv), st)
	a.att = buf("att", 4*rows*int64(w.att), st)
	a.fc = buf("fc", 4*rows*int64(w.fc), st)
	a.kc = buf("k cache", int64(a.layerStride)*int64(s.cacheLayers), st)
	a.vc = buf("v cache", int64(a.layerStride)*int64(s.cacheLayers), st)
	a.hP = buf("h", 4*tg*C, st)
	a.part = buf("partials", 8*parts*tg, st)
	a.tgt = buf("target logits", 4*tg, st)
	a.nll = buf("nll", 4*tg, st)
	a.nllRead = buf("nll readback", 4*tg, wgpu.BufferUsageMapRead|wgpu.BufferUsageCopyDst)
	if err != nil {
		a.close()
		return nil, err
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

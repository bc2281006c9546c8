package model

import (
	"context"
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// prefillChunk is the most rows one Append runs through the blocks at a time:
// a longer prompt is prefilled chunk after chunk (each chunk attends to the
// cache the earlier ones wrote), so the scratch stays small for any prompt.
const prefillChunk = 256

// Generator runs a model one sequence at a time with a KV cache, for text
// generation: Append runs new tokens through the model at the positions after
// those already appended, writing their keys and values into the cache in
// place, and returns the next-token logits of the last one. The cache and all
// scratch are allocated once by NewGenerator, for the positions it is asked
// for; nothing of the prefix is ever recomputed.
//
// A Generator is not safe for concurrent use (its CPU is, and may be shared by
// several Generators).
type Generator struct {
	c     *CPU
	pos   int // tokens appended so far
	size  int // positions the cache holds (<= the model's n_positions)
	chunk int // rows per pass (prefillChunk; smaller in tests)

	kt [][]float32 // per layer (KV heads, keyPanels(T), hd, kvPanel): the keys of positions [0, pos) in panels (transposeKV)
	vt [][]float32 // per layer (KVDim, T): the values, channel-major, so p·v reduces along rows

	// scratch for one chunk of up to chunk rows
	residual, ln, qkv, atty, fch []float32
	tile, scores                 []float32
	lnf, logits                  []float32 // (C), (V)
}

// NewGenerator allocates a KV cache of every layer for the model's
// n_positions and the scratch of one pass: for GPT-2 124M (12 layers, 768
// channels, 1024 positions) about 77 MB. NewGeneratorFor allocates what a
// shorter sequence needs.
func (c *CPU) NewGenerator() (*Generator, error) { return c.NewGeneratorFor(0) }

// NewGeneratorFor is NewGenerator with a cache of positions positions (the
// prompt and the tokens to generate; <= 0 or more than the model's
// n_positions: n_positions), so that a short generation with a model of
// millions of positions costs what it needs. The planned bytes are checked
// against the memory available first.
func (c *CPU) NewGeneratorFor(positions int) (*Generator, error) {
	if c.err != nil {
		return nil, c.err
	}
	cfg := c.cfg
	T := cfg.NPositions
	if positions > 0 && positions < T {
		T = positions
	}
	C, L, hs := cfg.NEmbd, cfg.NLayer, headsOf(cfg)
	KV := hs.kvDim()
	g := &Generator{c: c, size: T, chunk: min(prefillChunk, T)}
	nk := KV * keyPanels(T) * kvPanel
	n := g.chunk
	rowFloats := 2*C + hs.ld() + hs.qDim() + cfg.Inner()
	floats := uint64(L)*uint64(nk+T*KV) + uint64(n*rowFloats) + uint64(c.threads)*uint64(mmScratch+attRows*T) + uint64(C+cfg.VocabSize)
	if err := sysmem.Check(fmt.Sprintf("generate: the KV cache of %d positions and the scratch", T), 4*floats); err != nil {
		return nil, err
	}
	kv := make([]float32, L*(nk+T*KV))
	for l := range L {
		kt, vt := kv[l*(nk+T*KV):][:nk:nk], kv[l*(nk+T*KV)+nk:][:T*KV:T*KV]
		g.kt = append(g.kt, kt)
		g.vt = append(g.vt, vt)
	}
	g.alloc()
	return g, nil
}

// alloc (re)allocates the scratch of one pass of g.chunk rows.
func (g *Generator) alloc() {
	cfg := g.c.cfg
	C, n, w, hs := cfg.NEmbd, g.chunk, g.c.threads, headsOf(cfg)
	g.residual = make([]float32, n*C)
	g.ln = make([]float32, n*C)
	g.qkv = make([]float32, n*hs.ld())
	g.atty = make([]float32, n*hs.qDim())
	g.fch = make([]float32, n*cfg.Inner())
	g.tile = make([]float32, w*mmScratch)
	g.scores = make([]float32, w*attRows*g.size)
	g.lnf = make([]float32, C)
	g.logits = make([]float32, cfg.VocabSize)
}

// Len is the number of tokens appended since the start (or the last Reset).
func (g *Generator) Len() int { return g.pos }

// Cap is the number of positions the cache holds.
func (g *Generator) Cap() int { return g.size }

// Reset empties the cache (keeping its memory) for a new sequence.
func (g *Generator) Reset() { g.pos = 0 }

// Append runs tokens through the model at positions Len() to Len()+len(tokens)-1,
// adds their keys and values to the cache, and returns the logits (V floats) of
// the token after the last of them: the prompt for the prefill, one token per
// step while decoding. The slice is the Generator's and is overwritten by the
// next Append. The tokens must fit in the model's positions and vocabulary;
// on an error (a bad token, ctx cancelled) nothing is appended.
func (g *Generator) Append(ctx context.Context, tokens []int32) ([]float32, error) {
	cfg := g.c.cfg
	if len(tokens) == 0 {
		return nil, fmt.Errorf("generate: no tokens to append")
	}
	if g.pos+len(tokens) > g.size {
		if g.size < cfg.NPositions {
			return nil, fmt.Errorf("generate: %d tokens after %d do not fit in the generator's %d positions (the model has %d)", len(tokens), g.pos, g.size, cfg.NPositions)
		}
		return nil, fmt.Errorf("generate: %d tokens after %d do not fit in the model's %d positions", len(tokens), g.pos, cfg.NPositions)
	}
	for i, id := range tokens {
		if id < 0 || int(id) >= cfg.VocabSize {
			return nil, fmt.Errorf("generate: token %d (at %d) is outside the vocabulary of %d", id, g.pos+i, cfg.VocabSize)
		}
	}
	start := g.pos
	for off := 0; off < len(tokens); off += g.chunk {
		if err := ctx.Err(); err != nil {
			g.pos = start
			return nil, fmt.Errorf("generate: %w", err)
		}
		g.forward(tokens[off:min(len(tokens), off+g.chunk)])
	}
	g.lastLogits((len(tokens)-1)%g.chunk, g.logits)
	return g.logits, nil
}

// forward runs n = len(tokens) <= g.chunk tokens at positions pos.. through
// the blocks, leaving their residual stream in g.residual (n, C), and
// advances pos.
func (g *Generator) forward(tokens []int32) {
	c, C, n := g.c, g.c.cfg.NEmbd, len(tokens)
	hs := headsOf(c.cfg)
	b := blockBufs{residual: g.residual[:n*C], ln: g.ln[:n*C], qkv: g.qkv[:n*hs.ld()], atty: g.atty[:n*hs.qDim()],
		fch: g.fch[:n*c.cfg.Inner()], tile: g.tile}
	for t, id := range tokens { // (n, C) = wte[token] + wpe[position]
		var pe []float32
		if c.wpe != nil {
			pe = c.wpe[(g.pos+t)*C:][:C]
		}
		embedRow(b.residual[t*C:][:C], c.wte, int(id), pe)
	}
	for l := range c.layers {
		c.block(l, &b, g, n)
	}
	g.pos += n
}

// attend is the Generator's attention (attender): it writes the n rows' keys
// and values into layer l's cache at positions pos.. (the Llama family's
// rotated there first), then attends over the cache.
func (g *Generator) attend(l int, out, qkv []float32, n int) {
	if g.c.rope != nil {
		g.c.rotateQK(l, qkv, []span{{0, n}}, g.pos)
	}
	g.writeKV(l, qkv, n)        // cache[pos:pos+n]
	g.attention(l, out, qkv, n) // (n, C)
}

// writeKV copies the keys and values of qkv (n, ld) into layer l's cache at
// positions pos..pos+n-1.
func (g *Generator) writeKV(l int, qkv []float32, n int) {
	hs, T := headsOf(g.c.cfg), g.size
	hd, ld, QD, KV := hs.hd, hs.ld(), hs.qDim(), hs.kvDim()
	headStride := keyPanels(T) * hd * kvPanel
	kt, vt := g.kt[l], g.vt[l]
	for t := range n {
		p := g.pos + t
		k := qkv[t*ld+QD:][:KV]
		base := p/kvPanel*hd*kvPanel + p%kvPanel
		for ch, x := range k {
			kt[ch/hd*headStride+base+ch%hd*kvPanel] = x
		}
		v := qkv[t*ld+QD+KV:][:KV]
		for ch, x := range v {
			vt[ch*T+p] = x
		}
	}
}

// attention: out (n, QDim) = causal self-attention of the n queries of qkv
// (n, ld), at positions pos..pos+n-1, over layer l's cached keys and values
// of positions 0..pos+n-1 (already holding this chunk's). The same float32
// steps as CPU.attentionForward: scores by scoresNN, scaled (the layer's
// divisor included), row max subtracted, exp, normalized, weighted sum by
// gemmNT.
func (g *Generator) attention(l int, out, qkv []float32, n int) {
	c, hs, T := g.c, headsOf(g.c.cfg), g.size
	NH, hd, ld, QD := hs.n, hs.hd, hs.ld(), hs.qDim()
	scale := float32(math.Sqrt(float64(hd))) * c.cfg.AttnLayerDivisor(l)
	blocks := (n + attRows - 1) / attRows
	kt, vt := g.kt[l], g.vt[l]
	c.parallelFor(blocks*NH, func(worker, task int) {
		t0, h := task/NH*attRows, task%NH
		kh := hs.group(h)
		t1 := min(n, t0+attRows)
		rows, keys := t1-t0, g.pos+t1 // keys of the block's last query
		sc := g.scores[worker*attRows*T:][:rows*keys]
		// sc (rows, keys) = q[t0:t1] · k[0:keys]ᵀ, k from the head's panels.
		scoresNN(sc, qkv[t0*ld+h*hd:], ld, kt[kh*keyPanels(T)*hd*kvPanel:], rows, keys, hd)
		for i := range rows {
			row := sc[i*keys:][:keys]
			valid := row[:g.pos+t0+i+1]
			mx := divMaxRow(valid, scale)
			mulRow(valid, 1/expSubRow(valid, mx))
			clear(row[len(valid):])
		}
		// out[t0:t1, h] (rows, hd) = p (rows, keys) · v[0:keys]; vt rows are v's channels.
		gemmNT(out[t0*QD+h*hd:], QD, sc, keys, vt[kh*hd*T:], T, rows, hd, keys)
	})
}

// lastLogits sets logits (V) = ln_f(residual row r) · lmHeadᵀ, in vocabulary
// tiles over the CPU's workers.
func (g *Generator) lastLogits(r int, logits []float32) {
	c, cfg := g.c, g.c.cfg
	C, V := cfg.NEmbd, cfg.VocabSize
	c.finalNorm(g.lnf, g.residual[r*C:][:C], 1)
	h16, release := c.bf16Operand(c.lmHead, g.lnf, C) // the bf16 mode's rounded ln_f
	defer release()
	tiles := (V + vocabTile - 1) / vocabTile
	c.parallelFor(tiles, func(_, tile int) {
		v0 := tile * vocabTile
		vn := min(vocabTile, V-v0)
		gemmNTW(logits[v0:], vn, g.lnf, h16, C, c.lmHead, v0*C, C, 1, vn, C)
	})
}

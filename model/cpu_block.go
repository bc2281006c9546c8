package model

// blockBufs are the buffers one transformer block runs in, for n rows: the
// residual stream, updated in place, and the scratch of its steps. lossChunk
// carves them from its arena, a Generator owns them.
type blockBufs struct {
	residual []float32 // (n, C) the residual stream, in and out
	ln       []float32 // (n, C) LayerNorm (RMSNorm) output
	qkv      []float32 // (n, 3C) c_attn output, q|k|v; the Llama family's (n, QDim+2·KVDim)
	atty     []float32 // (n, C) attention output, before c_proj; (n, QDim)
	fch      []float32 // (n, Inner) GPT-2's c_fc output, then gelu_new in place; the Llama family's silu(gate)·up
	tile     []float32 // (workers, mmScratch) matmul scratch
}

// attender is the causal self-attention of a block: out (n, C) from the
// queries, keys and values in qkv (n, 3C) of layer l. The loss attends within
// each sequence of a chunk (chunkAttention); a Generator over its KV cache,
// which it first extends with this pass's keys and values.
type attender interface {
	attend(l int, out, qkv []float32, n int)
}

// block runs layer l over the n rows of b.residual in place: for GPT-2
// x += attn(ln_1(x)); x += mlp(ln_2(x)); for the Llama family llamaBlock.
func (c *CPU) block(l int, b *blockBufs, att attender, n int) {
	if c.cfg.Arch == ArchLlama {
		c.llamaBlock(l, b, att, n)
		return
	}
	C, I, eps := c.cfg.NEmbd, c.cfg.Inner(), c.cfg.LayerNormEps
	w := &c.layers[l]
	c.layernormForward(b.ln, b.residual, w.ln1w, w.ln1b, n, C, eps)                 // (n, C)
	c.matmulForward(b.qkv, b.ln, w.qkvW, w.qkvB, n, C, 3*C, false, b.tile)          // (n, 3C)
	att.attend(l, b.atty, b.qkv, n)                                                 // (n, C)
	c.matmulForward(b.residual, b.atty, w.projW, w.projB, n, C, C, true, b.tile)    // += (n, C)
	c.layernormForward(b.ln, b.residual, w.ln2w, w.ln2b, n, C, eps)                 // (n, C)
	c.matmulForward(b.fch, b.ln, w.fcW, w.fcB, n, C, I, false, b.tile)              // (n, I)
	c.geluForward(b.fch, n, I)                                                      // (n, I)
	c.matmulForward(b.residual, b.fch, w.fcProjW, w.fcProjB, n, I, C, true, b.tile) // += (n, C)
}

// chunkAttention is the loss's attention: each span of the chunk's rows is
// one sequence, attending to itself only.
type chunkAttention struct {
	c      *CPU
	spans  []span
	kt, vt []float32 // keys in panels, values transposed (transposeKV)
	scores []float32 // (workers, attRows*maxT)
	maxT   int
}

func (a *chunkAttention) attend(l int, out, qkv []float32, n int) {
	hs := headsOf(a.c.cfg)
	if a.c.rope != nil {
		a.c.rotateQK(l, qkv, a.spans, 0) // positions restart in every sequence
	}
	a.c.transposeKV(a.kt, a.vt, qkv, a.spans, n, hs) // per key/value head
	div := a.c.cfg.AttnLayerDivisor(l)
	a.c.attentionForward(out, qkv, a.kt, a.vt, a.spans, n, hs, div, a.scores, a.maxT) // (n, QDim)
}

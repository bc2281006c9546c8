package shaders

import (
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// forwardLlama records the Llama family's forward pass of one chunk (see
// forwardChunk): the embedding, then per block
//
//	rmsnorm -> q|k|v matmul -> rope_kv_write (q/k norms, rotation, KV cache)
//	-> attention (grouped heads) -> o_proj matmul + residual -> rmsnorm
//	-> gate|up matmul with the SwiGLU epilogue -> down_proj matmul + residual
//
// (8 dispatches, GPT-2's count), then the final RMSNorm into the arena's ln.
func (g *GPT2) forwardLlama(r *recorder, tok Buf, sh chunkShape, layered bool, ranges [][2]int) {
	a, cfg, lp := r.a, g.cfg, g.llama
	C, I := cfg.NEmbd, cfg.Inner()
	H, KV, hd := cfg.NHead, cfg.KVHeads(), cfg.HeadDim()
	QD, ld := H*hd, (H+2*KV)*hd
	N := sh.B * sh.T
	whole := func(x *wgpu.Buffer) Buf { return Buf{Buffer: x} }
	norm := g.normFor(lp.rmsnorm, lp.rmsnormSubgroup, lp.rmsnormRows, C)
	rmsnorm := func(out, x, w *wgpu.Buffer) {
		r.op(norm.k, norm.consts, rmsNormBufs{X: whole(x), W: whole(w), Out: whole(out)},
			rmsNormParams{Rows: uint32(N), C: uint32(C), Eps: float32(cfg.LayerNormEps)}, norm.groups(N))
	}
	for _, vr := range ranges {
		r.op(g.embed, consts("WPE", 0), embedBufs{Tokens: tok, WTE: g.wteRange(vr), WPE: whole(lp.zeros), Out: whole(a.res)},
			embedParams{N: uint32(N), T: uint32(sh.T), C: uint32(C), Pos0: uint32(sh.t0), V0: uint32(vr[0]), V: uint32(vr[1] - vr[0])},
			perInvocation(N*C))
	}
	qkNorm := 0.0
	if cfg.QKNorm {
		qkNorm = 1
	}
	ropeConsts := consts("QKNORM", qkNorm).with("WG", float64(ropeWG(hd)))
	rp := ropeParams{B: uint32(sh.B), T: uint32(sh.T), H: uint32(H), KV: uint32(KV), HD: uint32(hd),
		S: uint32(sh.S), Pos0: uint32(sh.t0), Eps: float32(cfg.LayerNormEps)}
	for i := range lp.layers {
		w := &lp.layers[i]
		kc, vc := g.layerCache(a, i, layered)
		rmsnorm(a.ln, a.res, w.ln1w)
		g.matmulOp(r, sh, a.qkv, a.ln, w.qkvW, w.qkvB, kc, vc, N, C, ld, epiStore)
		if cfg.QKNorm {
			rp.Norm = uint32(lp.normBase + i*hd) // the layer's hd pairs: q_norm's, then k_norm's
		}
		r.op(lp.ropeKV, ropeConsts, ropeBufs{QKV: whole(a.qkv), KC: kc, VC: vc, Rope: whole(lp.rope)},
			rp, perInvocation(N*(H+2*KV)*hd/2))
		g.attentionOp(r, sh, i, kc, vc, ld)
		g.matmulOp(r, sh, a.res, a.att, w.oW, w.oB, kc, vc, N, QD, C, epiAdd)
		rmsnorm(a.ln, a.res, w.ln2w)
		g.matmulOp(r, sh, a.fc, a.ln, w.gateUpW, w.gateUpB, kc, vc, N, C, 2*I, epiSwiGLU)
		g.matmulOp(r, sh, a.res, a.fc, w.downW, w.downB, kc, vc, N, I, C, epiAdd)
	}
	rmsnorm(a.ln, a.res, g.lnfW)
}

// ropeWG is rope_kv_write.wgsl's workgroup size for heads of hd channels:
// a multiple of hd/2 (its invocations per head), so that a workgroup takes
// whole heads, of at least 64 invocations.
func ropeWG(hd int) int {
	half := max(hd/2, 1)
	return half * ceilDiv(64, half)
}

package shaders

import (
	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// llamaRefNLL is -ln p(tokens[t] | tokens[:t]) for t = 1 .. len-1 under the
// Llama-family model m, in float64 from internal/refops: RMSNorm, nn.Linear
// products, per-head q/k norms (Qwen3), the rotation with float64 angles,
// grouped-query attention (each query head's key/value head repeated),
// SwiGLU, the final norm and the LM head (embed_tokens where tied). It shares
// nothing with the GPU or CPU forward but the weights (not even the rotary
// table: refops.RopeInvFreq).
func llamaRefNLL(m *model.Model, tokens []int32) []float64 {
	cfg, w := m.Config, &m.Weights
	C, T, V := cfg.NEmbd, len(tokens), cfg.VocabSize
	H, KV, hd, I := cfg.NHead, cfg.KVHeads(), cfg.HeadDim(), cfg.Inner()
	QD, KVD, eps := H*hd, KV*hd, cfg.LayerNormEps
	inv, amp := refRope(cfg)
	rotate := func(head []float64, pos int) {
		refops.Rotate(head, pos, inv)
		for i := range head {
			head[i] *= amp
		}
	}
	wte := f64(w.WTE)
	x := make([]float64, T*C)
	for t, id := range tokens {
		copy(x[t*C:(t+1)*C], wte[int(id)*C:])
	}
	vec := func(v []float32) []float64 {
		if v == nil {
			return nil
		}
		return f64(v)
	}
	for _, l := range w.Layers {
		h := refops.RMSNorm(x, f64(l.LN1W), T, C, eps)
		q := refops.Linear(h, f64(l.QW), vec(l.QB), T, C, QD)
		k := refops.Linear(h, f64(l.KW), vec(l.KB), T, C, KVD)
		v := refops.Linear(h, f64(l.VW), vec(l.VB), T, C, KVD)
		for t := range T {
			for j := range H {
				head := q[t*QD+j*hd:][:hd]
				if l.QNormW != nil {
					copy(head, refops.RMSNorm(head, f64(l.QNormW), 1, hd, eps))
				}
				rotate(head, t)
			}
			for j := range KV {
				head := k[t*KVD+j*hd:][:hd]
				if l.KNormW != nil {
					copy(head, refops.RMSNorm(head, f64(l.KNormW), 1, hd, eps))
				}
				rotate(head, t)
			}
		}
		// Each query head's key/value head, repeated into H heads.
		kr, vr := make([]float64, T*QD), make([]float64, T*QD)
		for t := range T {
			for j := range H {
				g := j / (H / KV)
				copy(kr[t*QD+j*hd:][:hd], k[t*KVD+g*hd:])
				copy(vr[t*QD+j*hd:][:hd], v[t*KVD+g*hd:])
			}
		}
		att := refops.Attention(q, kr, vr, T, QD, H)
		o := refops.Linear(att, f64(l.OW), vec(l.OB), T, QD, C)
		for i := range x {
			x[i] += o[i]
		}
		h = refops.RMSNorm(x, f64(l.LN2W), T, C, eps)
		gate := refops.Linear(h, f64(l.GateW), vec(l.GateB), T, C, I)
		up := refops.Linear(h, f64(l.UpW), vec(l.UpB), T, C, I)
		for i := range gate {
			gate[i] = refops.SiLU(gate[i]) * up[i]
		}
		d := refops.Linear(gate, f64(l.DownW), vec(l.DownB), T, I, C)
		for i := range x {
			x[i] += d[i]
		}
	}
	hf := refops.RMSNorm(x, f64(w.LNFW), T, C, eps)
	head := wte
	if !cfg.TiedEmbed && w.LMHead != nil {
		head = f64(w.LMHead)
	}
	return refops.NLL(hf[:(T-1)*C], head, tokens[1:], T-1, C, V)
}

// llamaRefMean is the mean of llamaRefNLL's NLLs over seqs' targets.
func llamaRefMean(m *model.Model, seqs []model.Sequence) float64 {
	sum, n := 0.0, 0
	for _, s := range seqs {
		nll := llamaRefNLL(m, s.Tokens)
		for _, x := range nll[s.First-1:] {
			sum += x
			n++
		}
	}
	return sum / float64(n)
}

// refRope is the rotary frequencies of cfg, from refops (llama3, linear or
// yarn scaling), and what the rotated q and k are multiplied by (yarn's
// attention factor, else 1).
func refRope(cfg model.Config) (inv []float64, amp float64) {
	rs, hd := cfg.RopeScaling, cfg.HeadDim()
	switch rs.Type {
	case "yarn":
		return refops.RopeInvFreqYarn(cfg.RopeTheta, hd, rs.Factor, rs.OrigPositions, rs.BetaFast, rs.BetaSlow, !rs.NoTruncate),
			refops.YarnAttentionFactor(rs.Factor, rs.AttentionFactor, rs.Mscale, rs.MscaleAllDim)
	case "linear":
		inv = refops.RopeInvFreq(cfg.RopeTheta, hd, 0, 0, 0, 0)
		for i := range inv {
			inv[i] /= rs.Factor
		}
		return inv, 1
	case "llama3":
		return refops.RopeInvFreq(cfg.RopeTheta, hd, rs.Factor, rs.LowFreq, rs.HighFreq, rs.OrigPositions), 1
	}
	return refops.RopeInvFreq(cfg.RopeTheta, hd, 0, 0, 0, 0), 1
}

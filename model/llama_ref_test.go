package model

import (
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// refLlamaNLL returns, for t = 1..len(tokens)-1, -ln p(tokens[t] |
// tokens[:t]) under the Llama-family model m, in float64: a plain forward
// written from transformers' LlamaForCausalLM / Qwen2 / Qwen3 definitions, one
// position and one head at a time, with the rotary angles, softmax and
// log-softmax in float64. It shares nothing with the CPU forward but the
// weights.
func refLlamaNLL(m *Model, tokens []int32) []float64 { return refLlamaNLLRounded(m, tokens, nil) }

// refLlamaNLLRounded is refLlamaNLL where round (when not nil) is applied to
// both operands of every product with a weight matrix (q, k, v, o, gate, up,
// down and the LM head) and to the embedding read from WTE: the bf16 mode's
// roundings (as refNLLRounded for GPT-2), the products still summed in
// float64.
func refLlamaNLLRounded(m *Model, tokens []int32, round func(float64) float64) []float64 {
	if round == nil {
		round = func(x float64) float64 { return x }
	}
	refLinearNT := func(x [][]float64, W, b []float32, out int) [][]float64 {
		return refLinearNTRounded(x, W, b, out, round)
	}
	cfg, w := m.Config, &m.Weights
	C, T := cfg.NEmbd, len(tokens)
	NH, KVH, hd := cfg.NHead, cfg.KVHeads(), cfg.HeadDim()
	eps := cfg.LayerNormEps
	x := make([][]float64, T)
	for t, id := range tokens {
		x[t] = make([]float64, C)
		for i := range C {
			x[t][i] = round(float64(w.WTE[int(id)*C+i]))
		}
	}
	inv := refInvFreq(cfg)
	// yarn's attention factor scales q and k (cos and sin, in transformers),
	// so the scores by its square.
	amp2 := 1.0
	if rs := cfg.RopeScaling; rs.Type == "yarn" {
		a := refops.YarnAttentionFactor(rs.Factor, rs.AttentionFactor, rs.Mscale, rs.MscaleAllDim)
		amp2 = a * a
	}
	for _, l := range w.Layers {
		h := refRMSNorm(x, l.LN1W, eps)
		q := refLinearNT(h, l.QW, l.QB, NH*hd)
		k := refLinearNT(h, l.KW, l.KB, KVH*hd)
		v := refLinearNT(h, l.VW, l.VB, KVH*hd)
		for t := range T {
			for hh := range NH {
				refHead(q[t][hh*hd:][:hd], l.QNormW, eps, t, inv)
			}
			for hh := range KVH {
				refHead(k[t][hh*hd:][:hd], l.KNormW, eps, t, inv)
			}
		}
		att := make([][]float64, T)
		for t := range T {
			att[t] = make([]float64, NH*hd)
			for hh := range NH {
				g := hh / (NH / KVH)
				qv := q[t][hh*hd:][:hd]
				sc := make([]float64, t+1)
				mx := math.Inf(-1)
				for s := range t + 1 {
					d := 0.0
					for i := range hd {
						d += qv[i] * k[s][g*hd+i]
					}
					sc[s] = d * amp2 / math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[s])
				}
				sum := 0.0
				for s := range sc {
					sc[s] = math.Exp(sc[s] - mx)
					sum += sc[s]
				}
				for s := range sc {
					for i := range hd {
						att[t][hh*hd+i] += sc[s] / sum * v[s][g*hd+i]
					}
				}
			}
		}
		o := refLinearNT(att, l.OW, l.OB, C)
		for t := range T {
			for i := range C {
				x[t][i] += o[t][i]
			}
		}
		h = refRMSNorm(x, l.LN2W, eps)
		gate := refLinearNT(h, l.GateW, l.GateB, cfg.Inner())
		up := refLinearNT(h, l.UpW, l.UpB, cfg.Inner())
		for t := range T {
			for i := range gate[t] {
				g := gate[t][i]
				gate[t][i] = g / (1 + math.Exp(-g)) * up[t][i]
			}
		}
		d := refLinearNT(gate, l.DownW, l.DownB, C)
		for t := range T {
			for i := range C {
				x[t][i] += d[t][i]
			}
		}
	}
	hf := refRMSNorm(x, w.LNFW, eps)
	head := w.LMHead
	if head == nil || cfg.TiedEmbed {
		head = w.WTE
	}
	logits := refLinearNT(hf, head, nil, cfg.VocabSize)
	nll := make([]float64, T-1)
	for t := range T - 1 {
		mx := math.Inf(-1)
		for _, z := range logits[t] {
			mx = math.Max(mx, z)
		}
		sum := 0.0
		for _, z := range logits[t] {
			sum += math.Exp(z - mx)
		}
		nll[t] = mx + math.Log(sum) - logits[t][tokens[t+1]]
	}
	return nll
}

// refInvFreq is the rotary frequencies of cfg: with llama3 scaling written
// from transformers' _compute_llama3_parameters, yarn's from refops, linear
// scaling dividing them by its factor.
func refInvFreq(cfg Config) []float64 {
	hd := cfg.HeadDim()
	inv := make([]float64, hd/2)
	for i := range inv {
		inv[i] = math.Pow(cfg.RopeTheta, -float64(2*i)/float64(hd))
	}
	s := cfg.RopeScaling
	switch s.Type {
	case "":
		return inv
	case "linear":
		for i := range inv {
			inv[i] /= s.Factor
		}
		return inv
	case "yarn":
		return refops.RopeInvFreqYarn(cfg.RopeTheta, hd, s.Factor, s.OrigPositions, s.BetaFast, s.BetaSlow, !s.NoTruncate)
	}
	old := float64(s.OrigPositions)
	for i, f := range inv {
		wavelen := 2 * math.Pi / f
		scaled := f
		if wavelen > old/s.LowFreq {
			scaled = f / s.Factor
		}
		if !(wavelen < old/s.HighFreq) && !(wavelen > old/s.LowFreq) {
			smooth := (old/wavelen - s.LowFreq) / (s.HighFreq - s.LowFreq)
			scaled = (1-smooth)*scaled/s.Factor + smooth*scaled
		}
		inv[i] = scaled
	}
	return inv
}

// refHead normalizes one head's vector over head_dim (when norm is not nil)
// and rotates it to position pos: x·cos + rotate_half(x)·sin.
func refHead(x []float64, norm []float32, eps float64, pos int, inv []float64) {
	if norm != nil {
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(len(x))+eps)
		for i := range x {
			x[i] *= r * float64(norm[i])
		}
	}
	half := len(x) / 2
	rot := make([]float64, len(x))
	for i := range x {
		c, s := math.Cos(float64(pos)*inv[i%half]), math.Sin(float64(pos)*inv[i%half])
		var r float64
		if i >= half {
			r = x[i-half]
		} else {
			r = -x[i+half]
		}
		rot[i] = x[i]*c + r*s
	}
	copy(x, rot)
}

// refRMSNorm is x / sqrt(mean(x²) + eps) * g, row by row.
func refRMSNorm(x [][]float64, g []float32, eps float64) [][]float64 {
	out := make([][]float64, len(x))
	for t, row := range x {
		ss := 0.0
		for _, v := range row {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(len(row))+eps)
		out[t] = make([]float64, len(row))
		for i, v := range row {
			out[t][i] = v * r * float64(g[i])
		}
	}
	return out
}

// refLinearNTRounded is x Wᵀ + b with W (out, in) as nn.Linear stores it,
// round applied to x and W; b may be nil.
func refLinearNTRounded(x [][]float64, W, b []float32, out int, round func(float64) float64) [][]float64 {
	y := make([][]float64, len(x))
	for t, row := range x {
		in := len(row)
		y[t] = make([]float64, out)
		for o := range out {
			s := 0.0
			if b != nil {
				s = float64(b[o])
			}
			for i, v := range row {
				s += round(v) * round(float64(W[o*in+i]))
			}
			y[t][o] = s
		}
	}
	return y
}

// TestRopeInvFreqLlama3: the rotary frequencies of Llama 3.2's config
// (θ 500000, head_dim 64, llama3 scaling by 32 over 8192 positions) match
// the reference's, and the config has frequencies in all three bands (kept,
// divided, interpolated), so each branch is checked.
func TestRopeInvFreqLlama3(t *testing.T) {
	cfg := Config{Arch: ArchLlama, NHead: 32, HeadSize: 64, RopeTheta: 500000,
		RopeScaling: RopeScaling{Type: "llama3", Factor: 32, LowFreq: 1, HighFreq: 4, OrigPositions: 8192}}
	got, want := ropeInvFreq(cfg), refInvFreq(cfg)
	var kept, divided, between int
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15*want[i] {
			t.Errorf("inv_freq[%d] = %v, want %v", i, got[i], want[i])
		}
		base := math.Pow(500000, -float64(2*i)/64)
		switch {
		case want[i] == base:
			kept++
		case math.Abs(want[i]-base/32) < 1e-18:
			divided++
		default:
			between++
		}
	}
	if kept == 0 || divided == 0 || between == 0 {
		t.Errorf("bands: %d kept, %d divided, %d interpolated: want some of each", kept, divided, between)
	}
}

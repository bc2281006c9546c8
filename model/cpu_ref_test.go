package model

import (
	"math"
	"math/rand/v2"
)

// This file holds what the CPU forward is checked against: random models and a
// plain float64 GPT-2 forward written straight from the Hugging Face code
// (GPT2LMHeadModel), with full logits and log-softmax, no tiling, no tricks.

// randomModel returns a model of shape cfg with seeded random weights, scaled so
// activations stay O(1) and logits spread over several nats (a near-uniform model
// would hide mistakes). untied gives the model its own LM head.
func randomModel(cfg Config, seed uint64, untied bool) *Model {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	vec := func(n int, mean, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + std*r.NormFloat64())
		}
		return v
	}
	C, I := cfg.NEmbd, cfg.Inner()
	in := func(n int) float64 { return 1 / math.Sqrt(float64(n)) }
	w := Weights{
		WTE:  vec(cfg.VocabSize*C, 0, 1),
		WPE:  vec(cfg.NPositions*C, 0, 0.5),
		LNFW: vec(C, 1, 0.2),
		LNFB: vec(C, 0, 0.1),
	}
	for range cfg.NLayer {
		w.Layers = append(w.Layers, Layer{
			LN1W: vec(C, 1, 0.2), LN1B: vec(C, 0, 0.1),
			QKVW: vec(C*3*C, 0, 1.5*in(C)), QKVB: vec(3*C, 0, 0.1),
			ProjW: vec(C*C, 0, in(C)), ProjB: vec(C, 0, 0.1),
			LN2W: vec(C, 1, 0.2), LN2B: vec(C, 0, 0.1),
			FCW: vec(C*I, 0, in(C)), FCB: vec(I, 0, 0.1),
			FCProjW: vec(I*C, 0, in(I)), FCProjB: vec(C, 0, 0.1),
		})
	}
	w.LMHead = w.WTE
	if untied {
		w.LMHead = vec(cfg.VocabSize*C, 0, 1)
	}
	return &Model{Config: cfg, Weights: w, Source: "random"}
}

// refNLL returns, for t = 1..len(tokens)-1, -ln p(tokens[t] | tokens[:t]) under m,
// computed in float64 (index t-1 of the result).
func refNLL(m *Model, tokens []int32) []float64 { return refNLLRounded(m, tokens, nil) }

// refNLLRounded is refNLL where round (when not nil) is applied to both
// operands of every product with a weight matrix (the four linears of a
// block and the LM head) and to the embedding read from WTE: the bf16 mode's
// roundings, with the products still summed in float64.
func refNLLRounded(m *Model, tokens []int32, round func(float64) float64) []float64 {
	if round == nil {
		round = func(x float64) float64 { return x }
	}
	refLinear := func(x [][]float64, W, b []float32) [][]float64 { return refLinearRounded(x, W, b, round) }
	cfg, w := m.Config, &m.Weights
	T, C, NH := len(tokens), cfg.NEmbd, cfg.NHead
	hd := C / NH
	x := make([][]float64, T)
	for t, id := range tokens {
		x[t] = make([]float64, C)
		for i := range C {
			x[t][i] = round(float64(w.WTE[int(id)*C+i])) + float64(w.WPE[t*C+i])
		}
	}
	for li, l := range w.Layers {
		h := refLayerNorm(x, l.LN1W, l.LN1B, cfg.LayerNormEps)
		qkv := refLinear(h, l.QKVW, l.QKVB)
		att := make([][]float64, T)
		for t := range T {
			att[t] = make([]float64, C)
		}
		for hh := range NH {
			for t := range T {
				q := qkv[t][hh*hd : hh*hd+hd]
				s := make([]float64, t+1)
				mx := math.Inf(-1)
				for u := 0; u <= t; u++ {
					k := qkv[u][C+hh*hd : C+hh*hd+hd]
					for d := range hd {
						s[u] += q[d] * k[d]
					}
					s[u] /= math.Sqrt(float64(hd))
					if cfg.LayerScaledAttn { // as transformers' GPT2Attention, after the first division
						s[u] /= float64(li + 1)
					}
					mx = math.Max(mx, s[u])
				}
				var sum float64
				for u := range s {
					s[u] = math.Exp(s[u] - mx)
					sum += s[u]
				}
				for u := range s {
					v := qkv[u][2*C+hh*hd : 2*C+hh*hd+hd]
					for d := range hd {
						att[t][hh*hd+d] += s[u] / sum * v[d]
					}
				}
			}
		}
		proj := refLinear(att, l.ProjW, l.ProjB)
		for t := range T {
			for i := range C {
				x[t][i] += proj[t][i]
			}
		}
		h = refLayerNorm(x, l.LN2W, l.LN2B, cfg.LayerNormEps)
		fc := refLinear(h, l.FCW, l.FCB)
		for _, row := range fc {
			for i, v := range row {
				if cfg.ExactGELU { // x·Φ(x)
					row[i] = v * 0.5 * math.Erfc(-v/math.Sqrt2)
				} else {
					row[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
				}
			}
		}
		out := refLinear(fc, l.FCProjW, l.FCProjB)
		for t := range T {
			for i := range C {
				x[t][i] += out[t][i]
			}
		}
	}
	h := refLayerNorm(x, w.LNFW, w.LNFB, cfg.LayerNormEps)
	nll := make([]float64, T-1)
	logits := make([]float64, cfg.VocabSize)
	for t := 0; t+1 < T; t++ {
		mx := math.Inf(-1)
		for v := range logits {
			logits[v] = 0
			for i := range C {
				logits[v] += round(h[t][i]) * round(float64(w.LMHead[v*C+i]))
			}
			mx = math.Max(mx, logits[v])
		}
		var sum float64
		for _, l := range logits {
			sum += math.Exp(l - mx)
		}
		nll[t] = mx + math.Log(sum) - logits[tokens[t+1]]
	}
	return nll
}

// refLayerNorm normalizes every row of x with weight g and bias b.
func refLayerNorm(x [][]float64, g, b []float32, eps float64) [][]float64 {
	out := make([][]float64, len(x))
	for t, row := range x {
		var mean, v float64
		for _, a := range row {
			mean += a
		}
		mean /= float64(len(row))
		for _, a := range row {
			v += (a - mean) * (a - mean)
		}
		v /= float64(len(row))
		out[t] = make([]float64, len(row))
		for i, a := range row {
			out[t][i] = (a-mean)/math.Sqrt(v+eps)*float64(g[i]) + float64(b[i])
		}
	}
	return out
}

// refLinear is Hugging Face's Conv1D: x (T, in) · W (in, out) + b (out).
func refLinear(x [][]float64, W, b []float32) [][]float64 {
	return refLinearRounded(x, W, b, func(x float64) float64 { return x })
}

// refLinearRounded is refLinear with round applied to x and W.
func refLinearRounded(x [][]float64, W, b []float32, round func(float64) float64) [][]float64 {
	nout := len(b)
	out := make([][]float64, len(x))
	for t, row := range x {
		out[t] = make([]float64, nout)
		for o := range nout {
			s := float64(b[o])
			for i, a := range row {
				s += round(a) * round(float64(W[i*nout+o]))
			}
			out[t][o] = s
		}
	}
	return out
}

// Package refops holds the naive forms of GPT-2's and the Llama family's
// operations, in float64, with the shapes written out: the plain-Go reference
// that every GPU kernel and fast CPU kernel is tested against. Nothing here is tuned; each function is the
// formula, loop by loop, so that it can be read against the math.
//
// Matrices are row-major; (R, C) means R rows of C values. It imports nothing
// of this module.
package refops

import "math"

// Embed: out (N, C) = wte[tokens[n]] + wpe[pos[n]]; wte (V, C), wpe (T, C).
func Embed(tokens, pos []int32, wte, wpe []float64, C int) []float64 {
	out := make([]float64, len(tokens)*C)
	for n, id := range tokens {
		for c := range C {
			out[n*C+c] = wte[int(id)*C+c] + wpe[int(pos[n])*C+c]
		}
	}
	return out
}

// LayerNorm: out (N, C) = (x - mean) / sqrt(var + eps) * w + b per row of x
// (N, C), with the biased variance; w, b (C).
func LayerNorm(x, w, b []float64, N, C int, eps float64) []float64 {
	out := make([]float64, N*C)
	for n := range N {
		row := x[n*C : (n+1)*C]
		mean := 0.0
		for _, v := range row {
			mean += v
		}
		mean /= float64(C)
		variance := 0.0
		for _, v := range row {
			variance += (v - mean) * (v - mean)
		}
		variance /= float64(C)
		rstd := 1 / math.Sqrt(variance+eps)
		for c, v := range row {
			out[n*C+c] = (v-mean)*rstd*w[c] + b[c]
		}
	}
	return out
}

// Matmul: out (M, N) = x (M, K) · w (K, N) + bias (N); bias may be nil.
// w is in Hugging Face Conv1D layout (in, out).
func Matmul(x, w, bias []float64, M, K, N int) []float64 {
	out := make([]float64, M*N)
	for m := range M {
		for n := range N {
			s := 0.0
			if bias != nil {
				s = bias[n]
			}
			for k := range K {
				s += x[m*K+k] * w[k*N+n]
			}
			out[m*N+n] = s
		}
	}
	return out
}

// GELUErf is the exact GELU, x·Φ(x) = 0.5·x·(1 + erf(x/√2)).
func GELUErf(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// GELU is GPT-2's gelu_new: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).
func GELU(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// Attention is causal multi-head self-attention of one sequence: q, k, v are
// (T, C) with NH heads of C/NH channels; out (T, C) where, per head and query
// t, out_t = Σ_{s<=t} softmax_s(q_t·k_s / sqrt(hd)) v_s.
func Attention(q, k, v []float64, T, C, NH int) []float64 {
	hd := C / NH
	out := make([]float64, T*C)
	scale := 1 / math.Sqrt(float64(hd))
	for h := range NH {
		for t := range T {
			scores := make([]float64, t+1)
			mx := math.Inf(-1)
			for s := 0; s <= t; s++ {
				d := 0.0
				for i := range hd {
					d += q[t*C+h*hd+i] * k[s*C+h*hd+i]
				}
				scores[s] = d * scale
				mx = math.Max(mx, scores[s])
			}
			sum := 0.0
			for s := range scores {
				scores[s] = math.Exp(scores[s] - mx)
				sum += scores[s]
			}
			for s, p := range scores {
				for i := range hd {
					out[t*C+h*hd+i] += p / sum * v[s*C+h*hd+i]
				}
			}
		}
	}
	return out
}

// NLL: per row p of h (P, C), logsumexp over v of h_p · wte_v minus the logit
// of targets[p]; wte (V, C) is the (tied) LM head.
func NLL(h, wte []float64, targets []int32, P, C, V int) []float64 {
	out := make([]float64, P)
	logits := make([]float64, V)
	for p := range P {
		mx := math.Inf(-1)
		for v := range V {
			d := 0.0
			for c := range C {
				d += h[p*C+c] * wte[v*C+c]
			}
			logits[v] = d
			mx = math.Max(mx, d)
		}
		sum := 0.0
		for _, l := range logits {
			sum += math.Exp(l - mx)
		}
		out[p] = mx + math.Log(sum) - logits[targets[p]]
	}
	return out
}

// LogSoftmax is the log-softmax of logits in float64: x - max - log Σ exp(x - max).
func LogSoftmax(logits []float32) []float64 {
	mx := math.Inf(-1)
	for _, x := range logits {
		mx = max(mx, float64(x))
	}
	s := 0.0
	for _, x := range logits {
		s += math.Exp(float64(x) - mx)
	}
	lse := mx + math.Log(s)
	out := make([]float64, len(logits))
	for i, x := range logits {
		out[i] = float64(x) - lse
	}
	return out
}

// The Llama family's operations.

// RMSNorm: out (N, C) = x / sqrt(mean(x²) + eps) * w per row of x (N, C); w (C).
func RMSNorm(x, w []float64, N, C int, eps float64) []float64 {
	out := make([]float64, N*C)
	for n := range N {
		row := x[n*C : (n+1)*C]
		ss := 0.0
		for _, v := range row {
			ss += v * v
		}
		r := 1 / math.Sqrt(ss/float64(C)+eps)
		for c, v := range row {
			out[n*C+c] = v * r * w[c]
		}
	}
	return out
}

// Linear: out (M, N) = x (M, K) · wᵀ + bias (N) with w (N, K) as nn.Linear
// stores it; bias may be nil.
func Linear(x, w, bias []float64, M, K, N int) []float64 {
	out := make([]float64, M*N)
	for m := range M {
		for n := range N {
			s := 0.0
			if bias != nil {
				s = bias[n]
			}
			for k := range K {
				s += x[m*K+k] * w[n*K+k]
			}
			out[m*N+n] = s
		}
	}
	return out
}

// RopeInvFreq is the rotary frequencies of head size hd: θ^(-2i/hd) for
// i < hd/2, then, when factor > 0, transformers' llama3 rope_scaling (with
// low_freq_factor low, high_freq_factor high and the original context
// orig): wavelengths 2π/f above orig/low divided by factor, below
// orig/high kept, between them interpolated by smooth = (orig/wavelength -
// low) / (high - low) as (1-smooth)·f/factor + smooth·f.
func RopeInvFreq(theta float64, hd int, factor, low, high float64, orig int) []float64 {
	inv := make([]float64, hd/2)
	for i := range inv {
		f := math.Pow(theta, -float64(2*i)/float64(hd))
		if factor > 0 {
			o := float64(orig)
			switch wl := 2 * math.Pi / f; {
			case wl > o/low:
				f /= factor
			case wl >= o/high:
				s := (o/wl - low) / (high - low)
				f = (1-s)*f/factor + s*f
			}
		}
		inv[i] = f
	}
	return inv
}

// RopeInvFreqYarn is the rotary frequencies of head size hd with
// transformers' yarn rope_scaling (_compute_yarn_parameters): with
// extrapolation θ^(-2i/hd) and interpolation the same divided by factor,
// and the correction range [low, high] the dimensions
// hd·ln(orig/(β·2π))/(2·ln θ) for β = betaFast and betaSlow (floored and
// ceiled when truncate, clamped to [0, hd-1], high + 0.001 where equal),
// frequency i is interpolation·(1-e) + extrapolation·e with e = 1 -
// clamp((i-low)/(high-low), 0, 1). A zero betaFast or betaSlow is
// transformers' default, 32 or 1.
func RopeInvFreqYarn(theta float64, hd int, factor float64, orig int, betaFast, betaSlow float64, truncate bool) []float64 {
	if betaFast == 0 {
		betaFast = 32
	}
	if betaSlow == 0 {
		betaSlow = 1
	}
	dim := float64(hd)
	correctionDim := func(rotations float64) float64 {
		return dim * math.Log(float64(orig)/(rotations*2*math.Pi)) / (2 * math.Log(theta))
	}
	low, high := correctionDim(betaFast), correctionDim(betaSlow)
	if truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = math.Max(low, 0), math.Min(high, dim-1)
	if low == high {
		high += 0.001
	}
	inv := make([]float64, hd/2)
	for i := range inv {
		posFreq := math.Pow(theta, float64(2*i)/dim)
		extrapolation, interpolation := 1/posFreq, 1/(factor*posFreq)
		ramp := math.Min(math.Max((float64(i)-low)/(high-low), 0), 1)
		e := 1 - ramp
		inv[i] = interpolation*(1-e) + extrapolation*e
	}
	return inv
}

// YarnAttentionFactor is yarn's attention factor, by which transformers
// multiplies cos and sin: attention where it is not 0, else
// get_mscale(factor, mscale) / get_mscale(factor, mscaleAllDim) where both
// are not 0, else get_mscale(factor, 1), with get_mscale(s, m) = 0.1·m·ln(s)
// + 1 (1 for s <= 1).
func YarnAttentionFactor(factor, attention, mscale, mscaleAllDim float64) float64 {
	if attention != 0 {
		return attention
	}
	get := func(m float64) float64 {
		if factor <= 1 {
			return 1
		}
		return 0.1*m*math.Log(factor) + 1
	}
	if mscale != 0 && mscaleAllDim != 0 {
		return get(mscale) / get(mscaleAllDim)
	}
	return get(1)
}

// Rotate turns x (one head, hd values) to position pos, rotate-half style:
// x·cos(pos·f) + rotate_half(x)·sin(pos·f), rotate_half(x) = (-x2, x1) for
// the halves x1, x2, angle of channel i with frequency invFreq[i mod hd/2].
func Rotate(x []float64, pos int, invFreq []float64) {
	half := len(x) / 2
	for i := range half {
		s, c := math.Sincos(float64(pos) * invFreq[i])
		a, b := x[i], x[i+half]
		x[i], x[i+half] = a*c-b*s, b*c+a*s
	}
}

// SiLU is x·sigmoid(x) = x / (1 + e^-x).
func SiLU(x float64) float64 { return x / (1 + math.Exp(-x)) }

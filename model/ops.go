package model

import "math"

// The element-wise and row-wise operations of the CPU forward, named as in llm.c
// (op_forward(out, inputs..., dims), shapes in the comments). N is the number of
// rows (tokens of every sequence in the chunk, back to back), C the channels.

const (
	rowBlock = 16 // rows per task of the row-wise ops
	attRows  = 32 // query rows per attention task
	kvPanel  = 48 // keys per panel of the transposed keys (two AVX2 or one AVX-512 gemmNN block wide)
)

// span is one sequence inside a chunk: its rows are [off, off+n).
type span struct{ off, n int }

// encoderForward: out (N, C) = wte[tokens[n]] + wpe[position of n in its sequence].
// tokens is (N), wte is (V, C), wpe is (NPositions, C), or nil for a model
// without learned positions (the Llama family's rotate q and k instead);
// spans say where each sequence starts, so positions restart at 0 for every
// sequence.
func encoderForward(out []float32, tokens []int32, wte matrix, wpe []float32, spans []span, C int) {
	for _, sp := range spans {
		for t := range sp.n {
			n := sp.off + t
			var pe []float32
			if wpe != nil {
				pe = wpe[t*C:][:C]
			}
			embedRow(out[n*C:][:C], wte, int(tokens[n]), pe)
		}
	}
}

// embedRow sets o (C) = wte[token] + pe, wte's row widened to float32; a nil
// pe adds nothing.
func embedRow(o []float32, wte matrix, token int, pe []float32) {
	wte.widen(o, token*len(o))
	if pe == nil {
		return
	}
	pe = pe[:len(o)]
	for i := range o {
		o[i] += pe[i]
	}
}

// layernormForward: out (N, C) = (inp - mean) / sqrt(var + eps) * w + b, with the
// mean and (biased) variance of each row of inp (N, C); w, b are (C).
// Statistics are taken in float64, the output is float32 (layernormRow).
func (c *CPU) layernormForward(out, inp, w, b []float32, N, C int, eps float64) {
	w, b = w[:C], b[:C]
	c.parallelFor((N+rowBlock-1)/rowBlock, func(_, task int) {
		for n := task * rowBlock; n < min(N, (task+1)*rowBlock); n++ {
			layernormRow(out[n*C:][:C], inp[n*C:][:C], w, b, eps)
		}
	})
}

// geluForward applies the model's GELU in place to x (N, D): gelu_new,
// 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))), or with ExactGELU
// 0.5·x·(1 + erf(x/√2)). It runs row by row: a vector set computes a row's
// last D%lanes elements with the scalar code, whose bits differ from the
// vector kernel's, so each row must be cut alike wherever it sits in the
// chunk (as one slice of several rows, a row's last elements went to either
// by the rows after it: the batch changed a sequence's NLLs).
func (c *CPU) geluForward(x []float32, N, D int) {
	row := geluRow
	if c.cfg.ExactGELU {
		row = geluErfRow
	}
	c.parallelFor((N+rowBlock-1)/rowBlock, func(_, task int) {
		for r := task * rowBlock; r < min(N, (task+1)*rowBlock); r++ {
			row(x[r*D:][:D])
		}
	})
}

// geluErfRowGeneric applies the exact GELU, x·Φ(x) = 0.5·x·erfc(-x/√2), to
// every element of x: erfc by Numerical Recipes' Chebyshev fit (erfcc;
// fractional error below 1.2e-7; the vector kernels and the GPU's epilogue
// evaluate the same fit in float32) evaluated in float64 and rounded once,
// so within 2 float32 ulps of x·Φ(x). The complement keeps the digits of
// the tail (x < 0) that 1 + erf would cancel.
func geluErfRowGeneric(x []float32) {
	for i, v := range x {
		f := float64(v)
		x[i] = float32(0.5 * f * erfc(-f/math.Sqrt2))
	}
}

// erfc is Numerical Recipes' erfcc: t·exp(-z² + P(t)), t = 1/(1 + z/2),
// z = |x|, fractional error below 1.2e-7; erfc(-z) = 2 - erfc(z).
func erfc(x float64) float64 {
	z := math.Abs(x)
	t := 1 / (1 + 0.5*z)
	q := -1.26551223 + t*(1.00002368+t*(0.37409196+t*(0.09678418+t*(-0.18628806+
		t*(0.27886807+t*(-1.13520398+t*(1.48851587+t*(-0.82215223+t*0.17087277))))))))
	r := t * math.Exp(q-z*z)
	if x < 0 {
		return 2 - r
	}
	return r
}

// geluRowGeneric applies gelu to every element of x.
func geluRowGeneric(x []float32) {
	for i, v := range x {
		x[i] = gelu(v)
	}
}

// gelu is GPT-2's gelu_new (the tanh approximation) in float32.
func gelu(v float32) float32 {
	const s = float32(0.7978845608028654) // sqrt(2/π)
	u := s * (v + 0.044715*v*v*v)
	return 0.5 * v * (1 + float32(math.Tanh(float64(u))))
}

// keyPanels is the number of kvPanel-key panels that hold n keys.
func keyPanels(n int) int { return (n + kvPanel - 1) / kvPanel }

// spanPanels returns the first key panel of each span (each sequence's keys
// start a panel) and the panels of all of them.
func spanPanels(spans []span) (first []int, total int) {
	first = make([]int, len(spans))
	for i, sp := range spans {
		first[i] = total
		total += keyPanels(sp.n)
	}
	return first, total
}

// heads is the shape of a block's attention: the rows of qkv hold the
// queries of n query heads, then the keys and the values of kv heads, each
// head hd channels; query head h attends with key/value head h/(n/kv)
// (grouped-query attention; GPT-2 has kv = n).
type heads struct{ n, kv, hd int }

// headsOf is cfg's attention shape.
func headsOf(cfg Config) heads { return heads{cfg.NHead, cfg.KVHeads(), cfg.HeadDim()} }

func (h heads) qDim() int  { return h.n * h.hd }
func (h heads) kvDim() int { return h.kv * h.hd }

// ld is the row stride of qkv: q|k|v.
func (h heads) ld() int { return h.qDim() + 2*h.kvDim() }

// group is the key/value head query head q attends with.
func (h heads) group(q int) int { return q / (h.n / h.kv) }

// transposeKV: kt (kv, panels, hd, kvPanel) holds the key vectors of qkv
// (N, ld) per key/value head in panels of kvPanel keys, channel-major inside
// each (key s of a sequence is column s%kvPanel of its panel s/kvPanel), so
// that attention's scores are gemmNN products of contiguous, L1-sized panels;
// vt (kv, hd, N) holds the values per head, transposed so that attention's
// weighted sum (gemmNT over the keys) runs along contiguous rows. The padding
// columns of a sequence's last panel are never read.
func (c *CPU) transposeKV(kt, vt, qkv []float32, spans []span, N int, hs heads) {
	const chBlock = 16 // channels per task: one cache line of qkv per row
	hd, ld, kOff, KV := hs.hd, hs.ld(), hs.qDim(), hs.kvDim()
	vOff := kOff + KV
	first, panels := spanPanels(spans)
	headStride := panels * hd * kvPanel
	blocks := (KV + chBlock - 1) / chBlock
	c.parallelFor(2*blocks, func(_, task int) {
		ch0, ch1 := task%blocks*chBlock, min(KV, (task%blocks+1)*chBlock)
		if task >= blocks { // values
			for n := range N {
				v := qkv[n*ld+vOff+ch0 : n*ld+vOff+ch1]
				for j, x := range v {
					vt[(ch0+j)*N+n] = x
				}
			}
			return
		}
		var at [chBlock]int // where each key channel of the block starts in kt
		for j := range ch1 - ch0 {
			ch := ch0 + j
			at[j] = ch/hd*headStride + ch%hd*kvPanel
		}
		for i, sp := range spans {
			for s := range sp.n {
				k := qkv[(sp.off+s)*ld+kOff+ch0:][:ch1-ch0]
				base := (first[i]+s/kvPanel)*hd*kvPanel + s%kvPanel
				for j, x := range k {
					kt[at[j]+base] = x
				}
			}
		}
	})
}

// scoresNN: sc (rows, keys) = q (rows, hd; row stride ldq) · kᵀ for the
// first keys keys of one head's panels kp (panels, hd, kvPanel), a gemmNN
// per panel.
func scoresNN(sc, q []float32, ldq int, kp []float32, rows, keys, hd int) {
	for p := 0; p*kvPanel < keys; p++ {
		gemmNN(sc[p*kvPanel:], keys, q, ldq, kp[p*hd*kvPanel:], kvPanel, rows, min(kvPanel, keys-p*kvPanel), hd)
	}
}

// attentionForward: out (N, qDim) = causal self-attention of every sequence
// in spans. qkv is (N, ld) with q|k|v along the channels and heads of hd
// channels inside each (hs); kt (kv, panels, hd, kvPanel) and vt (kv, hd, N)
// are from transposeKV. Per query head h and query t, with g = hs.group(h):
// p = softmax((q_t · k_s) / (sqrt(hd)·div) over s <= t), out_t = Σ_s p_s v_s,
// all in float32 with the row maximum subtracted before exp; div is the
// layer's Config.AttnLayerDivisor, 1 but for GPT-2's
// scale_attn_by_inverse_layer_idx. scores is per-worker scratch of
// attRows*maxT floats, maxT the longest span.
func (c *CPU) attentionForward(out, qkv, kt, vt []float32, spans []span, N int, hs heads, div float32, scores []float32, maxT int) {
	hd, ld, QD, NH := hs.hd, hs.ld(), hs.qDim(), hs.n
	scale := float32(math.Sqrt(float64(hd))) * div
	first, panels := spanPanels(spans)
	type block struct{ off, panel, t0, t1 int }
	var blocks []block
	for i, sp := range spans {
		for t0 := 0; t0 < sp.n; t0 += attRows {
			blocks = append(blocks, block{sp.off, first[i], t0, min(sp.n, t0+attRows)})
		}
	}
	c.parallelFor(len(blocks)*NH, func(worker, task int) {
		bl, h := blocks[task/NH], task%NH
		g := hs.group(h)
		off, t0, t1 := bl.off, bl.t0, bl.t1
		rows := t1 - t0
		sc := scores[worker*attRows*maxT:][:rows*t1]
		// sc (rows, t1) = q[t0:t1] · k[0:t1]ᵀ, k from the sequence's panels.
		scoresNN(sc, qkv[(off+t0)*ld+h*hd:], ld, kt[(g*panels+bl.panel)*hd*kvPanel:], rows, t1, hd)
		for i := range rows {
			row := sc[i*t1:][:t1]
			valid := row[:t0+i+1]
			mx := divMaxRow(valid, scale)
			mulRow(valid, 1/expSubRow(valid, mx))
			clear(row[len(valid):])
		}
		// out[t0:t1, h] (rows, hd) = p (rows, t1) · v[0:t1]; vt rows are v's channels.
		gemmNT(out[(off+t0)*QD+h*hd:], QD, sc, t1, vt[g*hd*N+off:], N, rows, hd, t1)
	})
}

// divMaxRowGeneric sets row[i] /= d and returns the largest quotient (-Inf
// for an empty row).
func divMaxRowGeneric(row []float32, d float32) float32 {
	mx := float32(math.Inf(-1))
	for i, v := range row {
		v /= d
		row[i] = v
		mx = max(mx, v)
	}
	return mx
}

// maxRowGeneric returns the largest row[i] (-Inf for an empty row).
func maxRowGeneric(row []float32) float32 {
	mx := float32(math.Inf(-1))
	for _, v := range row {
		mx = max(mx, v)
	}
	return mx
}

// mulRowGeneric sets row[i] *= m.
func mulRowGeneric(row []float32, m float32) {
	for i := range row {
		row[i] *= m
	}
}

// expf is e^x rounded to float32, at most 1 ulp from the correctly rounded value
// and about twice as fast as float32(math.Exp(float64(x))): x = n·ln2 + r with
// |r| <= ln2/2, e^r by its degree-8 Taylor polynomial in float64, scaled by 2^n.
func expf(x float32) float32 {
	const (
		log2e = 1.4426950408889634
		ln2   = 0.6931471805599453
	)
	switch {
	case x != x:
		return x
	case x < -104: // e^x is below half the smallest float32 denormal
		return 0
	case x > 89: // above the largest float32
		return float32(math.Inf(1))
	}
	xd := float64(x)
	t := xd * log2e
	n := int64(t + 0.5)
	if t < 0 {
		n = int64(t - 0.5)
	}
	r := xd - float64(n)*ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040+r*(1.0/40320))))))))
	return float32(p * math.Float64frombits(uint64(n+1023)<<52))
}

// expSubRowGeneric sets row[i] = expf(row[i] - m) and returns their sum, added
// in increasing i.
func expSubRowGeneric(row []float32, m float32) float32 {
	var sum float32
	for i, v := range row {
		e := expf(v - m)
		row[i] = e
		sum += e
	}
	return sum
}

// sumExpSubGeneric returns Σ expf(row[i] - m), added in increasing i.
func sumExpSubGeneric(row []float32, m float32) float32 {
	var sum float32
	for _, v := range row {
		sum += expf(v - m)
	}
	return sum
}

package model

import (
	"fmt"
	"math"
	"sync"
)

// The Llama family's operations on the CPU: RMSNorm, the rotary embedding
// (with Qwen3's per-head RMSNorm of q and k before it), the SwiGLU MLP, and
// the block that runs them. The attention itself is GPT-2's, with grouped
// key/value heads (ops.go).

// llamaBlock runs layer l of a Llama-family model over the n rows of
// b.residual in place: x += o_proj(attn(rope(q, k), v)) of input_layernorm(x);
// x += down_proj(silu(gate_proj(h)) * up_proj(h)) with h = post_attention_layernorm(x).
// att rotates q and k at its rows' positions before attending.
func (c *CPU) llamaBlock(l int, b *blockBufs, att attender, n int) {
	cfg := c.cfg
	C, QD, I, eps := cfg.NEmbd, cfg.QDim(), cfg.Inner(), cfg.LayerNormEps
	ld := headsOf(cfg).ld()
	w := &c.layers[l]
	h := b.fch[:n*I]
	c.rmsnormForward(b.ln, b.residual, w.ln1w, n, C, eps)                         // (n, C)
	c.matmulForward(b.qkv, b.ln, w.qkvW, w.qkvB, n, C, ld, false, b.tile)         // (n, QD+2KVD) q|k|v
	att.attend(l, b.atty, b.qkv, n)                                               // (n, QD)
	c.matmulForward(b.residual, b.atty, w.projW, w.projB, n, QD, C, true, b.tile) // += (n, C)
	c.rmsnormForward(b.ln, b.residual, w.ln2w, n, C, eps)                         // (n, C)
	c.swigluMLPForward(h, b.ln, w.fcW, w.upW, w.fcB, w.upB, n, C, I, b.tile)      // (n, I) silu(gate)·up
	c.matmulForward(b.residual, h, w.fcProjW, w.fcProjB, n, I, C, true, b.tile)   // += (n, C)
}

// rmsnormForward: out (N, C) = inp / sqrt(mean(inp²) + eps) * w for every
// row of inp (N, C); w is (C). The mean square is taken in float64, the
// output is float32 (rmsnormRow).
func (c *CPU) rmsnormForward(out, inp, w []float32, N, C int, eps float64) {
	w = w[:C]
	c.parallelFor((N+rowBlock-1)/rowBlock, func(_, task int) {
		for n := task * rowBlock; n < min(N, (task+1)*rowBlock); n++ {
			rmsnormRow(out[n*C:][:C], inp[n*C:][:C], w, eps)
		}
	})
}

// swigluMLPForward sets out (N, I) = silu(inp·gateWᵀ + gateB) ·
// (inp·upWᵀ + upB), with silu(x) = x / (1 + e^-x) (swigluRow: the vector
// kernels on amd64); inp is (N, C), the biases (I) or nil. It works tile by
// tile as matmulForward does, both products of a tile into the two halves of
// the worker's scratch, so the gate and up activations never go to memory
// whole and the input is rounded to bf16 once for both (the bf16 mode).
// Every element sees the operations of two matmulForward calls and an
// elementwise SwiGLU, so the result is theirs bit for bit.
func (c *CPU) swigluMLPForward(out, inp []float32, gateW, upW matrix, gateB, upB []float32, N, C, I int, tile []float32) {
	if gateW.bf != upW.bf {
		panic("swigluMLPForward: gate_proj and up_proj in different modes")
	}
	a16, release := c.bf16Operand(gateW, inp[:N*C], C)
	defer release()
	c.matmulTiles(N, I, tile, func(scratch []float32, r0, c0, rn, cn int) {
		g, u := scratch[:mmRows*mmCols], scratch[mmRows*mmCols:]
		for _, p := range [...]struct {
			dst  []float32
			w    matrix
			bias []float32
		}{{g, gateW, gateB}, {u, upW, upB}} {
			gemmNTW(p.dst, mmCols, inp[r0*C:], p.w.panelRows(a16, r0, C), C, p.w, c0*C, C, rn, cn, C)
			b := zeros[:cn]
			if p.bias != nil {
				b = p.bias[c0:][:cn]
			}
			addBias(p.dst, mmCols, p.dst, mmCols, b, rn, cn) // dst += b, as matmulForward's output
		}
		for i := range rn {
			gi := g[i*mmCols:][:cn]
			swigluRow(gi, u[i*mmCols:][:cn])
			copy(out[(r0+i)*I+c0:][:cn], gi)
		}
	})
}

// swigluRowGeneric sets g[i] = g[i] / (1 + expf(-g[i])) * u[i], u as long as
// g.
func swigluRowGeneric(g, u []float32) {
	u = u[:len(g)]
	for i, x := range g {
		g[i] = x / (1 + expf(-x)) * u[i]
	}
}

// rope is the rotary embedding's table: for position p and frequency i <
// HeadDim/2, cos[p*half+i] and sin[p*half+i] of the angle p·invFreq[i]
// times amp (1 but for yarn), computed in float64 and rounded once to
// float32. It grows to the positions asked for, under mu.
type rope struct {
	mu       sync.Mutex
	invFreq  []float64
	amp      float64 // RopeScaling.Amplitude: cos and sin are scaled by it
	cos, sin []float32
}

// ropeInvFreq is the rotary frequencies of cfg: θ^(-2i/d) for i < d/2, then
// its rope_scaling as transformers computes it (RopeScaling):
//   - linear: each divided by the factor;
//   - llama3: wavelengths shorter than orig/high_freq_factor kept, those
//     longer than orig/low_freq_factor divided by the factor, those between
//     interpolated;
//   - yarn: dimension i weighted between the divided and the kept frequency
//     by a ramp over [low, high], the dimensions at which the original
//     context turns beta_fast and beta_slow times (rounded outwards unless
//     truncate is false, clamped to [0, d-1]): kept below low, divided above
//     high.
func ropeInvFreq(cfg Config) []float64 {
	hd := cfg.HeadDim()
	inv := make([]float64, hd/2)
	for i := range inv {
		inv[i] = 1 / math.Pow(cfg.RopeTheta, float64(2*i)/float64(hd))
	}
	s := cfg.RopeScaling
	switch s.Type {
	case "linear":
		for i := range inv {
			inv[i] /= s.Factor
		}
	case "llama3":
		orig := float64(s.OrigPositions)
		lowWavelen, highWavelen := orig/s.LowFreq, orig/s.HighFreq
		for i, f := range inv {
			switch wl := 2 * math.Pi / f; {
			case wl < highWavelen:
			case wl > lowWavelen:
				inv[i] = f / s.Factor
			default:
				smooth := (orig/wl - s.LowFreq) / (s.HighFreq - s.LowFreq)
				inv[i] = (1-smooth)*f/s.Factor + smooth*f
			}
		}
	case "yarn":
		low, high := yarnRamp(s, float64(hd), cfg.RopeTheta)
		for i, f := range inv {
			r := min(max((float64(i)-low)/(high-low), 0), 1) // 0: kept, 1: divided
			inv[i] = f/s.Factor*r + f*(1-r)
		}
	}
	return inv
}

// yarnRamp is the ends of yarn's ramp for head size dim and base theta: the
// dimension at which the original context turns beta_fast times, and the one
// at which it turns beta_slow times, rounded outwards (unless NoTruncate),
// clamped to [0, dim-1], and 0.001 apart where they meet.
func yarnRamp(s RopeScaling, dim, theta float64) (low, high float64) {
	fast, slow := s.BetaFast, s.BetaSlow
	if fast == 0 {
		fast = 32
	}
	if slow == 0 {
		slow = 1
	}
	at := func(turns float64) float64 {
		return dim * math.Log(float64(s.OrigPositions)/(turns*2*math.Pi)) / (2 * math.Log(theta))
	}
	low, high = at(fast), at(slow)
	if !s.NoTruncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = max(low, 0), min(high, dim-1)
	if low == high {
		high += 0.001
	}
	return low, high
}

// table returns cos and sin of at least n positions.
func (r *rope) table(n int) (cos, sin []float32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	half := len(r.invFreq)
	if have := len(r.cos) / max(half, 1); have < n {
		n = max(n, 2*have) // amortized growth
		cos, sin := make([]float32, n*half), make([]float32, n*half)
		copy(cos, r.cos)
		copy(sin, r.sin)
		for p := have; p < n; p++ {
			for i, f := range r.invFreq {
				s, c := math.Sincos(float64(p) * f)
				cos[p*half+i], sin[p*half+i] = float32(c*r.amp), float32(s*r.amp)
			}
		}
		r.cos, r.sin = cos, sin
	}
	return r.cos, r.sin
}

// rotateQK prepares layer l's queries and keys in qkv (rows, ld) for
// attention: with QKNorm each head's q and k are RMS-normalized over
// head_dim (q_norm, k_norm), then every head's q and k are rotated at its
// row's position: row sp.off+t of span sp is at position start+t. The
// rotation is transformers' rotate-half form: for i < d/2,
// (x_i, x_{i+d/2}) becomes (x_i·cos − x_{i+d/2}·sin, x_{i+d/2}·cos + x_i·sin).
func (c *CPU) rotateQK(l int, qkv []float32, spans []span, start int) {
	cfg, w := c.cfg, &c.layers[l]
	hs := headsOf(cfg)
	hd, half, ld := hs.hd, hs.hd/2, hs.ld()
	maxT := 0
	for _, sp := range spans {
		maxT = max(maxT, sp.n)
	}
	cos, sin := c.rope.table(start + maxT)
	type rows struct{ off, n, pos int } // rows [off, off+n) at positions pos..
	var tasks []rows
	for _, sp := range spans {
		for t0 := 0; t0 < sp.n; t0 += rowBlock {
			tasks = append(tasks, rows{sp.off + t0, min(rowBlock, sp.n-t0), start + t0})
		}
	}
	eps := cfg.LayerNormEps
	c.parallelFor(len(tasks), func(_, task int) {
		tk := tasks[task]
		for r := range tk.n {
			p := tk.pos + r
			cs, sn := cos[p*half:][:half], sin[p*half:][:half]
			row := qkv[(tk.off+r)*ld:][:hs.qDim()+hs.kvDim()]
			for h := range hs.n + hs.kv {
				x := row[h*hd:][:hd]
				if w.qNorm != nil {
					nw := w.qNorm
					if h >= hs.n {
						nw = w.kNorm
					}
					rmsnormRow(x, x, nw, eps)
				}
				rotateHalves(x[:half], x[half:][:half], cs, sn)
			}
		}
	})
}

// concatRows stacks matrices with the same row length into one (their rows
// one after another), keeping a common 16-bit dtype and widening to float32
// where the dtypes differ.
func concatRows(ms ...matrix) matrix {
	n, same := 0, true
	for _, m := range ms {
		n += m.len()
		same = same && m.dtype == ms[0].dtype && m.bf == ms[0].bf
	}
	if same && ms[0].dtype != F32 {
		out := make([]uint16, 0, n)
		for _, m := range ms {
			out = append(out, m.u16...)
		}
		return matrix{dtype: ms[0].dtype, u16: out, bf: ms[0].bf}
	}
	out := make([]float32, n)
	off := 0
	for _, m := range ms {
		m.widen(out[off:off+m.len()], 0)
		off += m.len()
	}
	return f32Matrix(out)
}

// concatVecs stacks vectors; nil when all are nil (no biases).
func concatVecs(vs ...[]float32) []float32 {
	var out []float32
	for _, v := range vs {
		out = append(out, v...)
	}
	return out
}

// llamaLayer is block l's weights of a float32 Llama-family Model as the CPU
// wants them: q|k|v stacked into one (ld, C) matrix, the rest as stored
// (nn.Linear's (out, in) is already the kernels' layout).
func llamaLayer(l *Layer) (cpuLayer, error) {
	if (l.QB == nil) != (l.KB == nil) || (l.QB == nil) != (l.VB == nil) {
		return cpuLayer{}, fmt.Errorf("q, k and v biases must all be present or all absent")
	}
	return cpuLayer{
		ln1w:  l.LN1W,
		qkvW:  concatRows(f32Matrix(l.QW), f32Matrix(l.KW), f32Matrix(l.VW)),
		qkvB:  concatVecs(l.QB, l.KB, l.VB),
		qNorm: l.QNormW, kNorm: l.KNormW,
		projW: f32Matrix(l.OW), projB: l.OB,
		ln2w: l.LN2W,
		fcW:  f32Matrix(l.GateW), fcB: l.GateB,
		upW: f32Matrix(l.UpW), upB: l.UpB,
		fcProjW: f32Matrix(l.DownW), fcProjB: l.DownB,
	}, nil
}

// newRope prepares cfg's rotary table (filled as positions are asked for).
func newRope(cfg Config) *rope {
	return &rope{invFreq: ropeInvFreq(cfg), amp: cfg.RopeScaling.Amplitude()}
}

// newLlamaCPU is newCPU's second half for a Llama-family Model whose shapes
// checkShapes passed: c takes the weights as llamaLayer lays them out. With
// own, the Layer's matrices are set to nil (q, k and v were copied into
// their stack; the others are the CPU's now).
func newLlamaCPU(c *CPU, m *Model, own bool) *CPU {
	w := &m.Weights
	c.wte, c.lnfw = f32Matrix(w.WTE), w.LNFW
	c.lmHead = c.wte
	if !m.Config.TiedEmbed && w.LMHead != nil {
		c.lmHead = f32Matrix(w.LMHead)
	}
	c.rope = newRope(m.Config)
	c.layers = make([]cpuLayer, len(w.Layers))
	for i := range w.Layers {
		l := &w.Layers[i]
		cl, err := llamaLayer(l)
		if err != nil {
			c.err = fmt.Errorf("cpu: model %s: layer %d: %w", m.Source, i, err)
			return c
		}
		c.layers[i] = cl
		if own {
			l.QW, l.KW, l.VW, l.OW, l.GateW, l.UpW, l.DownW = nil, nil, nil, nil, nil, nil, nil
		}
	}
	return c
}

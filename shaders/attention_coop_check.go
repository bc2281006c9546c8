package shaders

import (
	"fmt"
	"math"
)

// attnExact is causal attention in float64 over a KV cache, with what
// attnCoopTol needs to bound a kernel's distance from it. Shapes as the
// kernels': q (B*T rows of ld values, query head h at channels h*HD), kc, vc
// (B, KV, S, HD) holding positions 0 .. pos0+T-1.
type attnExact struct {
	Out  []float64 // (B*T, H*HD): Σ_s w_s v_s, w the softmax of the scaled scores
	AbsV []float64 // (B*T, H*HD): Σ_s w_s |v_s|
	AX   []float64 // (B*T, H*HD): Σ_s w_s |x_s| |v_s|, x_s the score less the row's max
	MaxV []float64 // (B*T, H*HD): max_s |v_s|
	QK   []float64 // (B*T, H): max_s Σ_i |q_i k_s,i| / sqrt(HD)
}

// attnShape is an attention case: B sequences of a chunk of T rows at
// positions pos0 .. pos0+T-1 over a cache of S positions; H query heads of
// HD channels, KV key/value heads; ld values per row of qkv.
type attnShape struct{ B, T, H, KV, HD, S, pos0, ld int }

// attnExactOf computes attnExact for the case; q is (B*T, ld), kc and vc
// (B, KV, S, HD), all as float64.
func attnExactOf(sh attnShape, q, kc, vc []float64) attnExact {
	C := sh.H * sh.HD
	e := attnExact{Out: make([]float64, sh.B*sh.T*C), AbsV: make([]float64, sh.B*sh.T*C), AX: make([]float64, sh.B*sh.T*C),
		MaxV: make([]float64, sh.B*sh.T*C), QK: make([]float64, sh.B*sh.T*sh.H)}
	scale := 1 / math.Sqrt(float64(sh.HD))
	s := make([]float64, sh.pos0+sh.T)
	for b := range sh.B {
		for t := range sh.T {
			for h := range sh.H {
				g := h / (sh.H / sh.KV)
				qr := q[(b*sh.T+t)*sh.ld+h*sh.HD:][:sh.HD]
				n := sh.pos0 + t + 1
				mx, qk := math.Inf(-1), 0.0
				for j := range n {
					kr := kc[((b*sh.KV+g)*sh.S+j)*sh.HD:][:sh.HD]
					var d, a float64
					for i := range sh.HD {
						d += qr[i] * kr[i]
						a += math.Abs(qr[i] * kr[i])
					}
					s[j] = d * scale
					mx, qk = math.Max(mx, s[j]), math.Max(qk, a*scale)
				}
				var l float64
				for j := range n {
					l += math.Exp(s[j] - mx)
				}
				o := (b*sh.T+t)*C + h*sh.HD
				e.QK[(b*sh.T+t)*sh.H+h] = qk
				for j := range n {
					w := math.Exp(s[j]-mx) / l
					vr := vc[((b*sh.KV+g)*sh.S+j)*sh.HD:][:sh.HD]
					for i := range sh.HD {
						e.Out[o+i] += w * vr[i]
						e.AbsV[o+i] += w * math.Abs(vr[i])
						e.AX[o+i] += w * (mx - s[j]) * math.Abs(vr[i])
						e.MaxV[o+i] = math.Max(e.MaxV[o+i], math.Abs(vr[i]))
					}
				}
			}
		}
	}
	return e
}

// attnCoopTol bounds, per output, attention_coop.wgsl's distance from e, the
// float64 attention of the f16-rounded q, k and v (simt false), or from
// attention_shared.wgsl's result on the unrounded f32 inputs (simt true),
// for tiles of bkv keys and matrices of depth sk. With w_s the softmax
// weights and A = Σ_s w_s|v_s| per output:
//   - a score off by at most Δ moves each weight by a factor within
//     e^{±2Δ}, so the output by (e^{2Δ} - 1)·A. Δ is the f32 sums of Q·Kᵀ
//     ((HD/sk + 1) steps, 2⁻²² of Σ|q·k| each: coopTol's allowance for
//     matrix units' truncated alignment) and the f32 scaling and
//     subtraction of the max (2⁻²² of it); against SIMT also the f16
//     rounding of q and k (2⁻¹⁰ + 2⁻²² of Σ|q·k|) and the SIMT kernel's own
//     f32 dot products (HD·2⁻²⁴);
//   - p rounded to f16 for P·V (the sum l takes it unrounded): 2⁻¹¹·A, and
//     2⁻²⁵ absolute for each p below f16's normal range, at most
//     keys·2⁻²⁵·max|v| (l >= 1);
//   - exp: Vulkan allows 3 + 2|x| ulps (2⁻²³) for exp(x), so a weight moves
//     by that relative to it (x = s - m <= 0; measured from the final max it
//     is at least as large): 2⁻²²·(3A + 2·Σ w|x||v|); the rescale factors,
//     3 + 2|Δm| ulps each, at most (3·tiles + 4·max Σ|q·k|)·2⁻²³, twice
//     (they weigh tiles against each other);
//   - the f32 sums of P·V (keys/sk + 2 per tile, 2⁻²² of A each), of l
//     (keys·2⁻²⁴) and the division (2⁻²⁴);
//   - against SIMT, the rounding of v (2⁻¹¹·A) and the SIMT kernel's own exp,
//     rescale and f32 sums, counted as the coop kernel's are.
//
// keys is the row's visible keys (its position + 1).
func attnCoopTol(e attnExact, idx, row, keys, hd, sk, bkv int, simt bool) float64 {
	const u22, u23, u24, u25 = 0x1p-22, 0x1p-23, 0x1p-24, 0x1p-25
	qk, a := e.QK[row], e.AbsV[idx]
	tiles := float64(ceilDiv(keys, bkv))
	delta := qk * (float64(hd/sk+1)*u22 + u22)
	own := 2*u22*(3*a+2*e.AX[idx]) + 2*(3*tiles+4*qk)*u23*a + (float64(keys/sk)+2*tiles)*u22*a + float64(keys)*u24*a + u24*a
	rel := 0x1p-11 * a
	if simt {
		delta += qk * (0x1p-10 + u22 + float64(hd)*u24)
		own *= 2
		rel += 0x1p-11 * a
	}
	return (math.Exp(2*delta)-1)*a + rel + own + float64(keys)*u25*e.MaxV[idx] + 1e-7*math.Abs(e.Out[idx])
}

// Its shape: grouped heads (4 query heads on 2 key/value heads), two
// sequences, a chunk of 13 rows after 9 cached positions (the diagonal
// within tiles, several tiles, rows past the last block's); the model's
// head size. Small enough for lavapipe's loop limit where the kernels are
// lowered.
const checkAttnB, checkAttnT, checkAttnH, checkAttnKV, checkAttnPos0 = 2, 13, 4, 2, 9

// attnCase compares attention_coop.wgsl with attention_shared.wgsl on a
// random case of checkAttn* shape with the coop tiling's head size, against
// attnCoopTol (simt): ok false on a difference beyond it.
func (r *checkRun) attnCase(a *attnCoop) (bool, string, error) {
	g := r.g
	t := a.tiles
	sh := attnShape{B: checkAttnB, T: checkAttnT, H: checkAttnH, KV: checkAttnKV, HD: t.HD, S: checkAttnPos0 + checkAttnT + 3, pos0: checkAttnPos0}
	sh.ld = (sh.H + 2*sh.KV) * sh.HD
	q, qb := checkData(7, sh.B*sh.T*sh.ld, 1, false)
	kc, kb := checkData(8, sh.B*sh.KV*sh.S*sh.HD, 1, false)
	vc, vb := checkData(9, sh.B*sh.KV*sh.S*sh.HD, 1, false)
	bufs := map[string]Buf{}
	for _, b := range []struct {
		name string
		data []byte
	}{{"qkv", qb}, {"kc", kb}, {"vc", vb}} {
		buf, err := r.buffer(b.name, b.data)
		if err != nil {
			return false, "", err
		}
		bufs[b.name] = Buf{Buffer: buf}
	}
	C := sh.H * sh.HD
	params := Params{"B": float64(sh.B), "T": float64(sh.T), "C": float64(C), "H": float64(sh.H), "KV": float64(sh.KV),
		"S": float64(sh.S), "pos0": float64(sh.pos0), "ld": float64(sh.ld), "lscale": 1}
	simt := attnTilesFor(g.dev, sh.HD)
	var outs [2][]float32
	for i, run := range []struct {
		k    *Kernel
		cs   constSet
		work extent
	}{
		{a.k, constSet{}, a.work(sh.B, sh.H, sh.T)},
		{g.attnShared(simt), simt.constSet(sh.HD), perWorkgroup(simt.groups(sh.B, sh.H, sh.T))},
	} {
		out, err := r.buffer("out", make([]byte, 4*sh.B*sh.T*C))
		if err != nil {
			return false, "", err
		}
		bufs["out"] = Buf{Buffer: out}
		if err := r.dispatch(run.k, run.cs, bufs, params, run.work); err != nil {
			return false, "", err
		}
		if outs[i], err = r.read(out, sh.B*sh.T*C); err != nil {
			return false, "", err
		}
	}
	r.corrupt("attention", outs[0])
	e := attnExactOf(sh, q, kc, vc)
	var wst worst
	for row := range sh.B * sh.T {
		for h := range sh.H {
			for i := range sh.HD {
				idx := row*C + h*sh.HD + i
				keys := sh.pos0 + row%sh.T + 1
				bound := attnCoopTol(e, idx, row*sh.H+h, keys, sh.HD, t.cfg.K, t.BKV, true)
				wst.add(math.Abs(float64(outs[0][idx])-float64(outs[1][idx])), bound, func() string {
					return fmt.Sprintf("out[%d, head %d, %d] (%.6g on the matrix units, %.6g SIMT)", row, h, i, outs[0][idx], outs[1][idx])
				})
			}
		}
	}
	return wst.ratio <= 1, fmt.Sprintf("attention %dx%d rows, %d heads on %d, head size %d: %v", sh.B, sh.T, sh.H, sh.KV, sh.HD, &wst), nil
}

package backendtest

import (
	"sync"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// f64 widens float32 weights.
func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// referenceNLL is the float64 forward of m over tokens (refops, op by op):
// the NLL of each target tokens[first:] given the tokens before it.
func referenceNLL(m *model.Model, tokens []int32, first int) []float64 {
	cfg, w := m.Config, &m.Weights
	T, C, V := len(tokens), cfg.NEmbd, cfg.VocabSize
	pos := make([]int32, T)
	for i := range pos {
		pos[i] = int32(i)
	}
	x := refops.Embed(tokens, pos, f64(w.WTE), f64(w.WPE), C)
	for _, l := range w.Layers {
		h := refops.LayerNorm(x, f64(l.LN1W), f64(l.LN1B), T, C, cfg.LayerNormEps)
		qkv := refops.Matmul(h, f64(l.QKVW), f64(l.QKVB), T, C, 3*C)
		q, k, v := make([]float64, T*C), make([]float64, T*C), make([]float64, T*C)
		for t := range T {
			copy(q[t*C:], qkv[t*3*C:][:C])
			copy(k[t*C:], qkv[t*3*C+C:][:C])
			copy(v[t*C:], qkv[t*3*C+2*C:][:C])
		}
		att := refops.Attention(q, k, v, T, C, cfg.NHead)
		proj := refops.Matmul(att, f64(l.ProjW), f64(l.ProjB), T, C, C)
		for i := range x {
			x[i] += proj[i]
		}
		h = refops.LayerNorm(x, f64(l.LN2W), f64(l.LN2B), T, C, cfg.LayerNormEps)
		fc := refops.Matmul(h, f64(l.FCW), f64(l.FCB), T, C, 4*C)
		for i, u := range fc {
			fc[i] = refops.GELU(u)
		}
		out := refops.Matmul(fc, f64(l.FCProjW), f64(l.FCProjB), T, 4*C, C)
		for i := range x {
			x[i] += out[i]
		}
	}
	// Position t predicts tokens[t+1]: the targets' rows are first-1 .. T-2.
	P := T - first
	h := refops.LayerNorm(x[(first-1)*C:(T-1)*C], f64(w.LNFW), f64(w.LNFB), P, C, cfg.LayerNormEps)
	return refops.NLL(h, f64(w.LMHead), tokens[first:], P, C, V)
}

// references caches referenceSum's results by key: the float64 forward is
// the same for every backend a test process runs the suite on.
var references sync.Map

// referenceSum is the float64 reference's NLL sum and target count over seqs
// (key names them for the cache).
func referenceSum(key string, m *model.Model, seqs []model.Sequence) (float64, int) {
	type sum struct {
		nll float64
		n   int
	}
	if r, ok := references.Load(key); ok {
		return r.(sum).nll, r.(sum).n
	}
	var r sum
	for _, q := range seqs {
		for _, x := range referenceNLL(m, q.Tokens, q.First) {
			r.nll += x
			r.n++
		}
	}
	references.Store(key, r)
	return r.nll, r.n
}

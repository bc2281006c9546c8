package model

import "math"

const (
	vocabTile = 128 // LM-head rows (tokens) per loss task: 128*C floats stay in L2
	lossRows  = 64  // positions per logits block inside a loss task
)

// lmHeadLossForward: nll (P) = logsumexp(logits_p) - logits_p[targets[p]] with
// logits_p = h_p · lmHeadᵀ, for h (P, C) the final LayerNorm output at each
// predicting position and lmHead (V, C). The [P x V] logits never exist: each
// task takes a tile of vocabTile tokens, computes its logits lossRows positions at
// a time into scratch (per worker, lossRows*vocabTile floats) and leaves, per
// position, the tile's max and Σ exp(logit - max) in tileMax and tileSum
// (tiles, P), and the target's logit in tgt (P) when the target is in the tile.
// The tiles are then merged in vocabulary order (an online logsumexp), so the
// result does not depend on the thread count. All float32 (exp by sumExpSub and
// expf, log rounded from float64).
func (c *CPU) lmHeadLossForward(nll, h []float32, lmHead matrix, targets []int32, P, C, V int, tileMax, tileSum, tgt, scratch []float32) {
	h16, release := c.bf16Operand(lmHead, h[:P*C], C) // the bf16 mode's rounded h
	defer release()
	tiles := (V + vocabTile - 1) / vocabTile
	c.parallelFor(tiles, func(worker, tile int) {
		v0 := tile * vocabTile
		vn := min(vocabTile, V-v0)
		logits := scratch[worker*lossRows*vocabTile:][:lossRows*vocabTile]
		for p0 := 0; p0 < P; p0 += lossRows {
			pn := min(lossRows, P-p0)
			// logits (pn, vn) = h[p0:p0+pn] · lmHead[v0:v0+vn]ᵀ
			gemmNTW(logits, vocabTile, h[p0*C:], lmHead.panelRows(h16, p0, C), C, lmHead, v0*C, C, pn, vn, C)
			for i := range pn {
				p := p0 + i
				row := logits[i*vocabTile:][:vn]
				mx := maxRow(row)
				tileMax[tile*P+p] = mx
				tileSum[tile*P+p] = sumExpSub(row, mx)
				if t := int(targets[p]) - v0; t >= 0 && t < vn {
					tgt[p] = row[t]
				}
			}
		}
	})
	c.parallelFor((P+rowBlock-1)/rowBlock, func(_, task int) {
		for p := task * rowBlock; p < min(P, (task+1)*rowBlock); p++ {
			m, s := float32(math.Inf(-1)), float32(0)
			for tile := range tiles {
				tm, ts := tileMax[tile*P+p], tileSum[tile*P+p]
				if tm > m {
					s = s*expf(m-tm) + ts
					m = tm
				} else {
					s += ts * expf(tm-m)
				}
			}
			nll[p] = m + float32(math.Log(float64(s))) - tgt[p]
		}
	})
}

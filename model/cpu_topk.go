package model

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// TokenLogprob is a vocabulary id and its log-probability (nats) at a
// position: logit - logsumexp(logits).
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// kept is what a loss keeps beside the sums (LossPerToken,
// LossTopLogprobs): every target's NLL and, when k > 0, the k highest
// log-probabilities of every target's position.
type kept struct {
	nll []float32
	k   int
	top []TokenLogprob // k per target
}

// add appends the NLLs of one chunk's P targets, and their positions' top
// log-probabilities from h (P, C), the final LayerNorm output there.
func (kp *kept) add(c *CPU, nll, h []float32, P int) {
	kp.nll = append(kp.nll, nll[:P]...)
	if kp.k > 0 {
		kp.top = append(kp.top, c.topLogprobs(h, P, kp.k)...)
	}
}

// LossTopLogprobs is LossPerToken that also returns, for every target in the
// same order, the k highest log-probabilities over the vocabulary at the
// position predicting it (k per target, highest first, ties by lower id).
// A NaN logit ranks below every number, NaNs tie: a position with some NaN
// logits gives its finite ones' ids first, one all NaN ids 0 to k-1 (every
// log-probability there is NaN).
// The sums and NLLs are LossPerToken's bit for bit; the log-probabilities
// come from a second pass over the LM head at the scored positions only
// (logits by the loss's kernels, logsumexp in float64).
func (c *CPU) LossTopLogprobs(ctx context.Context, seqs []Sequence, k int) (LossSums, []float32, []TokenLogprob, error) {
	if k < 1 || k > c.cfg.VocabSize {
		return LossSums{}, nil, nil, fmt.Errorf("cpu loss: %d top log-probabilities asked, want 1 to the vocabulary's %d", k, c.cfg.VocabSize)
	}
	kp := &kept{nll: []float32{}, k: k}
	sums, err := c.loss(ctx, seqs, kp)
	if err != nil {
		return LossSums{}, nil, nil, err
	}
	return sums, kp.nll, kp.top, nil
}

// topLogprobs is, for each of the P rows of h (P, C), the k highest
// log-probabilities of logits = h_p · lmHeadᵀ, k per row, rows in order.
// Rows are split into tasks of lossRows; each streams the vocabulary in tiles
// of vocabTile through gemmNT (the loss's logits kernel, a tile of the LM head
// staying in cache for all the task's rows), keeping per row an online
// logsumexp (tile sums by sumExpSub, merged in float64) and a min-heap of the
// k best (logit, id).
func (c *CPU) topLogprobs(h []float32, P, k int) []TokenLogprob {
	C, V := c.cfg.NEmbd, c.cfg.VocabSize
	out := make([]TokenLogprob, P*k)
	h16, release := c.bf16Operand(c.lmHead, h[:P*C], C) // the bf16 mode's rounded h
	defer release()
	c.parallelFor((P+lossRows-1)/lossRows, func(_, task int) {
		p0 := task * lossRows
		pn := min(lossRows, P-p0)
		logits := make([]float32, pn*vocabTile)
		heaps := make([][]logitID, pn)
		maxes := make([]float64, pn)
		sums := make([]float64, pn)
		for i := range pn {
			heaps[i] = make([]logitID, 0, k)
			maxes[i] = math.Inf(-1)
		}
		for v0 := 0; v0 < V; v0 += vocabTile {
			vn := min(vocabTile, V-v0)
			gemmNTW(logits, vocabTile, h[p0*C:], c.lmHead.panelRows(h16, p0, C), C, c.lmHead, v0*C, C, pn, vn, C)
			for i := range pn {
				row := logits[i*vocabTile:][:vn]
				mx := float32(math.Inf(-1))
				for _, x := range row {
					mx = max(mx, x)
				}
				tm, ts := float64(mx), float64(sumExpSub(row, mx))
				h := heaps[i]
				for j, x := range row {
					// Most logits are below the worst kept one: skip them
					// without a call.
					if len(h) == k && x < h[0].logit {
						continue
					}
					h = pushTop(h, k, logitID{x, int32(v0 + j)})
				}
				heaps[i] = h
				if tm > maxes[i] {
					sums[i] = sums[i]*math.Exp(maxes[i]-tm) + ts
					maxes[i] = tm
				} else {
					sums[i] += ts * math.Exp(tm-maxes[i])
				}
			}
		}
		for i := range pn {
			lse := maxes[i] + math.Log(sums[i])
			best := heaps[i]
			slices.SortFunc(best, func(a, b logitID) int { return cmp.Or(cmp.Compare(b.logit, a.logit), cmp.Compare(a.id, b.id)) })
			row := out[(p0+i)*k:][:k]
			for j, x := range best {
				row[j] = TokenLogprob{ID: x.id, Logprob: float32(float64(x.logit) - lse)}
			}
		}
	})
	return out
}

// logitID is a logit and its vocabulary id.
type logitID struct {
	logit float32
	id    int32
}

// worse orders logits for the top-k: a lower logit, or an equal one of a
// higher id, is worse. NaN ranks below every number and equal to NaN, as in
// cmp.Compare, so a row with NaN logits keeps its finite ones in order and a
// row all NaN keeps the lowest ids. topk.wgsl's worse is the same rule.
func (a logitID) worse(b logitID) bool {
	return cmp.Or(cmp.Compare(a.logit, b.logit), cmp.Compare(b.id, a.id)) < 0
}

// pushTop offers x to h, a min-heap (by worse) of at most k entries, and
// returns the heap.
func pushTop(h []logitID, k int, x logitID) []logitID {
	if len(h) < k {
		h = append(h, x)
		for i := len(h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !h[i].worse(h[parent]) {
				break
			}
			h[i], h[parent] = h[parent], h[i]
			i = parent
		}
		return h
	}
	if !h[0].worse(x) {
		return h
	}
	h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].worse(h[m]) {
			m = l
		}
		if r < len(h) && h[r].worse(h[m]) {
			m = r
		}
		if m == i {
			return h
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

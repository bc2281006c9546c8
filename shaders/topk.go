package shaders

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// MaxTopLogprobs is the most top log-probabilities per target that
// topk_logits.wgsl keeps (its KMAX).
const MaxTopLogprobs = 100

// sharedTopWG is topk_logits_shared.wgsl's WG: invocations sharing one
// position's vocabulary (a power of two).
const sharedTopWG = 64

// sharedTopLog2WG is log2(sharedTopWG): the merge's reduction steps.
const sharedTopLog2WG = 6

// topBuffers are an arena's buffers for top log-probabilities: the running
// top-K of every target (topv logits, topi ids, (targets, K)), and the
// host-visible copies of them and of the target logits (for the logsumexp).
type topBuffers struct {
	k                 int // K the buffers are sized for
	topv, topi        *wgpu.Buffer
	topRead, tgtRead  *wgpu.Buffer // topv then topi; tgt
	topBytes, tgtSize uint64
}

// topBuffersFor returns a's top-K buffers for k per target, making them on
// first use or when k grows.
func (g *GPT2) topBuffersFor(a *arena, k int) (*topBuffers, error) {
	if a.top != nil && a.top.k >= k {
		return a.top, nil
	}
	tg := uint64(max(a.size.targets, 1))
	t := &topBuffers{k: k, topBytes: 4 * tg * uint64(k), tgtSize: 4 * tg}
	st := wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
	rd := wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst
	for _, b := range []struct {
		dst   **wgpu.Buffer
		label string
		size  uint64
		usage wgpu.BufferUsage
	}{
		{&t.topv, "top logits", t.topBytes, st}, {&t.topi, "top ids", t.topBytes, st},
		{&t.topRead, "top readback", 2 * t.topBytes, rd}, {&t.tgtRead, "target logit readback", t.tgtSize, rd},
	} {
		buf, err := g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: b.label, Size: max(b.size, 16), Usage: b.usage})
		if err != nil {
			return nil, fmt.Errorf("gpu: %s for %d targets x %d: %w", b.label, a.size.targets, k, err)
		}
		a.bufs = append(a.bufs, buf)
		*b.dst = buf
	}
	a.top = t
	return t, nil
}

// topSlice is how many vocabulary ids one top-K dispatch streams: all of a
// binding's, except where the adapter limits shader loops. With
// topk_logits_shared.wgsl (sharedMatmul) an invocation loops over
// ceil((K + ids) / WG) candidates of C + 1 + K iterations each, plus K for
// its list and K x (log2 WG + 2) for the merge.
func (g *GPT2) topSlice(k int) int {
	if g.loopLimit == 0 {
		return g.cfg.VocabSize
	}
	per := g.cfg.NEmbd + 1 + k
	if g.sharedMatmul {
		rounds := (loopBudget - k - k*(sharedTopLog2WG+2)) / per
		return max(rounds*sharedTopWG-k, 1)
	}
	return max((loopBudget-3*k)/per, 1)
}

// topDispatches is how many top-K dispatches encodeTopK records.
func (g *GPT2) topDispatches(ranges [][2]int, k int) int {
	n := 0
	for _, vr := range ranges {
		n += ceilDiv(vr[1]-vr[0], g.topSlice(k))
	}
	return n
}

// encodeTopK records the top-K kernel over the whole vocabulary for the
// batch's P targets (their ln_f rows in the arena's h), slice after slice:
// topk_logits_shared.wgsl, one workgroup per target, where the adapter gets
// the workgroup-memory kernels (sharedMatmul), else topk_logits.wgsl, one
// invocation per target.
func (g *GPT2) encodeTopK(r *recorder, b *batch, ranges [][2]int) {
	a, k := r.a, r.p.topK
	t := a.top
	P, C := b.P, g.cfg.NEmbd
	span := g.topSlice(k)
	kern, work := g.topK, perInvocation(P)
	if g.sharedMatmul {
		kern, work = g.topKShared, perWorkgroup(P)
	}
	init := 1
	for _, vr := range ranges {
		n := vr[1] - vr[0]
		for lo := 0; lo < n; lo += span {
			hi := min(lo+span, n)
			r.op(kern, constSet{}, topKBufs{H: Buf{Buffer: a.hP}, WTE: g.headRange(vr), TopV: Buf{Buffer: t.topv}, TopI: Buf{Buffer: t.topi}},
				topKParams{P: uint32(P), C: uint32(C), K: uint32(k), Lo: uint32(lo), Hi: uint32(hi), Base: uint32(vr[0]), Init: uint32(init)},
				work)
			init = 0
		}
	}
}

// copyTopK records the copies of the batch's top-K and target logits to
// their readback buffers (after the compute pass).
func (g *GPT2) copyTopK(enc *wgpu.CommandEncoder, a *arena, P, k int) {
	t := a.top
	n := uint64(4 * P * k)
	enc.CopyBufferToBuffer(t.topv, 0, t.topRead, 0, n)
	enc.CopyBufferToBuffer(t.topi, 0, t.topRead, t.topBytes, n)
	enc.CopyBufferToBuffer(a.targets, uint64(4*P), t.tgtRead, 0, uint64(4*P)) // the logits after the ids
}

// readTopK reads the batch's top-K back and turns it into log-probabilities,
// highest first (ties: lower id first; NaN below every number, NaNs tied,
// as the kernels rank them): logit − logsumexp, the logsumexp
// being the batch's NLL plus the target's logit, as nll_combine.wgsl formed it.
// p.nll must be read already. g.mu must be held.
func (p *Pending) readTopK() error {
	t, P, k := p.a.top, p.count, p.topK
	raw := make([]byte, 2*t.topBytes)
	if err := p.g.dev.Queue().ReadBuffer(t.topRead, 0, raw); err != nil {
		return fmt.Errorf("gpu loss: read back top logits: %w", err)
	}
	tgt := make([]byte, 4*P)
	if err := p.g.dev.Queue().ReadBuffer(t.tgtRead, 0, tgt); err != nil {
		return fmt.Errorf("gpu loss: read back target logits: %w", err)
	}
	le := binary.LittleEndian
	p.top = make([]model.TokenLogprob, P*k)
	type entry struct {
		logit float32
		id    uint32
	}
	row := make([]entry, k)
	for i := range P {
		lse := float64(p.nll[i]) + float64(math.Float32frombits(le.Uint32(tgt[4*i:])))
		for j := range row {
			o := 4 * (i*k + j)
			row[j] = entry{math.Float32frombits(le.Uint32(raw[o:])), le.Uint32(raw[int(t.topBytes)+o:])}
		}
		slices.SortFunc(row, func(a, b entry) int { return cmp.Or(cmp.Compare(b.logit, a.logit), cmp.Compare(a.id, b.id)) })
		for j, e := range row {
			if int(e.id) >= p.g.cfg.VocabSize {
				return fmt.Errorf("gpu loss: top-%d of target %d holds id %d, outside the vocabulary: the kernel's bug", k, i, e.id)
			}
			p.top[i*k+j] = model.TokenLogprob{ID: int32(e.id), Logprob: float32(float64(e.logit) - lse)}
		}
	}
	return nil
}

// TopLogprobs is, after Wait, the K highest log-probabilities of every
// target's position (SubmitOptions.TopLogprobs), K per target in the order
// of PerToken; nil before Wait and without the option.
func (p *Pending) TopLogprobs() []model.TokenLogprob {
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	return p.top
}

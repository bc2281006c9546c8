package model

import "context"

// lossProgressKey is the context key of WithLossProgress.
type lossProgressKey struct{}

// WithLossProgress returns a copy of ctx that carries fn, as
// net/http/httptrace carries its hooks: a CPU's Loss, LossPerToken or
// LossTopLogprobs called with it reports how far the batch has got, so that a
// progress display moves during a batch that takes many seconds. fn is
// called in the calling goroutine after each layer of each chunk and after
// the LM head, with total the batch's scored targets and done the targets of
// the chunks finished plus the chunk in progress's in proportion to its
// multiply-adds done (a layer's matmuls and attention, then the LM head); done
// never decreases and its last value is total. It costs one call per layer.
func WithLossProgress(ctx context.Context, fn func(done, total int)) context.Context {
	return context.WithValue(ctx, lossProgressKey{}, fn)
}

// lossMeter reports one loss call's progress to the WithLossProgress hook.
// A nil *lossMeter (no hook) does nothing.
type lossMeter struct {
	fn          func(done, total int)
	done, total int // targets of the chunks finished; of the call

	// The chunk in progress: its targets, the multiply-adds (over C) of one
	// layer and of the whole chunk.
	p           int
	layer, work float64
}

// newLossMeter returns the meter of a call under ctx that scores total
// targets, or nil when ctx carries no hook.
func newLossMeter(ctx context.Context, total int) *lossMeter {
	fn, _ := ctx.Value(lossProgressKey{}).(func(done, total int))
	if fn == nil {
		return nil
	}
	return &lossMeter{fn: fn, total: total}
}

// chunk starts a chunk of P targets and N rows, its sequences at spans, for
// a model of shape cfg. Counted in multiply-adds over C: a layer costs 12·C
// per row in its matmuls and 2·(t+1) at position t in attention (n·(n+1) for
// a sequence of n rows); the LM head V per target.
func (m *lossMeter) chunk(cfg Config, spans []span, N, P int) {
	if m == nil {
		return
	}
	attention := 0.0
	for _, s := range spans {
		attention += float64(s.n) * float64(s.n+1)
	}
	m.p = P
	m.layer = float64(blockWidth(cfg))*float64(N) + attention
	m.work = float64(cfg.NLayer)*m.layer + float64(cfg.VocabSize)*float64(P)
}

// layerDone reports that the chunk's first l layers are done.
func (m *lossMeter) layerDone(l int) {
	if m == nil || m.work <= 0 {
		return
	}
	m.fn(m.done+int(float64(m.p)*float64(l)*m.layer/m.work), m.total)
}

// chunkDone reports the chunk's targets scored.
func (m *lossMeter) chunkDone() {
	if m == nil {
		return
	}
	m.done += m.p
	m.fn(m.done, m.total)
}

// blockWidth is a block's multiply-adds per row divided by C: its matrices'
// elements over C (4C + 2·Inner for GPT-2: 12C with its 4C MLP).
func blockWidth(cfg Config) int {
	if cfg.Arch == ArchLlama {
		hs := headsOf(cfg)
		return hs.ld() + hs.qDim() + 3*cfg.Inner()
	}
	return 4*cfg.NEmbd + 2*cfg.Inner()
}

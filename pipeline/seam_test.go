package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// asyncBackend wraps fakeBackend: Submit defers the scoring to Wait, counts
// batches in flight, and refuses batches above memTokens padded tokens with
// ErrBatchTooLarge (at Submit or, with failAtWait, at Wait), as a GPU does.
type asyncBackend struct {
	fakeBackend
	memTokens   int
	failAtWait  bool
	inFlightNow int
	maxInFlight int
	refused     int
}

type asyncPending struct {
	b      *asyncBackend
	batch  Batch
	waited bool
	sums   model.LossSums
	err    error
}

func (a *asyncBackend) Submit(ctx context.Context, b Batch) (Pending, error) {
	if len(b.Seqs)*b.Width > a.memTokens && !a.failAtWait {
		a.refused++
		return nil, fmt.Errorf("no room for %d tokens: %w", len(b.Seqs)*b.Width, ErrBatchTooLarge)
	}
	a.inFlightNow++
	a.maxInFlight = max(a.maxInFlight, a.inFlightNow)
	if a.inFlightNow > max(a.inFlight, 1) {
		a.t.Errorf("%d batches in flight, Feed allows %d", a.inFlightNow, a.inFlight)
	}
	return &asyncPending{b: a, batch: b}, nil
}

func (p *asyncPending) Wait(ctx context.Context) (model.LossSums, error) {
	if !p.waited {
		p.waited = true
		p.b.inFlightNow--
		if p.b.failAtWait && len(p.batch.Seqs)*p.batch.Width > p.b.memTokens {
			p.b.refused++
			p.err = errors.Join(errors.New("device out of memory"), ErrBatchTooLarge)
		} else {
			p.sums, p.err = p.b.loss(ctx, p.batch)
		}
	}
	return p.sums, p.err
}

// TestEvaluateSeam: bucket widths pad batches, batches stay in flight up to
// Feed().InFlight, the sums are those of a synchronous run to the last bit,
// and a batch out of memory (at Submit or at Wait) halves the batches and the
// run goes on with the same targets.
func TestEvaluateSeam(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var docs [][]int32
	for range 40 {
		docs = append(docs, randomIDs(rng, 1+rng.IntN(60)))
	}
	cfg := EvalConfig{Tokens: &corpus.Tokens{Docs: docs}, Mode: ModeDocuments, Ctx: 64, EOT: 7, BatchTokens: 512}
	sync := &fakeBackend{t: t, ctx: 64, batchTokens: 512}
	want, err := Evaluate(context.Background(), sync, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		memTokens  int
		failAtWait bool
	}{{"fits", 1 << 20, false}, {"oom at submit", 100, false}, {"oom at wait", 100, true}} {
		t.Run(c.name, func(t *testing.T) {
			a := &asyncBackend{fakeBackend: fakeBackend{t: t, ctx: 64, batchTokens: 512, widths: []int{16, 32, 48, 64}, inFlight: 3},
				memTokens: c.memTokens, failAtWait: c.failAtWait}
			got, err := Evaluate(context.Background(), a, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range a.widthsSeen {
				if w%16 != 0 {
					t.Errorf("batch %d has width %d, not one of the backend's", i, w)
				}
			}
			if got.Tokens != want.Tokens || got.InputTokens != want.InputTokens {
				t.Errorf("tokens %d/%d, want %d/%d", got.Tokens, got.InputTokens, want.Tokens, want.InputTokens)
			}
			if c.memTokens > 512 {
				if got.NLLSum != want.NLLSum || a.maxInFlight != 3 {
					t.Errorf("sum %v (want %v, bit-identical), %d in flight at most (want 3)", got.NLLSum, want.NLLSum, a.maxInFlight)
				}
				return
			}
			if a.refused == 0 {
				t.Error("no batch was refused: the test does not exercise halving")
			}
			if d := got.NLLSum - want.NLLSum; d > 1e-9*want.NLLSum || d < -1e-9*want.NLLSum {
				t.Errorf("sum %v after halving, want %v", got.NLLSum, want.NLLSum)
			}
		})
	}
	// One sequence that does not fit: a clear error, not a loop.
	a := &asyncBackend{fakeBackend: fakeBackend{t: t, ctx: 64, batchTokens: 512, inFlight: 2}, memTokens: 10}
	_, err = Evaluate(context.Background(), a, cfg)
	if err == nil || !errors.Is(err, ErrBatchTooLarge) || !strings.Contains(err.Error(), "one sequence of") {
		t.Errorf("err = %v, want one sequence does not fit", err)
	}
}

// TestEvaluateMulti: --device all's backend spreads batches round-robin over
// its parts, keeps every part's batches in flight, and adds the sums in batch
// order: the result equals one backend's to the last bit.
func TestEvaluateMulti(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	cfg := EvalConfig{Tokens: &corpus.Tokens{Docs: [][]int32{randomIDs(rng, 3000)}}, Ctx: 64, BatchTokens: 256}
	want, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 256}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*asyncBackend
	var bs []Backend
	for range 3 {
		a := &asyncBackend{fakeBackend: fakeBackend{t: t, ctx: 64, batchTokens: 256, inFlight: 2, feedTokens: 256}, memTokens: 1 << 20}
		parts, bs = append(parts, a), append(bs, a)
	}
	m := &multi{parts: bs}
	if f := m.Feed(); f.InFlight != 6 || f.BatchTokens != 256 {
		t.Errorf("feed %+v, want 6 in flight and 256 tokens", f)
	}
	got, err := Evaluate(context.Background(), m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got.NLLSum != want.NLLSum || got.Tokens != want.Tokens {
		t.Errorf("all: %d tokens, sum %v; one backend %d, %v", got.Tokens, got.NLLSum, want.Tokens, want.NLLSum)
	}
	total := 0
	for i, p := range parts {
		if len(p.batches) == 0 || p.maxInFlight > 2 {
			t.Errorf("part %d: %d batches, %d in flight at most", i, len(p.batches), p.maxInFlight)
		}
		total += len(p.batches)
	}
	if n := len(parts[0].batches); n < total/3 || n > total/3+1 {
		t.Errorf("part 0 scored %d of %d batches: not round-robin", n, total)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
}

// skewedBackend is a fakeBackend whose NLLs are each off by skew, as
// another device's last bits are.
type skewedBackend struct {
	fakeBackend
	skew float64
}

func (s *skewedBackend) Submit(ctx context.Context, b Batch) (Pending, error) {
	sums, err := s.loss(ctx, b)
	if err != nil {
		return nil, err
	}
	sums.Sum.Add(s.skew * float64(sums.Count))
	return Done{Sums: sums}, nil
}

// TestMultiResume: --device all over devices whose last bits differ, resumed
// after any number of batches, gives each batch to the device an
// uninterrupted run gives it to, so the totals are the uninterrupted run's
// bit for bit (each session counted its batches from 0, so a resume after an
// odd number of batches of two devices swapped them).
func TestMultiResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfg := EvalConfig{Tokens: &corpus.Tokens{Docs: [][]int32{randomIDs(rng, 2000)}}, Ctx: 64, BatchTokens: 256}
	newMulti := func() Backend {
		var parts []Backend
		for i := range 3 {
			parts = append(parts, &skewedBackend{fakeBackend{t: t, ctx: 64, batchTokens: 256}, float64(i) / 1024})
		}
		return NewMulti(parts, nil)
	}
	whole, err := Evaluate(context.Background(), newMulti(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var states []State
	c := cfg
	c.OnBatch = func(s State) error { states = append(states, s); return nil }
	if _, err := Evaluate(context.Background(), newMulti(), c); err != nil {
		t.Fatal(err)
	}
	if len(states) < 5 {
		t.Fatalf("%d batches: make the corpus larger", len(states))
	}
	for k, st := range states[:5] {
		c := cfg
		c.Resume = &st
		got, err := Evaluate(context.Background(), newMulti(), c)
		if err != nil {
			t.Fatal(err)
		}
		if got.Sums() != whole.Sums() {
			t.Errorf("resumed after %d batches: sum %v, uninterrupted %v", k+1, got.NLLSum, whole.NLLSum)
		}
	}
}

// describedBackend is a fakeBackend named and described by info.
type describedBackend struct {
	fakeBackend
	info BackendInfo
}

func (d *describedBackend) Name() string { return d.info.Device.Name }

func (d *describedBackend) Describe() BackendInfo { return d.info }

// TestMultiDescribe: --device all describes itself by its parts: their
// precision, their adapters (joined where they differ, each in Parts) and
// kernel set, not the f32 and no adapter that a switch on *CPU and *GPU gave.
func TestMultiDescribe(t *testing.T) {
	gpu := func(adapter, prec, kernels string) Backend {
		return &describedBackend{info: BackendInfo{Precision: prec, Device: DeviceInfo{Kind: "gpu", Name: adapter + " " + prec,
			Adapter: adapter, Vendor: "v", Driver: "d 1", APIVersion: "1.3", Kernels: kernels,
			MatmulTiles: map[string]string{"default": "64x64x16/4x4"}}}}
	}
	got := (&multi{parts: []Backend{gpu("A", "f16", "hardware"), gpu("B", "f16", "hardware")}}).Describe()
	if got.Precision != "f16" || got.Threads != 0 {
		t.Errorf("precision %q, threads %d; want f16 and 0", got.Precision, got.Threads)
	}
	d := got.Device
	if d.Kind != "gpu" || d.Name != "A f16 + B f16" || d.Adapter != "A + B" || d.Vendor != "v" || d.Driver != "d 1" ||
		d.APIVersion != "1.3" || d.Kernels != "hardware" || d.MatmulTiles != nil {
		t.Errorf("device %+v", d)
	}
	if len(d.Parts) != 2 || d.Parts[0].Adapter != "A" || d.Parts[1].Adapter != "B" || d.Parts[1].MatmulTiles["default"] == "" {
		t.Errorf("parts %+v, want A's and B's descriptions", d.Parts)
	}
	if got.Device.MatrixUnits != nil {
		t.Errorf("matrix units %+v from parts that say nothing", got.Device.MatrixUnits)
	}
	withMU := func(b Backend, used bool) Backend {
		d := b.(*describedBackend)
		d.info.Device.MatrixUnits = &MatrixUnitsInfo{Mode: "auto", Used: used, Reason: fmt.Sprint(used)}
		return d
	}
	same := (&multi{parts: []Backend{withMU(gpu("A", "f16", "hardware"), true), withMU(gpu("B", "f16", "hardware"), true)}}).Describe()
	if mu := same.Device.MatrixUnits; mu == nil || !mu.Used {
		t.Errorf("parts that both used the matrix units: %+v", mu)
	}
	differ := (&multi{parts: []Backend{withMU(gpu("A", "f16", "hardware"), true), withMU(gpu("B", "f16", "hardware"), false)}}).Describe()
	if mu := differ.Device.MatrixUnits; mu != nil || differ.Device.Parts[1].MatrixUnits.Used {
		t.Errorf("parts that differ: %+v at the top, part B %+v; want none at the top, each part's own", mu, differ.Device.Parts[1].MatrixUnits)
	}
	mixed := (&multi{parts: []Backend{gpu("A", "f16", "hardware"), gpu("B", "f32", "software")}}).Describe()
	if mixed.Precision != "f16 + f32" || mixed.Device.Kernels != "hardware + software" {
		t.Errorf("parts that differ: precision %q, kernels %q; want each part's joined", mixed.Precision, mixed.Device.Kernels)
	}
}

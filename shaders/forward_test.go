package shaders

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// newPeakedGPT2 puts the peaked tiny model on the test device with f32 weights
// and returns it with the CPU path's sums of seqs.
func newPeakedGPT2(t *testing.T, d *testDev, seqs func(model.Config) []model.Sequence) (*GPT2, []model.Sequence, model.LossSums) {
	t.Helper()
	m := synth.Peaked(synth.TinyConfig(), 7)
	g, err := NewGPT2(context.Background(), d.dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ss := seqs(m.Config)
	if ss == nil {
		return g, nil, model.LossSums{}
	}
	want, err := model.NewCPU(m, 0).Loss(context.Background(), ss)
	if err != nil {
		t.Fatal(err)
	}
	return g, ss, want
}

func meanDiff(a, b model.LossSums) float64 {
	return math.Abs(a.Sum.Float64()/float64(a.Count) - b.Sum.Float64()/float64(b.Count))
}

// TestGPT2ChunkedPrefill: scoring a batch in chunks of positions, each chunk's
// attention reading the earlier ones from the KV cache of every layer, gives
// the mean NLL of a whole-window pass within 1e-5 (and of the CPU path), for
// chunks that divide the width and chunks that do not.
func TestGPT2ChunkedPrefill(t *testing.T) {
	d := newTestDev(t)
	g, seqs, want := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(21, 5, c.NPositions, c.VocabSize) })
	ctx := context.Background()
	whole, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 7, 16, 63} {
		g.SetChunk(chunk)
		got, err := g.Loss(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("chunk %d: mean NLL differs from the whole window by %.2g, from the CPU by %.2g", chunk, meanDiff(got, whole), meanDiff(got, want))
		if got.Count != whole.Count || meanDiff(got, whole) > 1e-5 || meanDiff(got, want) > 1e-5 {
			t.Errorf("chunk %d: %+v; whole window %+v, cpu %+v", chunk, got, whole, want)
		}
	}
	g.SetChunk(0)
}

// TestGPT2SharedMatmul runs the whole model with matmul_shared.wgsl and
// lmhead_loss_shared.wgsl, the workgroup-memory kernels hardware GPUs get,
// against the CPU path (1e-5).
func TestGPT2SharedMatmul(t *testing.T) {
	d := newTestDev(t)
	g, seqs, want := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(22, 4, c.NPositions, c.VocabSize) })
	g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
	got, err := g.Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != want.Count || meanDiff(got, want) > 1e-5 {
		t.Errorf("matmul_shared: %+v, cpu %+v", got, want)
	}
}

// TestGPT2InFlight: batches submitted two at a time give the sums they give
// alone, each batch costs one submission, two writes (tokens, targets) and
// one readback of its NLLs, and a third Submit while two are in flight finishes
// the oldest without losing its result.
func TestGPT2InFlight(t *testing.T) {
	d := newTestDev(t)
	g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	ctx := context.Background()
	var batches [][]model.Sequence
	var want []model.LossSums
	for i := range 5 {
		b := zipfSeqs(uint64(30+i), 1+i%3, g.cfg.NPositions, g.cfg.VocabSize)
		s, err := g.Loss(ctx, b) // alone; also grows the arenas to hold every batch
		if err != nil {
			t.Fatal(err)
		}
		batches, want = append(batches, b), append(want, s)
	}
	q := d.dev.Queue()
	before := q.Stats()
	var pend []*Pending
	for _, b := range batches {
		p, err := g.Submit(ctx, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, p)
	}
	for i, p := range pend { // the first three were finished by later Submits; all keep their results
		got, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Errorf("batch %d in flight: %+v, alone %+v", i, got, want[i])
		}
	}
	after := q.Stats()
	n := uint64(len(batches))
	if s := after.Submits - before.Submits; s != n {
		t.Errorf("%d submissions for %d batches, want one each", s, n)
	}
	targets := 0
	for _, w := range want {
		targets += w.Count
	}
	if r, b := after.Readbacks-before.Readbacks, after.ReadbackBytes-before.ReadbackBytes; r != n || b != 4*uint64(targets) {
		t.Errorf("%d readbacks of %d bytes for %d batches of %d targets, want one each of 4 bytes a target", r, b, n, targets)
	}
	if w := after.Writes - before.Writes; w != 2*n {
		t.Errorf("%d writes for %d batches, want two each", w, n)
	}
}

// TestGPT2Profile: with profiling, every kernel of the forward pass reports
// dispatches, GPU time and work, and the sums stay bit-identical.
func TestGPT2Profile(t *testing.T) {
	d := newTestDev(t)
	g, seqs, _ := newPeakedGPT2(t, d, func(c model.Config) []model.Sequence { return zipfSeqs(23, 12, c.NPositions, c.VocabSize) })
	ctx := context.Background()
	plain, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetProfiling(true); err != nil {
		t.Skip(err) // the adapter has no timestamps
	}
	p, err := g.Submit(ctx, seqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != plain {
		t.Errorf("profiled %+v, plain %+v", got, plain)
	}
	var names []string
	for _, k := range p.Profile() {
		names = append(names, k.Kernel)
		if k.Dispatches == 0 || k.Nanos == 0 || k.Bytes <= 0 {
			t.Errorf("kernel %+v: no dispatches, time or bytes", k)
		}
	}
	// Kernels by their math; the variant of each (matmul or matmul_shared, ...) depends on the adapter.
	for _, want := range []string{"embed", "layernorm", "matmul", "attention", "lmhead_loss", "nll"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("profile has %v, no %s", names, want)
		}
	}
	L, C := g.cfg.NLayer, g.cfg.NEmbd
	matmuls := 0
	for _, k := range p.Profile() {
		if strings.HasPrefix(k.Kernel, "matmul") {
			// One row per weight shape: c_attn, attn c_proj, c_fc, mlp c_proj.
			matmuls++
			var K, N int
			if _, err := fmt.Sscanf(k.Kernel[strings.Index(k.Kernel, " ")+1:], "K%d N%d", &K, &N); err != nil ||
				!slices.Contains([][2]int{{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}}, [2]int{K, N}) || k.Dispatches != L {
				t.Errorf("%s: %d dispatches, want a weight's shape and %d (%v)", k.Kernel, k.Dispatches, L, err)
			}
		}
		// The loss per target is spread over workgroups of nllCombineWG targets, then summed by one.
		if k.Kernel == "nll_combine" && k.Workgroups != uint64(ceilDiv(got.Count, nllCombineWG)) {
			t.Errorf("nll_combine: %d workgroups for %d targets, want %d", k.Workgroups, got.Count, ceilDiv(got.Count, nllCombineWG))
		}
	}
	if matmuls != 4 {
		t.Errorf("%d matmul rows in the profile %v, want one per weight shape", matmuls, names)
	}
	if got.Count <= nllCombineWG {
		t.Errorf("%d targets: too few to show the loss reduction spread over workgroups", got.Count)
	}
}

// TestGPT2OutOfMemory: a batch whose activations do not fit fails with an
// error that wraps wgpu.ErrOutOfMemory and states the sizes, and the model
// goes on scoring batches that fit, with the same sums as before.
func TestGPT2OutOfMemory(t *testing.T) {
	d := newTestDev(t)
	g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	ctx := context.Background()
	small := zipfSeqs(40, 1, g.cfg.NPositions, g.cfg.VocabSize)
	want, err := g.Loss(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	big := zipfSeqs(41, 16, g.cfg.NPositions, g.cfg.VocabSize)
	g.arenaLimit = g.arenaBytes(g.arenas[0].size) // room for what the small batch took
	_, err = g.Loss(ctx, big)
	if !errors.Is(err, wgpu.ErrOutOfMemory) || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("big batch: err = %v, want out of memory with the sizes", err)
	}
	got, err := g.Loss(ctx, small)
	if err != nil || got != want {
		t.Errorf("small batch after the failure: %+v, %v; before %+v", got, err, want)
	}
}

// TestGPT2WideChannels: GPT-2's real width (C = 768) on the test device
// matches the CPU path (1e-5, f32 weights). On lavapipe this needs the
// vocabulary tiles fitLoopLimit chooses: with 256 ids per tile lm_head's loops
// pass Mesa's per-invocation limit and the NLL comes out wrong.
func TestGPT2WideChannels(t *testing.T) {
	d := newTestDev(t)
	cfg := model.Config{NLayer: 1, NHead: 12, NEmbd: 768, NPositions: 24, VocabSize: 700, LayerNormEps: 1e-5}
	m := synth.Peaked(cfg, 5)
	seqs := zipfSeqs(50, 3, cfg.NPositions, cfg.VocabSize)
	ctx := context.Background()
	want, err := model.NewCPU(m, 0).Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGPT2(ctx, d.dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	got, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("VT %d: mean NLL gpu %.7f, cpu %.7f", g.vt, got.Sum.Float64()/float64(got.Count), want.Sum.Float64()/float64(want.Count))
	if got.Count != want.Count || meanDiff(got, want) > 1e-5 {
		t.Errorf("C=768: %+v, cpu %+v", got, want)
	}
}

// TestDeviceMemory124M: with the hardware kernels and f16 weights, GPT-2 124M
// at 8 windows of 1024 tokens plans under 1.5 GB of device memory: the
// weights, and two arenas (two batches in flight) of activations, one layer's
// KV cache, the LM head's partials and the loss buffers.
func TestDeviceMemory124M(t *testing.T) {
	d := newTestDev(t)
	cfg := model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}
	g := &GPT2{dev: d.dev, cfg: cfg, f16: true, sharedMatmul: true, vt: sharedVocabTile}
	var weights int64
	for _, s := range cfg.Tensors() {
		weights += int64(2 * s.NumElements())
	}
	P := 8 * 1023
	arena := g.arenaBytes(arenaSize{rows: 8 * 1024, cacheTok: 8 * 1024, cacheLayers: 1, targets: P, tokens: 8 * 1024})
	total := weights + arenaCount*arena
	t.Logf("124M, f16, 8 x 1024 tokens: weights %.0f MB, %d arenas of %.0f MB (%d LM-head partials per position): %.2f GB",
		float64(weights)/1e6, arenaCount, float64(arena)/1e6, g.lmParts(), float64(total)/1e9)
	if total >= 1.5e9 {
		t.Errorf("%.2f GB planned, want under 1.5 GB", float64(total)/1e9)
	}
}

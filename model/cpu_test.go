package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
)

// testConfigs are tiny shapes chosen to hit the kernels' edges: channels and
// head sizes that are not multiples of 4, vocabularies smaller than, equal to
// and larger than one vocab tile, sequences longer than one attention block.
var testConfigs = []struct {
	name string
	cfg  Config
}{
	{"c16h2v50", Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 40, VocabSize: 50, LayerNormEps: 1e-5}},
	{"c20h4v300", Config{NLayer: 2, NHead: 4, NEmbd: 20, NPositions: 70, VocabSize: 300, LayerNormEps: 1e-5}},
	{"c24h3v128", Config{NLayer: 3, NHead: 3, NEmbd: 24, NPositions: 33, VocabSize: 128, LayerNormEps: 1e-5}},
	// GPT-2's n_inner and scale_attn_by_inverse_layer_idx (the reference
	// divides the scores by l+1 its own way, after √hd).
	{"c24h3v128i40scaled", Config{NLayer: 3, NHead: 3, NEmbd: 24, NPositions: 33, VocabSize: 128, LayerNormEps: 1e-5,
		NInner: 40, LayerScaledAttn: true}},
}

// randomSeqs returns n sequences of random lengths in [1, NPositions] with random
// First in [1, len] and random tokens.
func randomSeqs(cfg Config, n int, seed uint64) []Sequence {
	r := rand.New(rand.NewPCG(seed, 1))
	seqs := make([]Sequence, n)
	for i := range seqs {
		L := 1 + r.IntN(cfg.NPositions)
		toks := make([]int32, L)
		for t := range toks {
			toks[t] = int32(r.IntN(cfg.VocabSize))
		}
		seqs[i] = Sequence{Tokens: toks, First: 1 + r.IntN(L)}
	}
	seqs[0].Tokens = seqs[0].Tokens[:0]
	for range cfg.NPositions { // one full-length sequence scored from the start
		seqs[0].Tokens = append(seqs[0].Tokens, int32(r.IntN(cfg.VocabSize)))
	}
	seqs[0].First = 1
	return seqs
}

// refSums is the float64 reference's LossSums of seqs.
func refSums(m *Model, seqs []Sequence) LossSums {
	var s LossSums
	for _, q := range seqs {
		if len(q.Tokens) < 2 {
			continue
		}
		for i, v := range refNLL(m, q.Tokens) {
			if i+1 >= q.First {
				s.AddNLL(v)
			}
		}
	}
	return s
}

// checkClose fails unless got matches want: same count, sums within a relative
// 2e-5 (float32 forward against a float64 reference; the errors seen are
// 1e-7 or less, and a wrong op shifts the sums by far more than 2e-5).
func checkClose(t *testing.T, what string, got, want LossSums) {
	t.Helper()
	if got.Count != want.Count {
		t.Fatalf("%s: count %d, want %d", what, got.Count, want.Count)
	}
	const rel = 2e-5
	gs, ws := got.Sum.Float64(), want.Sum.Float64()
	if d := math.Abs(gs - ws); d > rel*math.Max(1, math.Abs(ws)) {
		t.Errorf("%s: sum %.9g, want %.9g (diff %.3g)", what, gs, ws, d)
	}
	gq, wq := got.SumSq.Float64(), want.SumSq.Float64()
	if d := math.Abs(gq - wq); d > 2*rel*math.Max(1, math.Abs(wq)) {
		t.Errorf("%s: sumsq %.9g, want %.9g (diff %.3g)", what, gq, wq, d)
	}
}

func TestCPULossMatchesReference(t *testing.T) {
	for i, tc := range testConfigs {
		for _, untied := range []bool{false, true} {
			name := tc.name + "/tied"
			if untied {
				name = tc.name + "/untied"
			}
			t.Run(name, func(t *testing.T) {
				m := randomModel(tc.cfg, uint64(10+i), untied)
				cpu := NewCPU(m, 2)
				seqs := randomSeqs(tc.cfg, 6, uint64(20+i))
				for j, s := range seqs {
					got, err := cpu.Loss(context.Background(), []Sequence{s})
					if err != nil {
						t.Fatal(err)
					}
					checkClose(t, "sequence", got, refSums(m, []Sequence{s}))
					if j == 0 && got.Sum.Float64()/float64(got.Count) < 1 {
						t.Fatalf("mean NLL %.3f: the random model is too predictable to test anything", got.Sum.Float64()/float64(got.Count))
					}
				}
				got, err := cpu.Loss(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				checkClose(t, "batch", got, refSums(m, seqs))
			})
		}
	}
}

// Every kernel set this build and CPU can run (see kernelSet) gives the reference's
// loss, the same for 1 and 3 threads.
func TestCPULossKernelSets(t *testing.T) {
	cfg := testConfigs[1].cfg
	m := randomModel(cfg, 9, false)
	seqs := randomSeqs(cfg, 4, 10)
	want := refSums(m, seqs)
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			one, err := NewCPU(m, 1).Loss(context.Background(), seqs)
			if err != nil {
				t.Fatal(err)
			}
			three, err := NewCPU(m, 3).Loss(context.Background(), seqs)
			if err != nil {
				t.Fatal(err)
			}
			if one != three {
				t.Errorf("1 thread: %+v, 3 threads: %+v", one, three)
			}
			checkClose(t, "batch", one, want)
		})
	}
}

// A nil LMHead means tied: same result as LMHead = WTE, and different from an
// untied head (so the test above really uses the head it is given).
func TestCPULossNilLMHeadIsTied(t *testing.T) {
	cfg := testConfigs[0].cfg
	m := randomModel(cfg, 3, false)
	seqs := randomSeqs(cfg, 3, 4)
	want, err := NewCPU(m, 1).Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	m2 := *m
	m2.Weights.LMHead = nil
	got, err := NewCPU(&m2, 1).Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("nil LMHead: %+v, tied: %+v", got, want)
	}
	m3 := *m
	m3.Weights.LMHead = randomModel(cfg, 5, true).Weights.LMHead
	other, err := NewCPU(&m3, 1).Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	if other.Sum == want.Sum {
		t.Errorf("a different LM head gave the same loss %v", other.Sum)
	}
}

// Thread count and chunking change how work is split, never the result.
func TestCPULossDeterministic(t *testing.T) {
	cfg := testConfigs[1].cfg
	m := randomModel(cfg, 7, false)
	seqs := randomSeqs(cfg, 8, 8)
	var results []LossSums
	for _, threads := range []int{1, 3} {
		for _, maxRows := range []int{1, 100, 10000} {
			cpu := NewCPU(m, threads)
			cpu.maxRows = maxRows
			got, err := cpu.Loss(context.Background(), seqs)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, got)
		}
	}
	for i, r := range results[1:] {
		if r != results[0] {
			t.Errorf("run %d: %+v, run 0: %+v", i+1, r, results[0])
		}
	}
	checkClose(t, "batch", results[0], refSums(m, seqs))
}

// Sequences whose First is their length score nothing; one-token sequences too.
func TestCPULossNoTargets(t *testing.T) {
	cfg := testConfigs[0].cfg
	cpu := NewCPU(randomModel(cfg, 1, false), 2)
	got, err := cpu.Loss(context.Background(), []Sequence{
		{Tokens: []int32{1}, First: 1},
		{Tokens: []int32{1, 2, 3}, First: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != (LossSums{}) {
		t.Errorf("got %+v, want zero sums", got)
	}
}

func TestCPULossRejectsBadInput(t *testing.T) {
	cfg := testConfigs[0].cfg
	cpu := NewCPU(randomModel(cfg, 1, false), 2)
	long := make([]int32, cfg.NPositions+1)
	cases := []struct {
		name string
		seqs []Sequence
		want string
	}{
		{"empty batch", nil, "empty batch"},
		{"empty sequence", []Sequence{{Tokens: nil, First: 1}}, "sequence 0 is empty"},
		{"too long", []Sequence{{Tokens: long, First: 1}}, "41 tokens, the model takes at most 40"},
		{"first 0", []Sequence{{Tokens: []int32{1, 2}, First: 0}}, "first target 0"},
		{"first past end", []Sequence{{Tokens: []int32{1, 2}, First: 3}}, "first target 3"},
		{"negative id", []Sequence{{Tokens: []int32{1, 2}, First: 1}, {Tokens: []int32{1, -1}, First: 1}}, "sequence 1: token -1 at position 1"},
		{"id = vocab", []Sequence{{Tokens: []int32{50, 2}, First: 1}}, "token 50 at position 0 outside the vocabulary [0, 50)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cpu.Loss(context.Background(), tc.seqs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestCPURejectsBadModel(t *testing.T) {
	cfg := testConfigs[0].cfg
	m := randomModel(cfg, 1, false)
	m.Weights.Layers[1].FCB = m.Weights.Layers[1].FCB[:10]
	_, err := NewCPU(m, 1).Loss(context.Background(), randomSeqs(cfg, 1, 1))
	if err == nil || !strings.Contains(err.Error(), "h.1.mlp.c_fc.bias has 10 values, want 64") {
		t.Errorf("error %v, want one naming h.1.mlp.c_fc.bias", err)
	}
	m = randomModel(cfg, 1, false)
	m.Config.NHead = 3
	if _, err := NewCPU(m, 1).Loss(context.Background(), randomSeqs(cfg, 1, 1)); err == nil {
		t.Error("n_embd 16 with 3 heads accepted")
	}
}

// cancelAfter is a context whose Err turns to Canceled after n calls, so the
// test can cancel in the middle of a forward without timing.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCPULossCancel(t *testing.T) {
	cfg := testConfigs[2].cfg
	cpu := NewCPU(randomModel(cfg, 1, false), 2)
	seqs := randomSeqs(cfg, 2, 2)
	for _, n := range []int64{0, 1, 2} { // before the first, second, third layer
		ctx := &cancelAfter{Context: context.Background()}
		ctx.n.Store(n)
		if _, err := cpu.Loss(ctx, seqs); !errors.Is(err, context.Canceled) {
			t.Errorf("cancel after %d checks: error %v, want context.Canceled", n, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cpu.Loss(ctx, seqs); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v", err)
	}
}

func TestCPUName(t *testing.T) {
	if got := NewCPU(randomModel(testConfigs[0].cfg, 1, false), 1).Name(); got != "cpu" {
		t.Errorf("Name() = %q", got)
	}
}

func TestCPUNilModel(t *testing.T) {
	if _, err := NewCPU(nil, 1).Loss(context.Background(), []Sequence{{Tokens: []int32{1, 2}, First: 1}}); err == nil {
		t.Error("nil model accepted")
	}
}

// A target's NLL does not depend on the other sequences of its batch, bit
// for bit, with an MLP width (4·33 = 132) that is not a multiple of the
// vector lanes, for both GELUs and every kernel set: each sequence alone
// gives the bits it gets in a batch where it starts at a row that is not a
// multiple of the row ops' blocks and where its last row is not the
// chunk's. (The GELU ran over blocks of 16 rows as one slice, so a row's
// last elements went to the vector kernel or to the scalar tail, whose bits
// differ, by where the row sat in its chunk.)
func TestCPULossBatchInvariant(t *testing.T) {
	for _, exact := range []bool{false, true} {
		cfg := Config{NLayer: 1, NHead: 3, NEmbd: 33, NPositions: 40, VocabSize: 60, LayerNormEps: 1e-5, ExactGELU: exact}
		m := randomModel(cfg, 3, false)
		seqs := append(randomSeqs(cfg, 5, 4), randomSeqs(cfg, 5, 5)...)
		for _, set := range kernelSets() {
			t.Run(fmt.Sprintf("exact=%v/%s", exact, set), func(t *testing.T) {
				defer useKernels(set)()
				cpu := NewCPU(m, 2)
				_, all, err := cpu.LossPerToken(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				off := 0
				for i, s := range seqs {
					_, alone, err := cpu.LossPerToken(context.Background(), []Sequence{s})
					if err != nil {
						t.Fatal(err)
					}
					for j := range alone {
						if math.Float32bits(alone[j]) != math.Float32bits(all[off+j]) {
							t.Fatalf("sequence %d, target %d: %v alone, %v in the batch", i, j, alone[j], all[off+j])
						}
					}
					off += len(alone)
				}
			})
		}
	}
}

package model

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// refSampler is the reference sampler: the straightforward form of what
// Sampler computes (it was Sampler until the selection was made partial).
// With top-k or top-p it sorts every id by logit (the lower id first on a
// tie) and weighs the candidates by math.Exp in float64; without them it
// walks all ids in id order.
type refSampler struct {
	opt SampleOptions
	rng *rand.Rand
}

func newRefSampler(opt SampleOptions) *refSampler {
	return &refSampler{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x5851f42d4c957f2d))}
}

// refRank is every id, sorted by logit (cmp.Compare's order, descending), the
// lower id first on a tie.
func refRank(logits []float32) []int32 {
	order := make([]int32, len(logits))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(logits[b], logits[a]), cmp.Compare(a, b))
	})
	return order
}

// pick draws an id from logits; rank is refRank(logits), or nil to have pick
// rank them when it needs to.
func (s *refSampler) pick(logits []float32, rank []int32) int32 {
	o := s.opt
	if o.Temperature == 0 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return int32(best)
	}
	V := len(logits)
	order := make([]int32, V)
	for i := range order {
		order[i] = int32(i)
	}
	n := V
	if (o.TopK > 0 && o.TopK < V) || (o.TopP > 0 && o.TopP < 1) {
		if rank == nil {
			rank = refRank(logits)
		}
		copy(order, rank)
		if o.TopK > 0 {
			n = min(n, o.TopK)
		}
	}
	mx := math.Inf(-1)
	for _, id := range order[:n] {
		mx = max(mx, float64(logits[id]))
	}
	prob := make([]float64, n)
	var total float64
	for i, id := range order[:n] {
		prob[i] = math.Exp((float64(logits[id]) - mx) / o.Temperature)
		total += prob[i]
	}
	if o.TopP > 0 && o.TopP < 1 {
		var cum float64
		for i := range n {
			cum += prob[i]
			if cum >= o.TopP*total {
				n, total = i+1, cum
				break
			}
		}
	}
	u := s.rng.Float64() * total
	for i := range n {
		u -= prob[i]
		if u < 0 {
			return order[i]
		}
	}
	return order[n-1]
}

// refLogSoftmax is ln softmax(logits)[id] by math.Exp.
func refLogSoftmax(logits []float32, id int32) float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = max(mx, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - mx)
	}
	return float64(logits[id]) - mx - math.Log(sum)
}

// randomLogits returns V logits of one of several shapes: normal of a few
// spreads, peaked, with many ties, rounded to f16's precision, with masked
// (-Inf) ids.
func randomLogits(r *rand.Rand, V, shape int) []float32 {
	l := make([]float32, V)
	for i := range l {
		switch shape {
		case 0:
			l[i] = float32(r.NormFloat64() * 0.3) // flat: big nuclei
		case 1:
			l[i] = float32(r.NormFloat64() * 3) // about GPT-2's spread
		case 2:
			l[i] = float32(r.NormFloat64()*2 - 40)
			if r.IntN(50) == 0 {
				l[i] += 12 // a few stand out
			}
		case 3:
			l[i] = float32(math.Round(r.NormFloat64()*4) / 2) // many ties
		case 4:
			f := r.NormFloat64() * 5
			e := math.Ilogb(f)
			l[i] = float32(math.Ldexp(math.Round(math.Ldexp(f, 10-e)), e-10)) // 11 significant bits, as f16
		case 5:
			l[i] = float32(r.NormFloat64() * 2)
			if r.IntN(3) == 0 {
				l[i] = float32(math.Inf(-1))
			}
		}
	}
	if shape == 5 {
		l[r.IntN(V)] = 1 // at least one id unmasked
	}
	return l
}

// TestSamplerMatchesReference: over random logit vectors of several shapes
// and sizes, every option combination and several seeds, Sampler picks the
// reference's ids, draw after draw, and its logprob is the reference's to
// within 1e-12.
func TestSamplerMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draws := 0
	for _, V := range []int{1, 2, 7, 100, 1000, 50257} {
		temps := []float64{0, 0.25, 0.7, 1, 1.5}
		ks := []int{0, 1, 3, 40, V / 4, V/4 + 1, V / 2, V - 1, V, V + 5}
		tops := []float64{0, 1e-9, 0.3, 0.5, 0.9, 0.999, 1}
		vectors := 3
		if V == 50257 { // the reference sorts 50257 ids a draw: a few cases
			temps, ks, tops, vectors = []float64{0.5, 1.5}, []int{0, 40, V / 2}, []float64{0, 0.5, 0.9, 0.999}, 1
		}
		for shape := range 6 {
			logits, ranks := make([][]float32, vectors), make([][]int32, vectors)
			for i := range logits {
				logits[i] = randomLogits(r, V, shape)
				ranks[i] = refRank(logits[i])
			}
			for _, temp := range temps {
				for _, k := range ks {
					for _, p := range tops {
						opt := SampleOptions{Temperature: temp, TopK: k, TopP: p, Seed: r.Uint64()}
						s, err := NewSampler(opt)
						if err != nil {
							t.Fatal(err)
						}
						ref := newRefSampler(opt)
						for d := range 2 * vectors {
							l := logits[d%vectors]
							id, lp := s.Sample(l)
							if want := ref.pick(l, ranks[d%vectors]); id != want {
								t.Fatalf("V %d shape %d %+v draw %d: id %d, reference %d", V, shape, opt, d, id, want)
							}
							if want := refLogSoftmax(l, id); math.Abs(lp-want) > 1e-12 {
								t.Fatalf("V %d shape %d %+v: logprob %.17g, reference %.17g", V, shape, opt, lp, want)
							}
							draws++
						}
					}
				}
			}
		}
	}
	t.Logf("%d draws, all the reference's", draws)
}

// TestSamplerPaths: each way through Sample is taken (the heap, the sort of
// everything for a large K, the nucleus and its fall-back, all ids), and the
// nucleus ranks far fewer ids than the vocabulary.
func TestSamplerPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	l := randomLogits(r, 50257, 1)
	rank := refRank(l)
	for _, c := range []struct {
		opt      SampleOptions
		maxRanks int // the most keys ranked
	}{
		{SampleOptions{Temperature: 1, TopK: 50}, 50},
		{SampleOptions{Temperature: 0.8, TopK: 50, TopP: 0.9}, 50},
		{SampleOptions{Temperature: 1, TopK: 30000}, 50257},
		{SampleOptions{Temperature: 1, TopP: 0.9}, 5000},
		{SampleOptions{Temperature: 0.7, TopP: 0.5}, 5000},
		{SampleOptions{Temperature: 1}, 0},
	} {
		s, _ := NewSampler(c.opt)
		ref := newRefSampler(c.opt)
		for range 5 {
			if id, want := func() int32 { id, _ := s.Sample(l); return id }(), ref.pick(l, rank); id != want {
				t.Fatalf("%+v: %d, reference %d", c.opt, id, want)
			}
		}
		t.Logf("%+v: %d ids ranked", c.opt, len(s.keys))
		if len(s.keys) > c.maxRanks {
			t.Errorf("%+v: %d ids ranked, want at most %d", c.opt, len(s.keys), c.maxRanks)
		}
	}
	// NaN logits go to the fall-back (everything ranked) and pick some id.
	bad := slices.Clone(l)
	bad[7] = float32(math.NaN())
	for _, o := range []SampleOptions{{}, {Temperature: 1}, {Temperature: 1, TopK: 5}, {Temperature: 1, TopP: 0.9}} {
		s, _ := NewSampler(o)
		if id, _ := s.Sample(bad); id < 0 || int(id) >= len(bad) {
			t.Errorf("%+v with a NaN logit: id %d", o, id)
		}
	}
}

// TestSamplerRankKey: ascending rank keys order ids as the reference's comparison
// does (descending logits, cmp.Compare's order: -0 = +0, NaN last; the lower
// id first on a tie).
func TestSamplerRankKey(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, inf, -inf, nan, 1e-45, -1e-45, 3.5, -3.5, math.MaxFloat32, -math.MaxFloat32}
	for _, a := range vals {
		for _, b := range vals {
			for _, ids := range [][2]int32{{1, 2}, {2, 1}} {
				want := cmp.Or(cmp.Compare(b, a), cmp.Compare(ids[0], ids[1]))
				got := cmp.Compare(rankKey(a, ids[0]), rankKey(b, ids[1]))
				if got != want {
					t.Errorf("(%g, %d) vs (%g, %d): keys compare %d, the reference %d", a, ids[0], b, ids[1], got, want)
				}
			}
		}
	}
	if keyID(rankKey(-2, 50256)) != 50256 {
		t.Error("keyID does not return the id")
	}
}

// TestSamplerExpm: expm is within 1 ulp of e^x rounded from 300 bits (as
// math.Exp is) and within 2 of math.Exp over [-700, 0], exactly 1 at 0, and 0
// below -700 and for -Inf.
func TestSamplerExpm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sample := func(i int) float64 {
		return -r.Float64() * []float64{700, 40, 1, 1e-3}[i%4]
	}
	// ulps is |a - b| in units of the last place of b.
	ulps := func(a, b float64) float64 { return math.Abs(a-b) / (math.Nextafter(b, math.Inf(1)) - b) }
	worst := 0.0
	for i := range 3000 {
		x := sample(i)
		worst = max(worst, ulps(expm(x), bigExp(x)))
	}
	if worst > 1 {
		t.Errorf("expm is %.2f ulp from e^x at worst, want at most 1", worst)
	}
	worst = 0
	for i := range 1_000_000 {
		x := sample(i)
		worst = max(worst, ulps(expm(x), math.Exp(x)))
	}
	if worst > 2 {
		t.Errorf("expm is %.2f ulp from math.Exp at worst, want at most 2", worst)
	}
	if expm(0) != 1 || expm(math.Copysign(0, -1)) != 1 {
		t.Error("expm(0) is not 1")
	}
	for _, x := range []float64{-700.5, -1e300, math.Inf(-1)} {
		if expm(x) != 0 {
			t.Errorf("expm(%g) = %g, want 0", x, expm(x))
		}
	}
}

// bigExp is e^x rounded from 300 bits: the Taylor series at x/2^20, squared
// 20 times.
func bigExp(x float64) float64 {
	const prec, halvings = 300, 20
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	y.SetMantExp(y, -halvings)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n < 40; n++ { // |y| < 1e-3: the 40th term is far below 2^-300
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	f, _ := sum.Float64()
	return f
}

// TestSampleAllocs: once its buffers have grown, Sample allocates nothing.
func TestSampleAllocs(t *testing.T) {
	l := randomLogits(rand.New(rand.NewPCG(7, 8)), 50257, 1)
	for _, o := range benchOptions {
		s, _ := NewSampler(o.opt)
		s.Sample(l)
		if n := testing.AllocsPerRun(5, func() { s.Sample(l) }); n != 0 {
			t.Errorf("%s: %v allocations per Sample", o.name, n)
		}
	}
}

var benchOptions = []struct {
	name string
	opt  SampleOptions
}{
	{"greedy", SampleOptions{}},
	{"temperature", SampleOptions{Temperature: 0.8}},
	{"top-k=50", SampleOptions{Temperature: 0.8, TopK: 50}},
	{"top-p=0.9", SampleOptions{Temperature: 0.8, TopP: 0.9}},
	{"top-k=50,top-p=0.95", SampleOptions{Temperature: 0.8, TopK: 50, TopP: 0.95}},
}

// BenchmarkSample times one Sample (the token and its logprob) on a
// vocabulary of 50257 random logits (normal, standard deviation 3, about
// GPT-2's spread), per option set; reference/ times the reference sampler
// (the former Sampler: everything sorted) with LogSoftmax by math.Exp.
//
//	go test ./model -run '^$' -bench 'Sample$' -benchtime 200x
func BenchmarkSample(b *testing.B) {
	l := randomLogits(rand.New(rand.NewPCG(9, 10)), 50257, 1)
	for _, o := range benchOptions {
		b.Run(o.name, func(b *testing.B) {
			s, _ := NewSampler(o.opt)
			for b.Loop() {
				s.Sample(l)
			}
		})
	}
	for _, o := range benchOptions {
		b.Run(fmt.Sprintf("reference/%s", o.name), func(b *testing.B) {
			s := newRefSampler(o.opt)
			for b.Loop() {
				refLogSoftmax(l, s.pick(l, nil))
			}
		})
	}
}

// TestSamplerTinyTemperature: a temperature so small that 1/T overflows
// (subnormal: below about 5.6e-309) samples as its limit, greedy decoding,
// the most likely token whatever top-k and top-p say; it had all the weights
// NaN and drew the last id.
func TestSamplerTinyTemperature(t *testing.T) {
	logits := []float32{1, 3, 2, 0.5}
	for _, T := range []float64{1e-300, 1e-310, 5e-324} {
		for _, o := range []SampleOptions{{Temperature: T}, {Temperature: T, TopK: 2}, {Temperature: T, TopP: 0.5}, {Temperature: T, TopK: 3, TopP: 0.9}} {
			s, err := NewSampler(o)
			if err != nil {
				t.Fatal(err)
			}
			for range 50 {
				if id, lp := s.Sample(logits); id != 1 || lp != LogSoftmax(logits, 1) {
					t.Fatalf("%+v: token %d (logprob %g), want 1, the most likely", o, id, lp)
				}
			}
		}
	}
}

package exactsum

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// values draws float64s over the whole range: NLL-like f32 values, their
// squares, subnormals, huge values, negatives and exact cancellations.
func values(r *rand.Rand, n int) []float64 {
	xs := make([]float64, 0, n)
	for len(xs) < n {
		var x float64
		switch r.IntN(6) {
		case 0:
			x = float64(float32(r.Float64() * 12))
		case 1:
			v := float64(float32(r.Float64() * 12))
			x = v * v
		case 2:
			x = math.Float64frombits(r.Uint64N(1 << 52)) // subnormal
		case 3:
			x = math.Ldexp(r.Float64()+1, r.IntN(2000)-1000)
		case 4:
			x = -float64(float32(r.Float64() * 1e-6))
		default:
			x = math.Ldexp(1, r.IntN(60)-30)
			xs = append(xs, -x) // cancels exactly
		}
		if r.IntN(2) == 0 {
			x = -x
		}
		xs = append(xs, x)
	}
	return xs
}

// exact is the reference: the rational sum, rounded once.
func exact(xs []float64) float64 {
	var sum big.Rat
	for _, x := range xs {
		sum.Add(&sum, new(big.Rat).SetFloat64(x))
	}
	f, _ := sum.Float64()
	return f
}

func TestSumMatchesRationalReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		xs := values(r, 1+r.IntN(300))
		var s Sum
		for _, x := range xs {
			s.Add(x)
		}
		want := exact(xs)
		if got := s.Float64(); math.Float64bits(got) != math.Float64bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("trial %d: sum %v, the rational sum rounds to %v", trial, got, want)
		}
		// Any order, and any split into partial sums, gives the same bits.
		r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		var a, b Sum
		cut := r.IntN(len(xs) + 1)
		for _, x := range xs[:cut] {
			a.Add(x)
		}
		for _, x := range xs[cut:] {
			b.Add(x)
		}
		a.AddSum(b)
		if a != s {
			t.Fatalf("trial %d: a shuffled, split sum differs: %v vs %v", trial, a, s)
		}
		var back Sum
		text, _ := s.MarshalText()
		if err := back.UnmarshalText(text); err != nil || back != s {
			t.Fatalf("trial %d: %s read back as %v (%v)", trial, text, back, err)
		}
	}
}

func TestSumFloat64DiffersFromNaiveSum(t *testing.T) {
	// 1 + 2^-60 - 1: float64 addition loses the small term, the exact sum
	// keeps it.
	var s Sum
	for _, x := range []float64{1, math.Ldexp(1, -60), -1} {
		s.Add(x)
	}
	if got := s.Float64(); got != math.Ldexp(1, -60) {
		t.Fatalf("1 + 2^-60 - 1 = %v, want 2^-60", got)
	}
	if got := s.String(); got != "0x1p-60" {
		t.Fatalf("text %q, want 0x1p-60", got)
	}
}

func TestSumExtremes(t *testing.T) {
	var s Sum
	s.Add(math.MaxFloat64)
	s.Add(math.MaxFloat64)
	if got := s.Float64(); !math.IsInf(got, 1) {
		t.Fatalf("2*MaxFloat64 = %v, want +Inf (beyond float64's range)", got)
	}
	s.Add(-math.MaxFloat64)
	if got := s.Float64(); got != math.MaxFloat64 {
		t.Fatalf("back to %v, want MaxFloat64", got)
	}
	var tiny Sum
	tiny.Add(math.SmallestNonzeroFloat64)
	tiny.Add(-2 * math.SmallestNonzeroFloat64)
	if got := tiny.Float64(); got != -math.SmallestNonzeroFloat64 {
		t.Fatalf("subnormals: %v", got)
	}
	var bad Sum
	bad.Add(1)
	bad.Add(math.Inf(1))
	bad.Add(math.Inf(-1))
	if !math.IsNaN(bad.Float64()) || bad.IsFinite() || bad.String() != "NaN" {
		t.Fatalf("a sum with infinities: %v %v", bad.Float64(), bad.String())
	}
	var zero Sum
	if zero.String() != "0x0p+0" || zero.Float64() != 0 {
		t.Fatalf("zero: %q", zero.String())
	}
}

func TestUnmarshalTextRefuses(t *testing.T) {
	for _, text := range []string{
		"", "0x", "1.5", "0x1", "0x1p", "0xgp0", "0x1p-1075", "0x1p+3000", "-0x-1p0", "0x+1p0",
		"0x" + strings.Repeat("f", 600) + "p0", strings.Repeat("0", 1000), "nan", "Inf",
	} {
		var s Sum
		if err := s.UnmarshalText([]byte(text)); err == nil {
			t.Errorf("%q accepted as %v", text, s)
		}
	}
	var s Sum
	if err := s.UnmarshalText([]byte("-0x3p-1")); err != nil || s.Float64() != -1.5 {
		t.Fatalf("-0x3p-1: %v %v", s.Float64(), err)
	}
}

func FuzzUnmarshalText(f *testing.F) {
	for _, seed := range []string{"0x0p+0", "0x3p-1", "-0x1p-1074", "NaN", "0x1fffffffffffffp+971", "0xp0", "0x1p+2000"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var s Sum
		if err := s.UnmarshalText([]byte(text)); err != nil {
			return
		}
		// What is accepted writes back to text that reads as the same sum.
		out, _ := s.MarshalText()
		var back Sum
		if err := back.UnmarshalText(out); err != nil || back != s {
			t.Fatalf("%q -> %s -> %v (%v)", text, out, back, err)
		}
	})
}

func BenchmarkAdd(b *testing.B) {
	xs := values(rand.New(rand.NewPCG(3, 4)), 4096)
	var s Sum
	for i := 0; b.Loop(); i++ {
		s.Add(xs[i%len(xs)])
	}
}

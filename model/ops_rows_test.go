package model

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// rowLengths are the row lengths the row-kernel tests run: below, at and
// around multiples of 8 and 16 lanes, and the models' widths.
var rowLengths = []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 63, 64, 65, 100, 127, 128, 129, 768, 896, 1000}

// rowClasses fill a row with values of one kind: ordinary, huge, tiny,
// subnormal, zeros of both signs, and all of them mixed, with a mean far
// from zero (so the variance cancels).
var rowClasses = []struct {
	name string
	gen  func(r *rand.Rand) float32
}{
	{"normal", func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }},
	{"huge", func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 1e30) }},
	{"tiny", func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 1e-30) }},
	{"subnormal", func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 1e-41) }},
	{"zeros", func(r *rand.Rand) float32 { return float32(math.Copysign(0, r.NormFloat64())) }},
	{"offset", func(r *rand.Rand) float32 { return float32(1000 + r.NormFloat64()*1e-3) }},
	{"mixed", func(r *rand.Rand) float32 {
		switch r.IntN(6) {
		case 0:
			return float32(r.NormFloat64() * 1e30)
		case 1:
			return float32(r.NormFloat64() * 1e-41)
		case 2:
			return 0
		}
		return float32(r.NormFloat64() * math.Ldexp(1, r.IntN(41)-20))
	}},
}

func rowOf(r *rand.Rand, n int, gen func(*rand.Rand) float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = gen(r)
	}
	return x
}

// firstDiff is the first index where a and b differ in their bits, or -1.
func firstDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// forSets runs f with every kernel set in turn and requires each set's
// outputs (what f returns, as float32 bits) to be the portable set's.
func forSets(t *testing.T, what string, f func() []float32) {
	t.Helper()
	var want []float32
	for _, set := range kernelSets() {
		got := func() []float32 {
			defer useKernels(set)()
			return f()
		}()
		if set == kernelsGeneric {
			want = got
			continue
		}
		if i := firstDiff(got, want); i >= 0 || len(got) != len(want) {
			t.Fatalf("%s: %v gives element %d = %v (%#x), portable %v (%#x)", what, set, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// f64Bits holds a float64 as two float32 bit patterns, for forSets.
func f64Bits(x float64) []float32 {
	b := math.Float64bits(x)
	return []float32{math.Float32frombits(uint32(b)), math.Float32frombits(uint32(b >> 32))}
}

// exactSum returns Σ terms exactly rounded once to float64.
func exactSum(terms []*big.Float) float64 {
	s := new(big.Float).SetPrec(4000)
	for _, t := range terms {
		s.Add(s, t)
	}
	f, _ := s.Float64()
	return f
}

// The float64 row sums: every kernel set gives the portable bits, and the
// portable sums are within the bound of any summation order, (n-1)·2⁻⁵³ times
// the sum of the terms' magnitudes (plus 3·2⁻⁵³ per term for a squared
// deviation, whose difference and square are rounded), of the exact sums.
func TestRowSums(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	for _, c := range rowClasses {
		for _, n := range rowLengths {
			x := rowOf(r, n, c.gen)
			what := fmt.Sprintf("%s n=%d", c.name, n)
			forSets(t, what+" sumRow", func() []float32 { return f64Bits(kern.sumRow(x)) })
			mean := sumRowGeneric(x) / float64(max(n, 1))
			for _, m := range []float64{0, mean} {
				forSets(t, fmt.Sprintf("%s sumSqDevRow(m=%g)", what, m), func() []float32 { return f64Bits(kern.sumSqDevRow(x, m)) })
			}
			var terms, sq []*big.Float
			var mag, magSq float64
			for _, v := range x {
				terms = append(terms, big.NewFloat(float64(v)))
				mag += math.Abs(float64(v))
				d := new(big.Float).SetPrec(200).Sub(big.NewFloat(float64(v)), big.NewFloat(mean))
				sq = append(sq, new(big.Float).SetPrec(400).Mul(d, d))
				df, _ := d.Float64()
				magSq += df * df
			}
			u := 0x1p-53
			if got, want := sumRowGeneric(x), exactSum(terms); math.Abs(got-want) > float64(max(n-1, 0))*u*mag {
				t.Errorf("%s: sumRow %v, exact %v", what, got, want)
			}
			if got, want := sumSqDevRowGeneric(x, mean), exactSum(sq); math.Abs(got-want) > float64(n+3)*u*magSq*1.0001+0x1p-1074 {
				t.Errorf("%s: sumSqDevRow %v, exact %v", what, got, want)
			}
		}
	}
}

// The sums' order is the documented one, not a running sum: 2⁵³ in lane 0
// and 1 in lane 1 twice (x[1], x[9]) give 2⁵³ + 2, where a running sum
// loses both ones to ties to even; the 8 elements past the lanes (x[16..])
// are added one by one after them.
func TestRowSumOrder(t *testing.T) {
	x := make([]float32, 16)
	x[0], x[1], x[9] = 0x1p53, 1, 1
	if got := sumRowGeneric(x); got != 0x1p53+2 {
		t.Errorf("lanes: sum %v, want 2^53+2", got)
	}
	x = append(make([]float32, 16), 0x1p53, 1, 1) // all three in the tail
	if got := sumRowGeneric(x); got != 0x1p53 {
		t.Errorf("tail: sum %v, want 2^53 (1 + 2^53 rounds to even twice)", got)
	}
	for _, set := range kernelSets() {
		func() {
			defer useKernels(set)()
			if got := kern.sumRow(x); got != 0x1p53 {
				t.Errorf("%v: tail: sum %v, want 2^53", set, got)
			}
		}()
	}
}

// rmsnormRow and layernormRow: every kernel set gives the portable bits,
// in place too (o = x), and the portable rows are within a few float32
// roundings of the float64 norms: RMSNorm within 3.01·2⁻²⁴ of each output
// (rstd, x·rstd and ·w each rounded once), LayerNorm within 2⁻²² times
// |(x-μ)·r·w| + |μ·r·w| + |b| (the mean rounded to float32, x - m, ·r, ·w, +
// b), plus eight units of the smallest subnormal.
func TestNormRows(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	const eps = 1e-6
	for _, c := range rowClasses {
		for _, n := range rowLengths[1:] {
			x := rowOf(r, n, c.gen)
			w, b := randVec(r, n), randVec(r, n)
			what := fmt.Sprintf("%s n=%d", c.name, n)
			rms := func(inPlace bool) []float32 {
				o := make([]float32, n)
				if inPlace {
					copy(o, x)
					rmsnormRow(o, o, w, eps)
					return o
				}
				rmsnormRow(o, x, w, eps)
				return o
			}
			ln := func(inPlace bool) []float32 {
				o := make([]float32, n)
				if inPlace {
					copy(o, x)
					layernormRow(o, o, w, b, eps)
					return o
				}
				layernormRow(o, x, w, b, eps)
				return o
			}
			for _, inPlace := range []bool{false, true} {
				forSets(t, fmt.Sprintf("%s rmsnormRow in place %v", what, inPlace), func() []float32 { return rms(inPlace) })
				forSets(t, fmt.Sprintf("%s layernormRow in place %v", what, inPlace), func() []float32 { return ln(inPlace) })
			}
			var ss, sum float64
			for _, v := range x {
				ss += float64(v) * float64(v)
				sum += float64(v)
			}
			rstd := 1 / math.Sqrt(ss/float64(n)+eps)
			got := func() []float32 { defer useKernels(kernelsGeneric)(); return rms(false) }()
			for i, v := range x {
				want := float64(v) * rstd * float64(w[i])
				if d := math.Abs(float64(got[i]) - want); d > 3.01*0x1p-24*math.Abs(want)+8*0x1p-149 {
					t.Fatalf("%s: rmsnorm[%d] = %v, want %v", what, i, got[i], want)
				}
			}
			mu := sum / float64(n)
			var vs float64
			for _, v := range x {
				vs += (float64(v) - mu) * (float64(v) - mu)
			}
			rl := 1 / math.Sqrt(vs/float64(n)+eps)
			got = func() []float32 { defer useKernels(kernelsGeneric)(); return ln(false) }()
			for i, v := range x {
				y := (float64(v) - mu) * rl * float64(w[i])
				want := y + float64(b[i])
				tol := 0x1p-22*(math.Abs(y)+math.Abs(mu*rl*float64(w[i]))+math.Abs(float64(b[i]))) + 8*0x1p-149
				if d := math.Abs(float64(got[i]) - want); d > tol {
					t.Fatalf("%s: layernorm[%d] = %v, want %v", what, i, got[i], want)
				}
			}
		}
	}
}

// The rotary embedding's rotation: every kernel set gives the portable
// bits, and the portable pairs are within 2⁻²³·(|a·c| + |b·s|) (two rounded
// products and a rounded sum) of the float64 rotation.
func TestRotateRows(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	for _, cl := range rowClasses {
		for _, n := range rowLengths {
			a, b := rowOf(r, n, cl.gen), rowOf(r, n, cl.gen)
			c, s := make([]float32, n), make([]float32, n)
			for i := range c {
				sn, cs := math.Sincos(r.Float64() * 1000)
				c[i], s[i] = float32(cs), float32(sn)
			}
			rot := func() []float32 {
				x := append(append([]float32(nil), a...), b...)
				rotateHalves(x[:n], x[n:], c, s)
				return x
			}
			what := fmt.Sprintf("%s n=%d", cl.name, n)
			forSets(t, what+" rotateHalves", rot)
			got := func() []float32 { defer useKernels(kernelsGeneric)(); return rot() }()
			for i := range n {
				ac, bs := float64(a[i])*float64(c[i]), float64(b[i])*float64(s[i])
				bc, as := float64(b[i])*float64(c[i]), float64(a[i])*float64(s[i])
				for k, want := range []float64{ac - bs, bc + as} {
					tol := 0x1p-23*(math.Abs(ac)+math.Abs(bs)+math.Abs(bc)+math.Abs(as)) + 2*0x1p-149
					if g := float64(got[k*n+i]); math.Abs(g-want) > tol {
						t.Fatalf("%s: pair %d half %d = %v, want %v", what, i, k, g, want)
					}
				}
			}
		}
	}
}

// The matmul epilogue on 3 rows with gaps between them: o = v + b and o +=
// v + b, every kernel set giving the portable bits (zero signs included:
// -0 + 0 is +0 in each) and leaving the gaps alone, and the portable results
// within 2⁻²³ of |v| + |b| + |o| of the float64 sums.
func TestBiasRows(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	const rows = 3
	for _, cl := range rowClasses {
		for _, n := range rowLengths {
			ldo, ldv := n+5, n+2
			v, b, o := rowOf(r, (rows-1)*ldv+n, cl.gen), rowOf(r, n, cl.gen), rowOf(r, (rows-1)*ldo+n, cl.gen)
			run := func(f func(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int)) func() []float32 {
				return func() []float32 {
					out := append([]float32(nil), o...)
					f(out, ldo, v, ldv, b, rows, n)
					return out
				}
			}
			what := fmt.Sprintf("%s n=%d", cl.name, n)
			forSets(t, what+" addBias", run(addBias))
			forSets(t, what+" accBias", run(accBias))
			gotAdd := func() []float32 { defer useKernels(kernelsGeneric)(); return run(addBias)() }()
			gotAcc := func() []float32 { defer useKernels(kernelsGeneric)(); return run(accBias)() }()
			for i := range o {
				row, j := i/ldo, i%ldo
				if j >= n {
					if math.Float32bits(gotAdd[i]) != math.Float32bits(o[i]) || math.Float32bits(gotAcc[i]) != math.Float32bits(o[i]) {
						t.Fatalf("%s: wrote o[%d][%d], a gap", what, row, j)
					}
					continue
				}
				fv, fb, fo := float64(v[row*ldv+j]), float64(b[j]), float64(o[i])
				if d := math.Abs(float64(gotAdd[i]) - (fv + fb)); d > 0x1p-24*math.Abs(fv+fb) {
					t.Fatalf("%s: addBias[%d][%d] = %v, want %v", what, row, j, gotAdd[i], fv+fb)
				}
				if d := math.Abs(float64(gotAcc[i]) - (fo + fv + fb)); d > 0x1p-23*(math.Abs(fv)+math.Abs(fb)+math.Abs(fo)) {
					t.Fatalf("%s: accBias[%d][%d] = %v, want %v", what, row, j, gotAcc[i], fo+fv+fb)
				}
			}
		}
	}
}

// bf16RoundRows gives bf16Round's bits with every bf16 set the bf16 mode
// can run here (the VCVTNEPS2BF16 kernel natively, or emulated where the
// CPU lacks AVX512_BF16), on rows of every class and on random bits
// (NaNs, infinities, subnormals, ties included).
func TestBF16RoundRows(t *testing.T) {
	sets := []bf16Set{bf16Generic}
	if BF16Asm(t) {
		sets = append(sets, bf16AVX512)
	}
	r := rand.New(rand.NewPCG(79, 80))
	classes := append(rowClasses, struct {
		name string
		gen  func(r *rand.Rand) float32
	}{"bits", func(r *rand.Rand) float32 {
		if r.IntN(2) == 0 {
			return math.Float32frombits(r.Uint32()&^0xffff | 0x8000) // a tie
		}
		return math.Float32frombits(r.Uint32())
	}})
	for _, cl := range classes {
		for _, n := range rowLengths {
			x := rowOf(r, n, cl.gen)
			for _, set := range sets {
				dst := make([]uint16, n+1)
				dst[n] = 0x4242
				bf16RoundRows(set, dst[:n], x)
				for i, v := range x {
					if want := bf16Round(v); dst[i] != want {
						t.Fatalf("%v %s n=%d: x[%d] = %#08x rounds to %#04x, bf16Round %#04x", set, cl.name, n, i, math.Float32bits(v), dst[i], want)
					}
				}
				if dst[n] != 0x4242 {
					t.Fatalf("%v %s n=%d: wrote past the row", set, cl.name, n)
				}
			}
		}
	}
}

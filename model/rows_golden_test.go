package model

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// rowGolden is, per row kernel and for gemmNT's dot products, the SHA-256 (first 16 hex digits) of the
// bits of its results on rowGoldenInputs as the AVX2 set computed them on
// amd64 (2026-12-06; NaNs written as one NaN): the NEON set on arm64
// repeats AVX2's operations lane for lane in AVX2's 8 lanes, its sums,
// maxima and dot products in AVX2's reduction tree, so it must give these
// bits.
var rowGolden = map[string]string{
	"expSubRow":  "bca08c6c1080efa6",
	"sumExpSub":  "c5673fdf9e380dad",
	"maxRow":     "c0a9bed0a74c5678",
	"divMaxRow":  "a9b54ff4c5424695",
	"mulRow":     "d2901b23d2bb1aa4",
	"geluRow":    "35239a2decbbe89d",
	"geluErfRow": "3ad960b5578ea019",
	"gemmNT":     "2e27806ac682ac1f",
	"dot1x1":     "84c1bd22c473b8db",
	"swigluRow":  "76ec3e1168836672",
}

// rowGoldenSets are the sets of kernelSets() that must give rowGolden's
// bits: AVX2 and NEON.
func rowGoldenSets() []kernelSet {
	var sets []kernelSet
	for _, s := range kernelSets() {
		if s == kernelsAVX2 || s == kernelsNEON {
			sets = append(sets, s)
		}
	}
	return sets
}

// rowGoldenInputs returns rows of every length around the 8-lane step and
// past it, with values that do not depend on the platform's floating point
// (integer-made float32s, 2^-12 to 2^8 in magnitude), and edge values
// mixed in: zeros of both signs, ±Inf, exponents near where e^x
// underflows and overflows, denormals, and a NaN in every fifth row; then
// two rows whose maximum depends on x86's maximum's NaN and zero rules.
func rowGoldenInputs() [][]float32 {
	r := rand.New(rand.NewPCG(41, 42))
	edges := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		-87.33, -87.34, -87.5, -88, -103, -104, -120, 88.3, 88.7, 88.73, 89, 100, -9.5, 9.5,
		math.Float32frombits(1), -math.Float32frombits(0x7ffff), 1e-38}
	var rows [][]float32
	for ri, n := range []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 40, 64, 100, 129, 257, 8, 16, 24, 13, 77} {
		row := make([]float32, n)
		for i := range row {
			m := float64(int32(r.Uint32()>>8)-1<<23) / (1 << 23) // [-1, 1) in 24 bits
			row[i] = float32(math.Ldexp(m, r.IntN(21)-12))
			if r.IntN(6) == 0 {
				row[i] = edges[r.IntN(len(edges))]
			}
		}
		if ri%5 == 4 && n > 0 {
			row[r.IntN(n)] = float32(math.NaN())
		}
		rows = append(rows, row)
	}
	// x86's maximum keeps its second operand where the comparison fails: a
	// NaN last in its lane survives, and of two zeros the later one wins.
	nan, zeros := make([]float32, 16), make([]float32, 17)
	for i := range nan {
		nan[i], zeros[i] = float32(i)-20, float32(i)-30
	}
	nan[13] = float32(math.NaN())
	zeros[3], zeros[11], zeros[16] = 0, float32(math.Copysign(0, -1)), -1
	return append(rows, nan, zeros)
}

// rowGoldenResults returns each row kernel's results on rowGoldenInputs
// (the rows each kernel sets, then what it returns) as little-endian
// float32 bits, NaNs as 0x7fc00000, under the kernel table in use.
func rowGoldenResults() map[string][]byte {
	out := map[string][]byte{}
	put := func(name string, xs ...float32) {
		for _, x := range xs {
			b := math.Float32bits(x)
			if x != x {
				b = 0x7fc00000
			}
			out[name] = binary.LittleEndian.AppendUint32(out[name], b)
		}
	}
	rows := rowGoldenInputs()
	for _, row := range rows {
		cp := func() []float32 { return append([]float32(nil), row...) }
		// m: the row's maximum (softmax), 0 (every value's own exponential:
		// overflow and underflow), and a large one (underflow).
		for _, m := range []float32{maxRowGeneric(row), 0, 60, -30} {
			x := cp()
			s := expSubRow(x, m)
			put("expSubRow", x...)
			put("expSubRow", s)
			put("sumExpSub", sumExpSub(row, m))
		}
		put("maxRow", maxRow(row))
		for _, d := range []float32{7.3, -0.01, 3e-39} {
			x := cp()
			mx := divMaxRow(x, d)
			put("divMaxRow", x...)
			put("divMaxRow", mx)
			x = cp()
			mulRow(x, d)
			put("mulRow", x...)
		}
		x := cp()
		geluRow(x)
		put("geluRow", x...)
		x = cp()
		geluErfRow(x)
		put("geluErfRow", x...)
		x = cp()
		u := make([]float32, len(row)) // up: the row reversed
		for j := range u {
			u[j] = row[len(row)-1-j]
		}
		swigluRow(x, u)
		put("swigluRow", x...)
	}
	// gemmNT (attention's values, products in rows): every K around and
	// past the 8-lane step, ragged M and N, the rows as operands; dot1x1
	// on pairs of rows.
	for _, s := range []struct{ M, N, K int }{{1, 1, 1}, {3, 4, 8}, {4, 5, 7}, {7, 9, 17}, {5, 13, 33}, {2, 3, 100}, {6, 8, 129}, {3, 4, 257}} {
		var a, b []float32
		for _, row := range rows {
			if len(row) >= s.K && len(a) < s.M*s.K {
				a = append(a, row[:s.K]...)
			} else if len(row) >= s.K && len(b) < s.N*s.K {
				b = append(b, row[len(row)-s.K:]...)
			}
		}
		for len(a) < s.M*s.K || len(b) < s.N*s.K { // too few rows that long: rows of the kind gemmNT sees
			a, b = append(a, float32(len(a)%13)-6), append(b, float32(len(b)%7)/8)
		}
		a, b = a[:s.M*s.K], b[:s.N*s.K]
		c := make([]float32, s.M*s.N)
		gemmNT(c, s.N, a, s.K, b, s.K, s.M, s.N, s.K)
		put("gemmNT", c...)
		put("dot1x1", dot1x1(a[:s.K], b[:s.K]), dot1x1(a[len(a)-s.K:], b[len(b)-s.K:]))
	}
	return out
}

// The AVX2 set (on amd64) and the NEON set (on arm64) give rowGolden's bits
// for every row kernel and for gemmNT and dot1x1.
func TestRowGolden(t *testing.T) {
	sets := rowGoldenSets()
	if len(sets) == 0 {
		t.Skip("neither the AVX2 set nor the NEON set runs on this CPU")
	}
	for _, set := range sets {
		restore := useKernels(set)
		res := rowGoldenResults()
		restore()
		for name, want := range rowGolden {
			sum := sha256.Sum256(res[name])
			if got := fmt.Sprintf("%x", sum[:8]); got != want {
				t.Errorf("%v %s: results hash to %s, want %s", set, name, got, want)
			}
		}
	}
}

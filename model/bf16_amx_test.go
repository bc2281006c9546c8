package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/x86emu"
)

// tdpbf16 is what the hardware computes: the single TDPBF16PS steps
// measured on a Xeon with AMX-BF16 (x86emu.TDPBF16Cases, which the emulator
// also gives), where accumulating pair after pair (the intrinsics guide's
// pseudocode) would give another answer.
func TestTDPBF16Hardware(t *testing.T) {
	for _, c := range x86emu.TDPBF16Cases() {
		var a, b [32]uint16
		for k, p := range c.Even {
			a[2*k], b[2*k] = bf16Round(p[0]), bf16Round(p[1])
		}
		for k, p := range c.Odd {
			a[2*k+1], b[2*k+1] = bf16Round(p[0]), bf16Round(p[1])
		}
		got := tdpbf16(c.Acc, &a, &b)
		if g := math.Float32bits(got); g != c.Want && !(got != got && math.Float32frombits(c.Want) != math.Float32frombits(c.Want)) {
			t.Errorf("%s: tdpbf16 = %#08x, want %#08x", c.Name, g, c.Want)
		}
	}
}

// dotBF16AMXRef is a dot product: on ordinary values it is within float32
// accumulation error of the exact (float64) sum of the bf16 products.
func TestDotBF16AMXRefIsADot(t *testing.T) {
	// Sequential sums of up to K terms: each add errs by at most 2^-24 of
	// the magnitude so far (2^-23: the evens' and odds' sums, then theirs).
	checkIsADot(t, 9, dotBF16AMXRef, func(K int) float64 { return float64(K) * 0x1p-23 })
}

// amxPanel returns the bf16-amx panel of the M rows of K of a (row stride
// lda), as roundPanelAMX lays out rounded activations.
func amxPanel(a []uint16, lda, M, K int) []uint16 {
	K32 := amxK32(K)
	p := make([]uint16, amxPanelLen(M, K))
	rows := make([]uint16, 16*K32)
	for g := range len(p) / (16 * K32) {
		clear(rows)
		for i := range 16 {
			if t := 16*g + i; t < M {
				copy(rows[i*K32:], a[t*lda:][:K])
			}
		}
		interleaveVNNI(p[16*g*K32:], rows, K32)
	}
	return p
}

// The panel's layout: element (t, k) of the rows at group t/16, pair k/2,
// token t%16, k%2; zero beyond the rows and past K.
func TestAMXPanelLayout(t *testing.T) {
	const M, K = 37, 45
	a := make([]float32, M*K)
	for i := range a {
		a[i] = float32(i + 1)
	}
	K32 := amxK32(K)
	p := make([]uint16, amxPanelLen(M, K))
	for i := range p {
		p[i] = 0xffff
	}
	rows := make([]uint16, 16*K32)
	for g := range len(p) / (16 * K32) {
		roundPanelAMX(p, a, M, K, g, rows)
	}
	if len(p) != 64*K32 {
		t.Fatalf("panel of %d rows: %d values, want %d", M, len(p), 64*K32)
	}
	for tok := range 64 {
		for k := range K32 {
			got := p[(tok/16)*16*K32+(k/2)*32+(tok%16)*2+k%2]
			want := uint16(0)
			if tok < M && k < K {
				want = bf16Round(a[tok*K+k])
			}
			if got != want {
				t.Fatalf("panel (%d, %d) = %#x, want %#x", tok, k, got, want)
			}
		}
	}
}

// The AMX kernels compute dotBF16AMXRef, bit for bit, for every element:
// natively where the CPU has AMX, elsewhere on amd64 the same assembly in
// the x86 emulator; over shapes with ragged M, N and K (tails, the edge
// copy; up to 16 rows, the half kernel), strides wider than K, chunks of k
// of several lengths, and operands with extreme values.
func TestGemmBF16AMX(t *testing.T) {
	if !hasAMX() && !amxAsmEmulated {
		t.Skip("no AMX kernels here: not amd64, or the emulator could not take them (see TestAMXEmulatorMatchesHardware)")
	}
	r := rand.New(rand.NewPCG(11, 12))
	defer func(n int) { amxChunkSteps = n }(amxChunkSteps)
	steps := []int{1, 3, 8}
	check := func(M, N, K int, a, b []uint16, lda, ldb int, what string) {
		t.Helper()
		ldo := N + r.IntN(3)
		out := make([]float32, M*ldo)
		for i := range out {
			out[i] = 12345
		}
		amxChunkSteps = steps[r.IntN(len(steps))] // chunks of k: the same bits
		gemmBF16(bf16AMX, out, ldo, amxPanel(a, lda, M, K), lda, b, ldb, M, N, K)
		for i := range M {
			for j := range ldo {
				got := out[i*ldo+j]
				if j >= N {
					if got != 12345 {
						t.Fatalf("%dx%dx%d %s: out[%d][%d] (past N) written", M, N, K, what, i, j)
					}
					continue
				}
				want := dotBF16AMXRef(a[i*lda:][:K], b[j*ldb:][:K])
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("%dx%dx%d %s: out[%d][%d] = %g (%#x), want %g (%#x)", M, N, K, what, i, j, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
		}
	}
	shapes := [][3]int{{1, 1, 1}, {1, 32, 32}, {16, 16, 32}, {32, 32, 64}, {5, 7, 33}, {33, 31, 64}, {64, 64, 768},
		{70, 45, 200}, {3, 100, 3072}, {64, 128, 96}, {40, 64, 31}, {1, 81, 768}}
	if !hasAMX() { // emulated: about 2M instructions a second
		shapes = shapes[:8]
	}
	for _, sh := range shapes {
		M, N, K := sh[0], sh[1], sh[2]
		for _, wild := range []bool{false, true} {
			lda, ldb := K+r.IntN(3), K+r.IntN(3)
			check(M, N, K, bf16Rows(r, M*lda, wild), bf16Rows(r, N*ldb, wild), lda, ldb, map[bool]string{false: "normal", true: "wild"}[wild])
		}
		if K <= 64 {
			check(M, N, K, bf16Huge(r, M*K), bf16Huge(r, N*K), K, K, "huge")
		}
	}
}

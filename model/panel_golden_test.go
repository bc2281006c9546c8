package model

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// panelGolden is the SHA-256 (first 16 hex digits) of the bits of
// panelGoldenProducts' products as the AVX2 and AVX-512 panel and gemmNN
// kernels computed them on amd64 (2026-12-06): every set with panel
// kernels, on any architecture (NEON on arm64), must give these bits.
const panelGolden = "bf37fa7ddb78e691"

// panelGoldenProducts returns the float32 bits of products of panel-layout
// matrices (F32, F16, BF16) with a, in inputs that do not depend on the
// platform's floating point (integer-made float32s of magnitudes 2^-6 to
// 2^6; random16's 16-bit weights): rows left over for every row tile, a
// partial last panel, k split at panelKc.
func panelGoldenProducts() []byte {
	defer func(kc int) { panelKc = kc }(panelKc)
	r := rand.New(rand.NewPCG(31, 32))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			m := float64(int32(r.Uint32()>>8)-1<<23) / (1 << 23) // [-1, 1) in 24 bits
			v[i] = float32(math.Ldexp(m, r.IntN(13)-6))
		}
		return v
	}
	var out []byte
	for _, dtype := range []DType{F32, F16, BF16} {
		for _, s := range []struct{ M, N, K, kc int }{{23, 45, 150, 64}, {13, 32, 37, 2048}, {1, 70, 9, 4}} {
			panelKc = s.kc
			var w matrix
			if dtype == F32 {
				w = f32Matrix(vec(s.N * s.K))
			} else {
				u := make([]uint16, s.N*s.K)
				for i := range u {
					u[i] = random16(r, dtype)
				}
				w = matrix{dtype: dtype, u16: u}
			}
			p := packPanels(w, s.K)
			a := vec(s.M * s.K)
			c := make([]float32, s.M*s.N)
			gemmNTW(c, s.N, a, nil, s.K, p, 0, s.K, s.M, s.N, s.K)
			for _, x := range c {
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
			}
		}
	}
	// gemmNN (attention's scores): one FMA chain per element in every set
	// with panel kernels.
	for _, s := range []struct{ M, N, K int }{{9, 48, 64}, {5, 23, 17}} {
		a, b := vec(s.M*s.K), vec(s.K*s.N)
		c := make([]float32, s.M*s.N)
		gemmNN(c, s.N, a, s.K, b, s.N, s.M, s.N, s.K)
		for _, x := range c {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	}
	return out
}

// Every set with panel kernels that runs here gives the bits the amd64 sets
// gave (panelGolden): NEON's weight products and attention scores on arm64
// are AVX2's and AVX-512's.
func TestPanelGolden(t *testing.T) {
	sets := panelSets()
	if len(sets) == 0 {
		t.Skip("no kernel set with panel kernels runs here (the portable set's products are not one FMA chain)")
	}
	for _, set := range sets {
		restore := useKernels(set)
		sum := sha256.Sum256(panelGoldenProducts())
		restore()
		if got := fmt.Sprintf("%x", sum[:8]); got != panelGolden {
			t.Errorf("%v: products hash to %s, want %s", set, got, panelGolden)
		}
	}
}

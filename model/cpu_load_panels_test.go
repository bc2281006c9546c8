package model

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"
)

// scatterPanels puts every stored value where the panel layout's definition
// says, (out, in) element (j, k) at j/panelNR*K*panelNR + k*panelNR +
// j%panelNR, however the stream cuts the tensor into runs: rows given whole,
// in part at either end of a run, runs shorter than a row, runs that cross
// panels; both orientations; float32 and the 16 bits of F16 and BF16 values
// (from the values, and from the stored bytes).
func TestScatterPanels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, rows := range []int{1, 2, 31, 32, 33, 70} {
		for _, cols := range []int{1, 3, 32, 33, 65} {
			for _, transpose := range []bool{false, true} {
				N, K := rows, cols
				if transpose {
					N, K = cols, rows
				}
				n := rows * cols
				vals := make([]float32, n)
				for i := range vals {
					vals[i] = float32(i + 1)
				}
				size := (N + panelNR - 1) / panelNR * panelNR * K
				want := make([]float32, size)
				for e, v := range vals {
					j, k := e/cols, e%cols
					if transpose {
						j, k = k, j
					}
					want[j/panelNR*K*panelNR+k*panelNR+j%panelNR] = v
				}
				for trial := range 4 {
					var cuts []int // the runs' starts: one run, runs of one value, random runs
					switch trial {
					case 0:
						cuts = []int{0}
					case 1:
						for e := range n {
							cuts = append(cuts, e)
						}
					default:
						for e := 0; e < n; e += 1 + rng.IntN(3*cols) {
							cuts = append(cuts, e)
						}
					}
					cuts = append(cuts, n)
					got := make([]float32, size)
					for i := range len(cuts) - 1 {
						scatterPanels(got, vals[cuts[i]:cuts[i+1]], cuts[i], cols, K, transpose)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("rows %d cols %d transpose %v runs %v: float32 panels differ", rows, cols, transpose, cuts)
					}
					for _, dtype := range []DType{F16, BF16} {
						// Distinct finite values of the type (their decodes are exact).
						vals16, raw := make([]float32, n), make([]byte, 2*n)
						w16 := make([]uint16, size)
						for e := range n {
							h := uint16(0x3c00 + e) // 1.0 on: up to about 7.4e3
							vals16[e] = float16.Frombits(h).Float32()
							if dtype == BF16 {
								h = uint16(0x3f80 + e) // 1.0 on: up to about 4e26
								vals16[e] = math.Float32frombits(uint32(h) << 16)
							}
							binary.LittleEndian.PutUint16(raw[2*e:], h)
							j, k := e/cols, e%cols
							if transpose {
								j, k = k, j
							}
							w16[j/panelNR*K*panelNR+k*panelNR+j%panelNR] = h
						}
						for _, fromRaw := range []bool{false, true} {
							g16 := make([]uint16, size)
							for i := range len(cuts) - 1 {
								var r []byte
								if fromRaw {
									r = raw[2*cuts[i] : 2*cuts[i+1]]
								}
								scatterPanels16(g16, vals16[cuts[i]:cuts[i+1]], r, dtype, cuts[i], cols, K, transpose)
							}
							if !slices.Equal(g16, w16) {
								t.Fatalf("rows %d cols %d transpose %v %v raw %v runs %v: panels differ", rows, cols, transpose, dtype, fromRaw, cuts)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkScatterPanels: GPT-2 124M's wte (stored as (out, in): the
// strided case) and its QKV weight (stored (in, out), transposed), in the
// stream's runs of chunkValues.
func BenchmarkScatterPanels(b *testing.B) {
	for _, c := range []struct {
		name       string
		rows, cols int
		transpose  bool
	}{{"wte", 50257, 768, false}, {"qkv", 768, 2304, true}} {
		b.Run(c.name, func(b *testing.B) {
			src := make([]float32, c.rows*c.cols)
			for i := range src {
				src[i] = float32(i)
			}
			N, K := c.rows, c.cols
			if c.transpose {
				N, K = K, N
			}
			dst := make([]float32, (N+panelNR-1)/panelNR*panelNR*K)
			b.SetBytes(int64(4 * len(src)))
			for b.Loop() {
				for e := 0; e < len(src); e += chunkValues {
					scatterPanels(dst, src[e:min(e+chunkValues, len(src))], e, c.cols, K, c.transpose)
				}
			}
		})
	}
}

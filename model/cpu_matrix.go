package model

import (
	"math"

	"github.com/x448/float16"
)

// matrix is a weight matrix as the CPU kernels read it: the b operand of
// gemmNT, rows of contiguous elements, in float32 or in 16 bits (F16, BF16)
// that the kernels widen to float32 as they load them. Widening is exact, so
// a 16-bit matrix gives bit-identical results to its values widened to
// float32 and held as a float32 matrix.
//
// In the bf16 mode (bf16.go) every weight matrix is BF16 with bf set: its
// products take the a operand rounded to bf16 too (gemmNTW's a16) and run
// the bf16 kernels of that set instead of widening.
type matrix struct {
	dtype DType     // F32, F16 or BF16
	f32   []float32 // the elements when dtype is F32
	u16   []uint16  // the elements' bits when dtype is F16 or BF16
	bf    bf16Set   // bf16Off, or the bf16 mode's kernels (dtype BF16)
	pk    int       // the row length K in the panel layout (ops_panel.go); 0: rows
	n     int       // the rows (output channels) in the panel layout
}

// f32Matrix wraps float32 elements.
func f32Matrix(x []float32) matrix { return matrix{dtype: F32, f32: x} }

// len is the number of elements.
func (m matrix) len() int {
	if m.dtype == F32 {
		return len(m.f32)
	}
	return len(m.u16)
}

// bytes is the memory the elements take.
func (m matrix) bytes() int64 { return int64(m.len()) * int64(m.dtype.Size()) }

// widen writes elements [off, off+len(dst)) of m, in the row layout's
// order, to dst as float32.
func (m matrix) widen(dst []float32, off int) {
	if m.pk != 0 {
		for len(dst) > 0 { // row by row
			j, k := off/m.pk, off%m.pk
			n := min(len(dst), m.pk-k)
			if n == m.pk {
				m.widenRow(dst[:n], j)
			} else {
				row := make([]float32, m.pk)
				m.widenRow(row, j)
				copy(dst[:n], row[k:])
			}
			dst, off = dst[n:], off+n
		}
		return
	}
	switch m.dtype {
	case F32:
		copy(dst, m.f32[off:][:len(dst)])
	case F16:
		for i, h := range m.u16[off:][:len(dst)] {
			dst[i] = f16To32(h)
		}
	case BF16:
		for i, h := range m.u16[off:][:len(dst)] {
			dst[i] = bf16To32(h)
		}
	}
}

// f16To32 widens IEEE binary16 bits to float32 (exact).
func f16To32(h uint16) float32 { return float16.Frombits(h).Float32() }

// bf16To32 widens bfloat16 bits to float32 (exact): they are its upper half.
func bf16To32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// gemmNTW is gemmNT with b a weight matrix whose rows start at element off.
// When b is a bf16-mode matrix, the product reads a16 instead of a: a
// rounded to bf16 (bf16Operand), laid out alike.
func gemmNTW(out []float32, ldo int, a []float32, a16 []uint16, lda int, b matrix, off, ldb int, M, N, K int) {
	if b.bf != bf16Off {
		gemmBF16(b.bf, out, ldo, a16, lda, b.u16[off:], ldb, M, N, K)
		return
	}
	if b.pk != 0 {
		gemmPanelW(out, ldo, a, lda, b, off/ldb, M, N, K)
		return
	}
	switch b.dtype {
	case F16, BF16:
		gemmNT16(out, ldo, a, lda, b.u16[off:], ldb, M, N, K, b.dtype)
	default:
		gemmNT(out, ldo, a, lda, b.f32[off:], ldb, M, N, K)
	}
}

// gemmNT16 is gemmNT with b in 16 bits of dtype (F16 or BF16), widened
// inside the kernels: bit-identical to gemmNT on b widened to float32.
func gemmNT16(out []float32, ldo int, a []float32, lda int, b []uint16, ldb int, M, N, K int, dtype DType) {
	if M <= 0 || N <= 0 {
		return
	}
	kern.gemmNT16(out, ldo, a, lda, b, ldb, M, N, K, dtype)
}

// gemmNT16Generic is gemmNT16 with the portable kernels: four rows of b at a
// time are widened into scratch and multiplied by gemmNTGeneric, whose
// elements do not depend on the blocking, so the result is gemmNTGeneric's
// on all of b widened.
func gemmNT16Generic(out []float32, ldo int, a []float32, lda int, b []uint16, ldb int, M, N, K int, dtype DType) {
	m := matrix{dtype: dtype, u16: b}
	buf := make([]float32, 4*K)
	for j := 0; j < N; j += 4 {
		n := min(4, N-j)
		for r := range n {
			m.widen(buf[r*K:][:K], (j+r)*ldb)
		}
		gemmNTGeneric(out[j:], ldo, a, lda, buf, K, M, n, K)
	}
}

// same reports whether m and o hold the same elements in the same memory.
func (m matrix) same(o matrix) bool {
	switch {
	case m.dtype != o.dtype || m.len() != o.len() || m.len() == 0:
		return false
	case m.dtype == F32:
		return &m.f32[0] == &o.f32[0]
	}
	return &m.u16[0] == &o.u16[0]
}

// bf16Operand returns a (rows of K) rounded to bf16 (bf16RoundRows, in
// parallel) when m is a bf16-mode matrix, else nil; release gives the buffer
// back. For the bf16-amx kernels the panel is in their layout
// (roundPanelAMX); panelRows finds a row in either.
func (c *CPU) bf16Operand(m matrix, a []float32, K int) (a16 []uint16, release func()) {
	if m.bf == bf16Off {
		return nil, func() {}
	}
	if m.bf == bf16AMX {
		P := len(a) / K
		a16 = c.getPanel(amxPanelLen(P, K))
		K32 := amxK32(K)
		rows := make([]uint16, c.threads*16*K32) // a worker's 16 rounded rows
		c.parallelFor(len(a16)/(16*K32), func(w, g int) {
			roundPanelAMX(a16, a, P, K, g, rows[w*16*K32:][:16*K32])
		})
		return a16, func() { c.putPanel(a16) }
	}
	a16 = c.getPanel(len(a))
	const block = 1 << 14
	c.parallelFor((len(a)+block-1)/block, func(_, t int) {
		lo, hi := t*block, min(len(a), (t+1)*block)
		bf16RoundRows(m.bf, a16[lo:hi], a[lo:hi])
	})
	return a16, func() { c.putPanel(a16) }
}

// panelRows returns bf16Operand's panel a16 (rows of K) from row r0 on, or
// nil for a nil a16 (an f32-mode product). For the bf16-amx layout r0 must
// be a multiple of 32 (the callers' tiles are).
func (m matrix) panelRows(a16 []uint16, r0, K int) []uint16 {
	switch {
	case a16 == nil:
		return nil
	case m.bf == bf16AMX:
		if r0%32 != 0 {
			panic("panelRows: a bf16-amx panel split inside a group of 32 rows")
		}
		return a16[r0*amxK32(K):]
	}
	return a16[r0*K:]
}

// getPanel returns n bf16 values of scratch, reusing the spare panel when it
// is big enough.
func (c *CPU) getPanel(n int) []uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return takeSpare(&c.spare16, n)
}

// putPanel keeps p for the next call when it is the biggest seen.
func (c *CPU) putPanel(p []uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keepSpare(&c.spare16, p)
}

// toBF16 returns m as a bf16-mode matrix for the kernels of set: float32
// and F16 elements rounded to bf16 (to nearest, ties to even; F16 is widened
// exactly first, in place), BF16 ones kept as stored. Rows are converted in
// parallel on c's threads.
func (c *CPU) toBF16(m matrix, set bf16Set) matrix {
	n := m.len()
	const block = 1 << 16
	tasks := (n + block - 1) / block
	switch m.dtype {
	case F32:
		u := make([]uint16, n)
		c.parallelFor(tasks, func(_, t int) {
			lo, hi := t*block, min(n, (t+1)*block)
			bf16RoundRows(set, u[lo:hi], m.f32[lo:hi])
		})
		return matrix{dtype: BF16, u16: u, bf: set}
	case F16:
		c.parallelFor(tasks, func(_, t int) {
			for i := t * block; i < min(n, (t+1)*block); i++ {
				m.u16[i] = bf16Round(f16To32(m.u16[i]))
			}
		})
	}
	return matrix{dtype: BF16, u16: m.u16, bf: set}
}

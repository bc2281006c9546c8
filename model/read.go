package model

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrOutsideF16 is wrapped by the error of a tensor read as F16 that holds
// a finite value float16 cannot hold (beyond ±65504 once rounded): such a
// value is refused, never turned into an infinity.
var ErrOutsideF16 = errors.New("outside float16's range (largest 65504)")

// DType is the element type of tensor data handed to a backend.
type DType int

// The dtypes ReadTensor produces, all little-endian.
const (
	F32  DType = iota + 1 // IEEE binary32
	F16                   // IEEE binary16
	BF16                  // bfloat16: binary32's upper half
)

// String is the safetensors name of d ("F32", "F16", "BF16").
func (d DType) String() string {
	switch d {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case BF16:
		return "BF16"
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// Size is the bytes per element of d (0 for an unknown DType).
func (d DType) Size() int {
	switch d {
	case F32:
		return 4
	case F16, BF16:
		return 2
	}
	return 0
}

// parseDType maps a safetensors dtype name to a DType.
func parseDType(s string) (DType, bool) {
	switch s {
	case "F32":
		return F32, true
	case "F16":
		return F16, true
	case "BF16":
		return BF16, true
	}
	return 0, false
}

// source locates one tensor's stored data in a file.
type source struct {
	what  string // names the tensor in errors: `x.safetensors: tensor "transformer.wte.weight"`
	r     io.ReaderAt
	off   int64 // absolute offset of the first byte
	dtype DType // as stored
	n     int   // elements
	// rows and cols, when not 0, say the tensor is stored (rows, cols) and is
	// (cols, rows) in Hugging Face's layout: llm.c's (out, in) matrices.
	rows, cols int
}

// bytes is the size of the stored data.
func (s *source) bytes() int64 { return int64(s.n) * int64(s.dtype.Size()) }

// chunkValues bounds the values decoded at a time: the scratch memory of a
// read is a few times this, whatever the tensor's size.
const chunkValues = 1 << 16

// scratch holds the bounded buffers of one read, reused between reads.
type scratch struct {
	raw  []byte
	vals []float32
	col  []float32
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// chunk reads the stored elements [e, e+k) of s and decodes them to float32.
// raw holds the stored bytes.
func (s *source) chunk(sc *scratch, e, k int) (vals []float32, raw []byte, err error) {
	size := s.dtype.Size()
	sc.raw = grow(sc.raw, k*size)
	sc.vals = grow(sc.vals, k)
	if err := readFull(s.r, sc.raw, s.off+int64(e)*int64(size)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.what, err)
	}
	switch s.dtype {
	case F32:
		convF32(sc.vals, sc.raw)
	case F16:
		convF16(sc.vals, sc.raw)
	case BF16:
		convBF16(sc.vals, sc.raw)
	}
	return sc.vals, sc.raw, nil
}

// stream reads s chunk by chunk in Hugging Face's layout, refuses NaN and
// infinite values, and hands the values on to put as runs: put(dst, vals,
// raw) gets the values of elements [dst, dst+len(vals)) and, when they are
// contiguous in the file, their stored bytes. ctx is checked between chunks.
func (s *source) stream(ctx context.Context, sc *scratch, put func(dst int, vals []float32, raw []byte) error) error {
	return s.streamPart(ctx, sc, 0, 1, put)
}

// band is the stored rows of a transposed tensor read at a time.
func (s *source) band() int { return max(1, chunkValues/s.cols) }

// units is the number of reads stream makes of s (chunks, or bands of rows
// where s is transposed): the most parts streamPart can split it into.
func (s *source) units() int {
	if s.rows == 0 {
		return (s.n + chunkValues - 1) / chunkValues
	}
	return (s.rows + s.band() - 1) / s.band()
}

// streamPart is stream over part p of parts, the p-th of parts runs of
// consecutive reads (units), which together make the whole tensor in file
// order. Its first error is the first in the part's range.
func (s *source) streamPart(ctx context.Context, sc *scratch, p, parts int, put func(dst int, vals []float32, raw []byte) error) error {
	first, last := p*s.units()/parts, (p+1)*s.units()/parts
	if s.rows == 0 {
		for u := first; u < last; u++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			e := u * chunkValues
			k := min(chunkValues, s.n-e)
			vals, raw, err := s.chunk(sc, e, k)
			if err != nil {
				return err
			}
			if i := firstNonFinite(vals); i >= 0 {
				return fmt.Errorf("%s: %w", s.what, nonFinite(vals[i], e+i))
			}
			if err := put(e, vals, raw); err != nil {
				return fmt.Errorf("%s: %w", s.what, err)
			}
		}
		return nil
	}
	// A band of stored rows at a time; each of its columns is one contiguous
	// run of the (cols, rows) result.
	rows, cols, band := s.rows, s.cols, s.band()
	sc.col = grow(sc.col, min(band, rows))
	for u := first; u < last; u++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		r0 := u * band
		nb := min(band, rows-r0)
		vals, _, err := s.chunk(sc, r0*cols, nb*cols)
		if err != nil {
			return err
		}
		if j := firstNonFinite(vals); j >= 0 {
			r, c := j/cols, j%cols
			return fmt.Errorf("%s: %w", s.what, nonFinite(vals[j], c*rows+r0+r))
		}
		col := sc.col[:nb]
		for c := range cols {
			for r := range col {
				col[r] = vals[r*cols+c]
			}
			if err := put(c*rows+r0, col, nil); err != nil {
				return fmt.Errorf("%s: %w", s.what, err)
			}
		}
	}
	return nil
}

// firstNonFinite returns the index of the first NaN or infinity in x, or -1.
func firstNonFinite(x []float32) int {
	for i, v := range x {
		// v-v is 0 for finite v and NaN for NaN and ±Inf.
		if v-v != 0 {
			return i
		}
	}
	return -1
}

func nonFinite(v float32, i int) error {
	return fmt.Errorf("value %v at index %d: weights must be finite", v, i)
}

// encoder writes runs of finite float32 values into out as dtype; a run's
// stored bytes in that same dtype are copied as they are.
type encoder struct {
	out    []byte
	dtype  DType
	stored DType // the dtype of the raw bytes put is given
}

func (e *encoder) put(dst int, vals []float32, raw []byte) error {
	switch e.dtype {
	case F32:
		if raw != nil && e.stored == F32 {
			copy(e.out[4*dst:], raw)
			return nil
		}
		b := e.out[4*dst:]
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case F16:
		if raw != nil && e.stored == F16 {
			copy(e.out[2*dst:], raw)
			return nil
		}
		b := e.out[2*dst:]
		for i, v := range vals {
			h := f16Bits(v)
			if isInfF16(h) {
				return fmt.Errorf("value %v at index %d is %w", v, dst+i, ErrOutsideF16)
			}
			binary.LittleEndian.PutUint16(b[2*i:], h)
		}
	case BF16:
		if raw != nil && e.stored == BF16 {
			copy(e.out[2*dst:], raw)
			return nil
		}
		b := e.out[2*dst:]
		for i, v := range vals {
			h := toBF16(v)
			if h&0x7f80 == 0x7f80 {
				return fmt.Errorf("value %v at index %d is outside bfloat16's range", v, dst+i)
			}
			binary.LittleEndian.PutUint16(b[2*i:], h)
		}
	}
	return nil
}

// toBF16 rounds a finite v to bfloat16, to nearest even.
func toBF16(v float32) uint16 {
	u := math.Float32bits(v)
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// encode returns x (finite, in Hugging Face's layout) as little-endian dtype.
func encode(x []float32, dtype DType) ([]byte, error) {
	if dtype.Size() == 0 {
		return nil, fmt.Errorf("dtype %v, want F32, F16 or BF16", dtype)
	}
	e := &encoder{out: make([]byte, len(x)*dtype.Size()), dtype: dtype}
	if err := e.put(0, x, nil); err != nil {
		return nil, err
	}
	return e.out, nil
}

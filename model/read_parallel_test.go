package model

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// f32Source is a source over n float32 values f(i) stored in memory, stored
// (rows, cols) when rows is not 0 (a transposed tensor, as llm.c's).
func f32Source(n, rows, cols int, f func(i int) float32) *source {
	raw := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f(i)))
	}
	return &source{what: "t", r: bytes.NewReader(raw), off: 0, dtype: F32, n: n, rows: rows, cols: cols}
}

// TestStreamAllMatchesStream reads tensors of several sizes, plain and
// transposed, into F16 and F32 with the parallel reader and with one
// stream, and wants the same bytes; and with bad values in several parts,
// the serial reader's error (the first in file order).
func TestStreamAllMatchesStream(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	}
	val := func(i int) float32 { return float32(math.Sin(float64(i)*0.37)) * 3 }
	ctx := context.Background()
	for _, sh := range []struct{ n, rows, cols int }{
		{1, 0, 0}, {chunkValues, 0, 0}, {2*chunkValues + 1, 0, 0}, {7*chunkValues + 123, 0, 0},
		{300 * 777, 300, 777}, {3 * chunkValues, chunkValues / 16 * 3, 16}, {5 * 70000, 5, 70000},
	} {
		for _, dt := range []DType{F16, F32, BF16} {
			s := f32Source(sh.n, sh.rows, sh.cols, val)
			var c Checkpoint
			want := &encoder{out: make([]byte, sh.n*dt.Size()), dtype: dt, stored: F32}
			if err := s.stream(ctx, new(scratch), want.put); err != nil {
				t.Fatal(err)
			}
			got := &encoder{out: make([]byte, sh.n*dt.Size()), dtype: dt, stored: F32}
			if err := c.streamAll(ctx, s, got.put); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.out, want.out) {
				t.Errorf("%v %v: the parallel read differs from the serial one", sh, dt)
			}
		}
	}
	// Bad values: NaN or, read as F16, 1e6, at indices in different parts;
	// the error names the first in file order (for a transposed tensor, the
	// first in the stored order, at its index in the result).
	for _, sh := range []struct{ n, rows, cols int }{{9*chunkValues + 5, 0, 0}, {9 * 65536, 9, 65536}} {
		for _, bad := range [][]int{{8*chunkValues + 3, 5*chunkValues + 7, 2*chunkValues + 1}, {3}, {9*chunkValues + 4}} {
			for _, v := range []float32{float32(math.NaN()), 1e6} {
				if sh.rows != 0 && bad[0] >= sh.n {
					continue
				}
				f := func(i int) float32 {
					for _, b := range bad {
						if i == b {
							return v
						}
					}
					return val(i)
				}
				s := f32Source(sh.n, sh.rows, sh.cols, f)
				var c Checkpoint
				e := &encoder{out: make([]byte, 2*sh.n), dtype: F16, stored: F32}
				err := c.streamAll(ctx, s, e.put)
				first := bad[0]
				for _, b := range bad {
					first = min(first, b)
				}
				idx := first
				if sh.rows != 0 { // stored (rows, cols): element (r, c) is result index c*rows + r
					idx = (first%sh.cols)*sh.rows + first/sh.cols
				}
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("index %d", idx)) {
					t.Errorf("%v, %g at %v: error %v, want one at index %d", sh, v, bad, err, idx)
				}
				if v == 1e6 && !errors.Is(err, ErrOutsideF16) {
					t.Errorf("%v, %g at %v: error %v, want ErrOutsideF16", sh, v, bad, err)
				}
				serr := s.stream(ctx, new(scratch), (&encoder{out: make([]byte, 2*sh.n), dtype: F16, stored: F32}).put)
				if serr == nil || err == nil || serr.Error() != err.Error() {
					t.Errorf("%v, %g at %v: parallel error %v, serial %v", sh, v, bad, err, serr)
				}
			}
		}
	}
}

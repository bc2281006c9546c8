package exectest

import (
	"fmt"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestSubgroupMatrixScalarLowered runs subgroupMatrixScalarAdd, Subtract
// and Multiply, lowered, on f32 and i32 matrices of each role with scalars
// read at run time, against the same operations in Go (float32 steps; int32
// arithmetic, which wraps as WGSL's does).
func TestSubgroupMatrixScalarLowered(t *testing.T) {
	d := newDevice(t, wgpu.FeatureSubgroups)
	const src = `enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> ia: array<i32>;
@group(0) @binding(2) var<storage, read> s: array<f32, 3>;
@group(0) @binding(3) var<storage, read> is: array<i32, 2>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> iout: array<i32>;
@compute @workgroup_size(%d)
fn main() {
	let m = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 4>>(&a, 0u, false, 8u);
	let x = subgroupMatrixScalarMultiply(subgroupMatrixScalarSubtract(subgroupMatrixScalarAdd(m, s[0]), s[1]), s[2]);
	subgroupMatrixStore(&out, 0u, x, false, 8u);
	let l = subgroupMatrixScalarAdd(subgroupMatrixLoad<subgroup_matrix_left<f32, 4, 8>>(&a, 0u, true, 8u), s[2]);
	let p = subgroupMatrixMultiply<f32>(l, subgroupMatrixScalarMultiply(subgroup_matrix_right<f32, 8, 4>(1.0), s[0]));
	subgroupMatrixStore(&out, 32u, p, false, 8u);
	let i = subgroupMatrixLoad<subgroup_matrix_right<i32, 8, 8>>(&ia, 0u, true, 8u);
	let j = subgroupMatrixScalarSubtract(subgroupMatrixScalarAdd(subgroupMatrixScalarMultiply(i, is[0]), is[1]), -5);
	subgroupMatrixStore(&iout, 0u, j, true, 8u);
}
`
	a := make([]float32, 64)
	ia := make([]int32, 64)
	for k := range a {
		a[k] = float32((k*37)%29-14) / 7
		ia[k] = int32(k*k*1103515245 + 12345) // large: the products wrap
	}
	s := []float32{0.3, 1.7, -2.25}
	is := []int32{-3, math.MaxInt32}
	for _, wg := range []int{1, 5, 32} {
		t.Run(fmt.Sprintf("wg%d", wg), func(t *testing.T) {
			res := d.run(t, fmt.Sprintf(src, wg), nil, nil, [3]uint32{1, 1, 1},
				f32s(a...), i32s(ia...), f32s(s...), i32s(is...), f32s(make([]float32, 96)...), i32s(make([]int32, 64)...))
			out, iout := getF32s(res[4]), getI32(res[5])
			for r := range 4 {
				for c := range 8 {
					want := ((a[r*8+c] + s[0]) - s[1]) * s[2]
					if got := out[r*8+c]; got != want {
						t.Errorf("scalar ops on a result matrix: [%d,%d] = %g, want %g", r, c, got, want)
					}
				}
			}
			// l is 8 x 4, column-major from a (element [r, k] at k*8 + r), plus
			// s[2]; the right matrix is 4 x 8 of 1*s[0]; p = l * right.
			for r := range 8 {
				for c := range 8 {
					var want float32
					for k := range 4 {
						want += (a[k*8+r] + s[2]) * s[0]
					}
					if got := out[32+r*8+c]; math.Abs(float64(got-want)) > 1e-5 {
						t.Errorf("scalar ops on left and right matrices: [%d,%d] = %g, want %g", r, c, got, want)
					}
				}
			}
			for k := range 64 { // stored column-major as loaded: element order kept
				want := ia[k]*is[0] + is[1] - (-5)
				if iout[k] != want {
					t.Errorf("scalar ops on an i32 matrix: element %d = %d, want %d", k, iout[k], want)
				}
			}
		})
	}
}

// narrowAt is where component [r, c] of an i8 or u8 matrix lies in an
// array of 32-bit elements: the element and the byte in it, for a
// subgroupMatrixLoad or Store with offset off and stride stride, which
// count array elements (words: the layout-template form) or components
// (the bool form: taken down to multiples of 4).
func narrowAt(r, c int, colMajor, words bool, off, stride int) (elem, byteIdx int) {
	major, minor := r, c
	if colMajor {
		major, minor = c, r
	}
	if !words {
		off, stride = off/4, stride/4
	}
	return off + major*stride + minor/4, minor % 4
}

// sameElems fails t for each element of got that is not want's (the first
// few), naming what.
func sameElems[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) < len(want) {
		t.Errorf("%s: %d elements, want %d", what, len(got), len(want))
		return
	}
	bad := 0
	for k := range want {
		if got[k] != want[k] {
			if bad++; bad <= 5 {
				t.Errorf("%s: element %d = %v, want %v", what, k, got[k], want[k])
			}
		}
	}
}

// getByte and setByte read and replace byte b of words[e].
func getByte(words []uint32, e, b int) uint8 { return uint8(words[e] >> (8 * b)) }

func setByte(words []uint32, e, b int, v uint8) {
	words[e] = words[e]&^(0xff<<(8*b)) | uint32(v)<<(8*b)
}

// TestSubgroupMatrixNarrowLowered runs i8 and u8 matrices, lowered: loads
// and stores in the bool form at offsets and strides (components) that are
// not multiples of 4 (taken down) and in the layout-template form (array
// elements), row- and column-major, products into i32, u32, i8 and u8 results, clamped fills
// and scalars, wrapping arithmetic, and stores into storage and workgroup
// memory of rows that fill their last array element partly. Every stored
// byte must be the Go reference's and every other byte of the output as it
// was, whatever the workgroup size (one invocation, a partial subgroup,
// several subgroups storing the bytes of one element).
func TestSubgroupMatrixNarrowLowered(t *testing.T) {
	d := newDevice(t, wgpu.FeatureSubgroups)
	const i8src = `enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> ib: array<i32>;
@group(0) @binding(1) var<storage, read> sc: array<i32, 3>;
@group(0) @binding(2) var<storage, read_write> prod: array<i32>;
@group(0) @binding(3) var<storage, read_write> ob: array<i32>;
@compute @workgroup_size(%d)
fn main() {
	let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 8, 4>>(&ib, 5u, false, 13u);
	let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 8, 8>, col_major>(&ib, 10u, 3u);
	subgroupMatrixStore(&prod, 0u, subgroupMatrixMultiply<i32>(l, r), false, 8u);
	let acc = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i8, 8, 4>(sc[0]));
	subgroupMatrixStore(&ob, 6u, subgroupMatrixScalarAdd(acc, sc[1]), true, 9u);
	let small = subgroupMatrixLoad<subgroup_matrix_result<i8, 3, 5>>(&ib, 0u, false, 4u);
	subgroupMatrixStore(&ob, 100u, subgroupMatrixScalarMultiply(small, sc[2]), false, 4u);
}
`
	ib := make([]uint32, 64)
	for k := range ib {
		ib[k] = uint32(k)*0x9E3779B1 ^ 0x5bd1e995
	}
	sc := []int32{-300, 77, -2} // the fill is clamped to -128
	sb := func(e, b int) int32 { return int32(int8(getByte(ib, e, b))) }
	var prod [32]int32
	var acc [4][8]int8
	for i := range 4 {
		for j := range 8 {
			var sum int32
			for k := range 8 {
				le, lb := narrowAt(i, k, false, false, 5, 13)
				re, rb := narrowAt(k, j, true, true, 10, 3)
				sum += sb(le, lb) * sb(re, rb)
			}
			prod[i*8+j] = sum
			acc[i][j] = int8(-128+sum) + 77 // wraps as int8
		}
	}
	obInit := make([]uint32, 40)
	for k := range obInit {
		obInit[k] = 0xC3A5_5A3C ^ uint32(k)*0x01010101
	}
	obWant := append([]uint32(nil), obInit...)
	for i := range 4 {
		for j := range 8 {
			e, b := narrowAt(i, j, true, false, 6, 9)
			setByte(obWant, e, b, uint8(acc[i][j]))
		}
	}
	for r := range 5 {
		for c := range 3 {
			le, lb := narrowAt(r, c, false, false, 0, 4)
			e, b := narrowAt(r, c, false, false, 100, 4)
			setByte(obWant, e, b, uint8(int8(sb(le, lb))*-2))
		}
	}
	for _, wg := range []int{1, 7, 64} {
		t.Run(fmt.Sprintf("i8/wg%d", wg), func(t *testing.T) {
			res := d.run(t, fmt.Sprintf(i8src, wg), nil, nil, [3]uint32{1, 1, 1},
				u32s(ib...), i32s(sc...), i32s(make([]int32, 32)...), u32s(obInit...))
			gotProd, gotOB := getI32(res[2]), getU32(res[3])
			sameElems(t, "i8 x i8 -> i32", gotProd, prod[:])
			sameElems(t, "i8 stores, array", gotOB, obWant)
		})
	}

	const u8src = `enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> ub: array<u32>;
@group(0) @binding(1) var<storage, read_write> prod: array<u32>;
@group(0) @binding(2) var<storage, read_write> uout: array<u32>;
var<workgroup> wu: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	wu[li] = 0xA5A5A5A5u ^ li;
	workgroupBarrier();
	let l = subgroupMatrixLoad<subgroup_matrix_left<u8, 8, 8>>(&ub, 3u, true, 10u);
	let r = subgroupMatrixScalarMultiply(subgroupMatrixLoad<subgroup_matrix_right<u8, 8, 8>>(&ub, 64u, false, 8u), 3u);
	let acc = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<u8, 8, 8>(1000u));
	subgroupMatrixStore(&wu, 0u, subgroupMatrixScalarSubtract(acc, 300u), false, 8u);
	let edge = subgroupMatrixLoad<subgroup_matrix_left<u8, 5, 3>>(&ub, 128u, false, 8u);
	subgroupMatrixStore<col_major>(&wu, 33u, edge, 4u);
	subgroupMatrixStore(&prod, 0u, subgroupMatrixMultiply<u32>(l, r), false, 8u);
	workgroupBarrier();
	uout[li] = wu[li];
}
`
	ub := make([]uint32, 48)
	for k := range ub {
		ub[k] = uint32(k+1)*0x85EBCA6B ^ 0xC2B2AE35
	}
	b := func(e, i int) uint32 { return uint32(getByte(ub, e, i)) }
	var uprod [64]uint32
	wuWant := make([]uint32, 64)
	for k := range wuWant {
		wuWant[k] = 0xA5A5A5A5 ^ uint32(k)
	}
	for i := range 8 {
		for j := range 8 {
			var sum uint32
			for k := range 8 {
				le, lb := narrowAt(i, k, true, false, 3, 10)
				re, rb := narrowAt(k, j, false, false, 64, 8)
				sum += b(le, lb) * uint32(uint8(b(re, rb)*3))
			}
			uprod[i*8+j] = sum
			e, bi := narrowAt(i, j, false, false, 0, 8)
			setByte(wuWant, e, bi, uint8(255+sum)-255) // the fill 1000 and the scalar 300 are clamped to 255
		}
	}
	for r := range 3 {
		for c := range 5 {
			le, lb := narrowAt(r, c, false, false, 128, 8)
			e, bi := narrowAt(r, c, true, true, 33, 4)
			setByte(wuWant, e, bi, uint8(b(le, lb)))
		}
	}
	t.Run("u8/workgroup", func(t *testing.T) {
		res := d.run(t, u8src, nil, nil, [3]uint32{1, 1, 1}, u32s(ub...), u32s(make([]uint32, 64)...), u32s(make([]uint32, 64)...))
		gotProd, gotWU := getU32(res[1]), getU32(res[2])
		sameElems(t, "u8 x u8 -> u32", gotProd, uprod[:])
		sameElems(t, "u8 stores to workgroup memory, array", gotWU, wuWant)
	})
}

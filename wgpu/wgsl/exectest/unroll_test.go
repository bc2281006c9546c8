package exectest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// unrollRegisters loops over a function-scope array in every way the
// emitter's unrolling (wgsl's unroll.go, Options.UnrollLoops) must get
// right or leave alone: an override bound, a step of 3 with a let and a var
// declared in the body, an i32 counting down, a u32 whose decrement wraps
// past 0 to end the loop, a continue and a break in a switch that belong to
// inner statements, a break of the loop itself (left a loop), a body that
// copies the counter.
const unrollRegisters = `
override N: u32 = 6;
@group(0) @binding(0) var<storage, read> x: array<f32>;       // 64
@group(0) @binding(1) var<storage, read_write> o: array<f32>; // 17 per invocation

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	var r: array<f32, 16>;
	for (var i = 0u; i < N; i++) { r[i] = x[(li + i) % 64u]; }
	for (var i = 1u; i < 16u; i += 3u) { let t = r[i] + f32(i); var u = t * 2.0; u += 1.0; r[i] = u; }
	var acc = 0.0;
	for (var i = 5; i >= 0; i--) { acc += r[i] * f32(i + 1); }
	for (var i = 3u; i < 64u; i--) { acc += r[i]; }
	for (var i = 0u; i < 4u; i++) {
		for (var j = 0u; j < 3u; j++) {
			if j == i { continue; }
			r[i * 3u + j] += 1.0;
		}
	}
	for (var i = 0u; i < 4u; i++) {
		switch i {
			case 2u: { break; }
			default: { r[i] -= 0.5; }
		}
	}
	for (var i = 0u; i < 8u; i++) { if x[li] > f32(i) * 9.0 { break; } r[i] *= 1.5; }
	for (var i = 0u; i < 4u; i++) { var k = i; k += 1u; r[k] += 0.25; }
	for (var i = 0u; i < 16u; i++) { o[li * 17u + i] = r[i]; }
	o[li * 17u + 16u] = acc;
}`

// unrollRegistersWant is unrollRegisters computed in Go.
func unrollRegistersWant(xs []float32, n int) []float32 {
	out := make([]float32, 0, 17*len(xs))
	for li := range xs {
		var r [16]float32
		for i := range n {
			r[i] = xs[(li+i)%64]
		}
		for i := 1; i < 16; i += 3 {
			r[i] = (r[i]+float32(i))*2 + 1
		}
		var acc float32
		for i := 5; i >= 0; i-- {
			acc += r[i] * float32(i+1)
		}
		for i := 3; i >= 0; i-- {
			acc += r[i]
		}
		for i := range 4 {
			for j := range 3 {
				if j != i {
					r[i*3+j]++
				}
			}
		}
		for i := range 4 {
			if i != 2 {
				r[i] -= 0.5
			}
		}
		for i := range 8 {
			if xs[li] > float32(i)*9 {
				break
			}
			r[i] *= 1.5
		}
		for i := range 4 {
			r[i+1] += 0.25
		}
		out = append(append(out, r[:]...), acc)
	}
	return out
}

// unrollMatrices is a small matmul shaped like the coop kernels: an array
// of result matrices indexed by loop counters over consts and overrides
// (FM x FN of 8 x 8, K in steps of BK and 8), right matrices kept in an
// array, and an epilogue that stores each result matrix through workgroup
// memory between barriers. o = 2 · a (FM*8 x 32) · b (32 x FN*8).
const unrollMatrices = `
enable chromium_experimental_subgroup_matrix;
const FM: u32 = 2u;
const FN: u32 = 2u;
override BK: u32 = 16;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
var<workgroup> cs: array<f32, 64>;

@compute @workgroup_size(16)
fn main(@builtin(local_invocation_index) li: u32) {
	var acc: array<subgroup_matrix_result<f32, 8, 8>, FM * FN>;
	for (var k0 = 0u; k0 < 32u; k0 += BK) {
		for (var kk = 0u; kk < BK; kk += 8u) {
			var rb: array<subgroup_matrix_right<f32, 8, 8>, FN>;
			for (var j = 0u; j < FN; j++) {
				rb[j] = subgroupMatrixLoad<subgroup_matrix_right<f32, 8, 8>>(&b, (k0 + kk) * (FN * 8u) + j * 8u, false, FN * 8u);
			}
			for (var i = 0u; i < FM; i++) {
				let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, i * 8u * 32u + k0 + kk, false, 32u);
				for (var j = 0u; j < FN; j++) {
					acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(l, rb[j], acc[i * FN + j]);
				}
			}
		}
	}
	for (var i = 0u; i < FM; i++) {
		for (var j = 0u; j < FN; j++) {
			subgroupMatrixStore(&cs, 0u, acc[i * FN + j], false, 8u);
			workgroupBarrier();
			for (var e = li; e < 64u; e += 16u) {
				o[(i * 8u + e / 8u) * (FN * 8u) + j * 8u + e % 8u] = 2.0 * cs[e];
			}
			workgroupBarrier();
		}
	}
}`

// loopCount counts a module's OpLoopMerge instructions.
func loopCount(words []uint32) int { return opCount(words, 246) }

// opCount counts a module's instructions of opcode op.
func opCount(words []uint32, op uint32) int {
	n := 0
	for i := 5; i < len(words); {
		size := int(words[i] >> 16)
		if size == 0 {
			break
		}
		if words[i]&0xffff == op {
			n++
		}
		i += size
	}
	return n
}

// TestUnrollLoops runs unrollRegisters and unrollMatrices (lowered
// matrices) as loops and unrolled by the emitter (Options.UnrollLoops, what
// native matrices get), specialized with their overrides: both give Go's
// results exactly (small integers and halves); unrolling leaves loops only
// where it must, and natively only the epilogue's.
func TestUnrollLoops(t *testing.T) {
	loops := func(src string, consts map[string]float64, opt wgsl.Options) int {
		m, err := wgsl.Compile("unroll.wgsl", src, opt)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := m.Specialize("main", consts)
		if err != nil {
			t.Fatal(err)
		}
		return loopCount(sp.SPIRV)
	}
	t.Run("registers", func(t *testing.T) {
		consts := map[string]float64{"N": 7}
		xs := make([]float32, 64)
		for i := range xs {
			xs[i] = float32((i*13 + 5) % 41)
		}
		want := unrollRegistersWant(xs, 7)
		for _, opt := range []wgsl.Options{{}, {UnrollLoops: true}} {
			d := newDevice(t)
			d.opt = opt
			got := getF32(d.run(t, unrollRegisters, consts, nil, [3]uint32{1, 1, 1}, f32s(xs...), make([]byte, 4*len(want)))[1])
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%+v: o[%d] = %v, want %v", opt, i, got[i], want[i])
				}
			}
		}
		// Unrolled, loops remain where the body breaks or continues the loop
		// itself: the loop that breaks, and the inner loop that continues,
		// once in each of its outer loop's 4 copies.
		plain, unrolled := loops(unrollRegisters, consts, wgsl.Options{}), loops(unrollRegisters, consts, wgsl.Options{UnrollLoops: true})
		if plain != 10 || unrolled != 1+4 {
			t.Errorf("%d loops, %d unrolled; want 10 and 5", plain, unrolled)
		}
	})
	t.Run("matrices", func(t *testing.T) {
		const fm, fn = 2, 2
		consts := map[string]float64{"BK": 16}
		a := make([]float32, fm*8*32)
		b := make([]float32, 32*fn*8)
		for i := range a {
			a[i] = float32((i*7+3)%13 - 6)
		}
		for i := range b {
			b[i] = float32((i*5+1)%11 - 5)
		}
		want := make([]float32, fm*8*fn*8)
		for r := range fm * 8 {
			for c := range fn * 8 {
				var s float32
				for k := range 32 {
					s += a[r*32+k] * b[k*fn*8+c]
				}
				want[r*fn*8+c] = 2 * s
			}
		}
		for _, opt := range []wgsl.Options{{}, {UnrollLoops: true}} {
			d := newDevice(t, wgpu.FeatureSubgroups)
			d.opt = opt
			got := getF32(d.run(t, unrollMatrices, consts, nil, [3]uint32{1, 1, 1}, f32s(a...), f32s(b...), make([]byte, 4*len(want)))[2])
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%+v: o[%d] = %v, want %v", opt, i, got[i], want[i])
				}
			}
		}
		// Natively (one instruction per matrix operation) every loop but
		// the epilogue's copy loop is unrolled: that loop once per result
		// matrix.
		if n := loops(unrollMatrices, consts, wgsl.Options{CooperativeMatrix: true}); n != fm*fn {
			t.Errorf("native: %d loops, want %d", n, fm*fn)
		}
	})
}

package exectest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// provedKernel indexes workgroup memory only with indices the compiler's
// range analysis proves in bounds once WG is specialized: the local
// invocation index passed to a helper, a tree reduction whose counter halves,
// a loop counting down, an index from memory behind an early return.
const provedKernel = `
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read> x: array<f32>;        // WG values
@group(0) @binding(1) var<storage, read_write> o: array<f32>;  // WG + 2 + 16
var<workgroup> partial: array<f32, WG>;
var<workgroup> hist: array<f32, 16>;

fn total(li: u32, v: f32) -> f32 {
	partial[li] = v;
	workgroupBarrier();
	for (var s = WG / 2u; s > 0u; s >>= 1u) {
		if li < s { partial[li] += partial[li + s]; }
		workgroupBarrier();
	}
	let r = partial[0];
	workgroupBarrier();
	return r;
}

fn bin(k: u32) {
	if k >= 16u { return; }
	hist[k] += 1.0;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
	let v = x[li];
	partial[li] = v;
	workgroupBarrier();
	o[li] = partial[WG - 1u - li];
	var down = 0.0;
	for (var i = WG; i > 0u; i--) { down += partial[i - 1u]; }
	workgroupBarrier();
	let t = total(li, v);
	if li == 0u {
		for (var j = 0u; j < WG; j++) { bin(u32(x[j]) % 20u); }
		o[WG] = down;
		o[WG + 1u] = t;
		for (var k = 0u; k < 16u; k++) { o[WG + 2u + k] = hist[k]; }
	}
}`

// TestProvedIndices runs provedKernel with its workgroup indices unclamped
// (proved) and with every clamp dropped (NoIndexClamp): both give Go's
// results, and the specialized module clamps only its storage indices.
func TestProvedIndices(t *testing.T) {
	const wg = 32
	consts := map[string]float64{"WG": wg}
	m, err := wgsl.Compile("proved.wgsl", provedKernel, wgsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := m.Specialize("main", consts)
	if err != nil {
		t.Fatal(err)
	}
	// x[li], x[j], o[li], o[WG + 2u + k], and o[WG] and o[WG + 1u] (constant
	// once specialized, still clamped): the runtime-sized arrays' indices.
	if n := countUMin(sp.SPIRV); n != 6 {
		t.Errorf("%d UMin clamps, want 6 (the storage indices only)", n)
	}
	xs := make([]float32, wg)
	for i := range xs {
		xs[i] = float32((i*7 + 3) % 23) // small integers: every sum is exact
	}
	want := make([]float32, wg+2+16)
	var sum float32
	for i := range wg {
		want[i] = xs[wg-1-i]
		sum += xs[i]
		if k := int(xs[i]) % 20; k < 16 {
			want[wg+2+k]++
		}
	}
	want[wg], want[wg+1] = sum, sum
	for _, opt := range []wgsl.Options{{}, {NoIndexClamp: true}} {
		d := newDevice(t)
		d.opt = opt
		got := getF32(d.run(t, provedKernel, consts, nil, [3]uint32{1, 1, 1}, f32s(xs...), make([]byte, 4*len(want)))[1])
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: o[%d] = %v, want %v", opt, i, got[i], want[i])
			}
		}
	}
}

// countUMin counts the GLSL.std.450 UMin instructions of a module: the
// emitter's index clamps, here.
func countUMin(words []uint32) int {
	const opExtInst, glslUMin = 12, 38
	n := 0
	for i := 5; i < len(words); {
		op, size := words[i]&0xffff, int(words[i]>>16)
		if size == 0 {
			break
		}
		if op == opExtInst && size >= 5 && words[i+4] == glslUMin {
			n++
		}
		i += size
	}
	return n
}

// edgeKernel's workgroup indices are proved only through WGSL's rules for
// the edge cases of u32 arithmetic, which the values from memory hit: a
// remainder by zero is 0, a quotient by zero the dividend, a shift amount is
// taken modulo 32, and a counter that decrements past zero wraps to a value
// its loop condition stops.
const edgeKernel = `
@group(0) @binding(0) var<storage, read> x: array<u32>;        // 0, 33
@group(0) @binding(1) var<storage, read_write> o: array<f32>;  // 4 per invocation
var<workgroup> w: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	w[li] = f32(li);
	workgroupBarrier();
	let zero = x[0];
	let s = x[1];
	o[li * 4u] = w[(li + 64u) % (zero % 65u)];     // % 0: 0
	o[li * 4u + 1u] = w[li / zero];               // / 0: li
	o[li * 4u + 2u] = w[li >> (s % 64u)];         // >> 33: >> 1
	var acc = 0.0;
	for (var i = 3u; i < 64u; i--) { acc += w[i]; } // 3, 2, 1, 0, then 0xffffffff ends it
	o[li * 4u + 3u] = acc;
}`

// TestProvedEdgeIndices runs edgeKernel with its workgroup indices proved
// (unclamped) and with every clamp dropped: both give Go's results, so the
// emitter computes the edge cases as the analysis assumes.
func TestProvedEdgeIndices(t *testing.T) {
	m, err := wgsl.Compile("edge.wgsl", edgeKernel, wgsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The four o[li * 4u + k] and x[1] only (x[0] needs none): every w index
	// is proved.
	if n := countUMin(m.SPIRV); n != 5 {
		t.Errorf("%d UMin clamps, want 5 (the storage indices only)", n)
	}
	want := make([]float32, 4*64)
	for li := range 64 {
		want[4*li], want[4*li+1], want[4*li+2], want[4*li+3] = 0, float32(li), float32(li>>1), 6
	}
	for _, opt := range []wgsl.Options{{}, {NoIndexClamp: true}} {
		d := newDevice(t)
		d.opt = opt
		got := getF32(d.run(t, edgeKernel, nil, nil, [3]uint32{1, 1, 1}, u32s(0, 33), make([]byte, 4*len(want)))[1])
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: o[%d] = %v, want %v", opt, i, got[i], want[i])
			}
		}
	}
}

package exectest

import (
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// Structs and arrays in every address space, bounds clamping, overrides of
// every scalar type and the remaining atomics and subgroup operations.

func TestStructsAndArraysEverywhere(t *testing.T) {
	d := newDevice(t)
	src := `
struct Item { pos: vec3<f32>, id: u32, w: array<f32, 2> }
struct Buf { count: atomic<u32>, items: array<Item> }
@group(0) @binding(0) var<storage, read> src: array<Item>;
@group(0) @binding(1) var<storage, read_write> dst: Buf;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
var<private> pitems: array<Item, 2>;
var<workgroup> witems: array<Item, 4>;

fn weight(it: Item) -> f32 { return it.pos.x + it.pos.y * 10.0 + it.pos.z * 100.0 + it.w[0] + it.w[1] * 1000.0; }

@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) li: u32) {
	let it = src[li];
	witems[li] = it;
	workgroupBarrier();
	var local = witems[(li + 1u) % 4u];
	local.id += 100u;
	pitems[li % 2u] = local;
	dst.items[li] = pitems[li % 2u];
	atomicAdd(&dst.count, local.id);
	o[li] = weight(local) + f32(arrayLength(&dst.items));
	var fixed = array<u32, 3>(7u, 8u, 9u);
	o[4u + li] = f32(fixed[li]);   // li = 3 is clamped to the last element
}`
	type item struct {
		pos [3]float32
		id  uint32
		w   [2]float32
	}
	items := []item{{[3]float32{1, 2, 3}, 1, [2]float32{0.5, 1}}, {[3]float32{4, 5, 6}, 2, [2]float32{1.5, 2}},
		{[3]float32{7, 8, 9}, 3, [2]float32{2.5, 3}}, {[3]float32{1, 0, 1}, 4, [2]float32{3.5, 4}}}
	// Item layout: pos@0 (12 bytes), id@12, w@16 (stride 4) -> size 24, align 16 -> stride 32.
	buf := make([]byte, 32*len(items))
	for i, it := range items {
		copy(buf[32*i:], f32s(it.pos[0], it.pos[1], it.pos[2]))
		copy(buf[32*i+12:], u32s(it.id))
		copy(buf[32*i+16:], f32s(it.w[0], it.w[1]))
	}
	// Buf layout: count@0, items@16 (align 16), 4 items.
	out := d.run(t, src, nil, nil, one, buf, make([]byte, 16+32*4), make([]byte, 4*8))
	dst, o := out[1], getF32(out[2])
	var count uint32
	for li := range 4 {
		it := items[(li+1)%4]
		it.id += 100
		count += it.id
		w := it.pos[0] + it.pos[1]*10 + it.pos[2]*100 + it.w[0] + it.w[1]*1000 + 4
		if o[li] != w {
			t.Errorf("o[%d] = %g, want %g", li, o[li], w)
		}
		got := dst[16+32*li:]
		if gp := getF32(got[:12]); gp[0] != it.pos[0] || gp[2] != it.pos[2] || getU32(got[12:16])[0] != it.id || getF32(got[20:24])[0] != it.w[1] {
			t.Errorf("dst.items[%d] = % x", li, got[:24])
		}
		if want := float32([]uint32{7, 8, 9, 9}[li]); o[4+li] != want {
			t.Errorf("clamped fixed[%d] = %g, want %g", li, o[4+li], want)
		}
	}
	if c := getU32(dst[:4])[0]; c != count {
		t.Errorf("count %d, want %d", c, count)
	}
}

func TestOverrideTypes(t *testing.T) {
	d := newDevice(t)
	src := `
override scale: f32 = 1.0;
override offset: i32 = 0;
override flag: bool = false;
@id(9) override count: u32;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1)
fn main() {
	o[0] = scale * 2.0;
	o[1] = f32(offset - 1);
	o[2] = select(0.0, 1.0, flag);
	o[3] = f32(count);
}`
	out := d.run(t, src, map[string]float64{"scale": 1.25, "offset": -4, "flag": 1, "9": 12}, nil, one, make([]byte, 16))
	if got, want := getF32(out[0]), []float32{2.5, -5, 1, 12}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("got %v, want %v", got, want)
	}
	out = d.run(t, src, map[string]float64{"count": 3}, nil, one, make([]byte, 16))
	if got, want := getF32(out[0]), []float32{2, -1, 0, 3}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("defaults: got %v, want %v", got, want)
	}
}

func TestAtomicsAll(t *testing.T) {
	d := newDevice(t)
	src := `
@group(0) @binding(0) var<storage, read_write> a: array<atomic<i32>, 8>;
@group(0) @binding(1) var<storage, read_write> won: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	let v = i32(li);
	atomicAdd(&a[0], v);
	atomicSub(&a[1], v);
	atomicMax(&a[2], v - 20);
	atomicMin(&a[3], v - 20);
	atomicOr(&a[4], 1 << (li % 31u));
	atomicXor(&a[5], v);
	atomicAnd(&a[6], ~(1 << (li % 31u)));
	let r = atomicCompareExchangeWeak(&a[7], 0, v + 1);
	won[li] = select(0u, 1u, r.exchanged);
}`
	init := i32s(0, 0, -100, 100, 0, 0, -1, 0)
	out := d.run(t, src, nil, nil, one, init, make([]byte, 4*64))
	a, won := getI32(out[0]), getU32(out[1])
	var sum, xor, or int32
	and := int32(-1)
	for li := range int32(64) {
		sum += li
		xor ^= li
		or |= 1 << (li % 31)
		and &^= 1 << (li % 31)
	}
	want := []int32{sum, -sum, 43, -20, or, xor, and}
	for i, w := range want {
		if a[i] != w {
			t.Errorf("a[%d] = %d, want %d", i, a[i], w)
		}
	}
	winners := 0
	for li, w := range won {
		if w == 1 {
			winners++
			if a[7] != int32(li)+1 {
				t.Errorf("winner %d but a[7] = %d", li, a[7])
			}
		}
	}
	if winners != 1 {
		t.Errorf("%d compare-exchange winners, want 1", winners)
	}
}

func TestSubgroupOps(t *testing.T) {
	d := newDevice(t, wgpu.FeatureSubgroups)
	src := `enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(32)
fn main(@builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) n: u32, @builtin(local_invocation_index) li: u32) {
	let base = (li / n) * n;           // first invocation of this subgroup
	let k = li * 8u;
	o[k] = subgroupAdd(sid);                    // 0 + 1 + ... + n-1
	o[k + 1u] = subgroupExclusiveAdd(1u);        // = sid
	o[k + 2u] = subgroupMax(li) - base;          // n - 1
	o[k + 3u] = subgroupBroadcastFirst(li) - base; // 0
	o[k + 4u] = subgroupShuffleXor(sid, 1u);     // sid ^ 1
	o[k + 5u] = subgroupBroadcast(sid, 1u);      // 1
	o[k + 6u] = countOneBits(subgroupBallot(sid % 2u == 0u).x); // n / 2 for n <= 32
	o[k + 7u] = select(0u, 1u, subgroupAll(sid < n) && !subgroupAny(sid > n));
}`
	out := d.run(t, src, nil, nil, one, make([]byte, 4*8*32))
	o := getU32(out[0])
	n := o[2] + 1 // subgroupMax(li) - base = n - 1
	if n < 2 || n > 32 || n&(n-1) != 0 {
		t.Fatalf("subgroup size %d", n)
	}
	for li := range uint32(32) {
		sid := li % n
		want := []uint32{n * (n - 1) / 2, sid, n - 1, 0, sid ^ 1, 1, n / 2, 1}
		for k, w := range want {
			if g := o[li*8+uint32(k)]; g != w {
				t.Errorf("invocation %d (subgroup size %d) op %d: got %d, want %d", li, n, k, g, w)
			}
		}
	}
}

func TestDerivedOverridesAndWorkgroupSize(t *testing.T) {
	d := newDevice(t)
	src := `
override BM: u32 = 64;
override WX: u32 = 16;
override TM = BM / WX;          // derived: follows BM and WX
override ROWS: i32 = 2;
override COLS: i32 = 4;
var<workgroup> tile: array<u32, BM * TM>;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(COLS, ROWS)
fn main(@builtin(local_invocation_index) li: u32, @builtin(local_invocation_id) lid: vec3<u32>) {
	tile[li] = li + 1u;
	workgroupBarrier();
	var s = 0u;
	for (var i = 0u; i < BM * TM; i++) { s += tile[i]; }   // untouched cells are zero
	o[li] = s * 1000u + TM * 10u + lid.y;
}`
	out := d.run(t, src, map[string]float64{"BM": 8, "WX": 4, "ROWS": 3, "COLS": 2}, nil, one, make([]byte, 4*8))
	got := getU32(out[0])
	const n = 6 // 2 x 3 invocations
	sum := uint32(n * (n + 1) / 2)
	for li := range uint32(n) {
		want := sum*1000 + 2*10 + li/2
		if got[li] != want {
			t.Errorf("o[%d] = %d, want %d", li, got[li], want)
		}
	}
	if got[n] != 0 || got[n+1] != 0 {
		t.Errorf("invocations beyond the 2x3 workgroup ran: %v", got)
	}
}

// TestWorkgroupZeroShared checks that every kind of workgroup memory starts
// at zero in every workgroup, now that the invocations share the zeroing:
// each workgroup counts the nonzero cells it finds, then fills every cell
// with garbage that a later workgroup on the same core would see if any
// element were left out (lavapipe reuses the memory). The workgroup has 15
// invocations (override dimensions), fewer than most arrays' elements and
// not dividing them.
func TestWorkgroupZeroShared(t *testing.T) {
	d := newDevice(t)
	src := `
override NA: u32 = 100;
override WX: u32 = 4;
struct Small { a: u32, b: vec3<u32> }
struct Big { x: u32, arr: array<vec2<u32>, 40>, y: u32 }
var<workgroup> flat: array<u32, NA>;
var<workgroup> nested: array<array<u32, 3>, 37>;
var<workgroup> big: Big;
var<workgroup> smalls: array<Small, 20>;
var<workgroup> tiny: array<u32, 5>;
var<workgroup> one: u32;
var<workgroup> hits: atomic<u32>;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(WX, 3)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
	if li == 0u {
		var n = 0u;
		for (var i = 0u; i < NA; i++) { n += select(0u, 1u, flat[i] != 0u); }
		for (var i = 0u; i < 37u; i++) {
			for (var j = 0u; j < 3u; j++) { n += select(0u, 10u, nested[i][j] != 0u); }
		}
		n += select(0u, 100u, big.x != 0u || big.y != 0u);
		for (var i = 0u; i < 40u; i++) { n += select(0u, 100u, any(big.arr[i] != vec2<u32>(0u))); }
		for (var i = 0u; i < 20u; i++) { n += select(0u, 1000u, smalls[i].a != 0u || any(smalls[i].b != vec3<u32>(0u))); }
		for (var i = 0u; i < 5u; i++) { n += select(0u, 10000u, tiny[i] != 0u); }
		n += select(0u, 100000u, one != 0u);
		n += select(0u, 1000000u, atomicLoad(&hits) != 0u);
		o[wg.x] = n;
	}
	workgroupBarrier();
	let g = wg.x + 7u;
	if li == 0u {
		for (var i = 0u; i < NA; i++) { flat[i] = g; }
		for (var i = 0u; i < 37u; i++) { nested[i] = array<u32, 3>(g, g, g); }
		big.x = g;
		big.y = g;
		for (var i = 0u; i < 40u; i++) { big.arr[i] = vec2<u32>(g); }
		for (var i = 0u; i < 20u; i++) { smalls[i] = Small(g, vec3<u32>(g)); }
		for (var i = 0u; i < 5u; i++) { tiny[i] = g; }
		one = g;
	}
	atomicAdd(&hits, 1u);
}`
	const groups = 8
	out := d.run(t, src, map[string]float64{"NA": 101, "WX": 5}, nil, [3]uint32{groups, 1, 1}, make([]byte, 4*groups))
	for g, n := range getU32(out[0]) {
		if n != 0 {
			t.Errorf("workgroup %d found nonzero workgroup memory at its start: %d (digits: flat, nested, big, smalls, tiny, one, atomic)", g, n)
		}
	}
}

// TestWorkgroupPoison checks WorkgroupPoison's start values, read back raw
// from every kind of workgroup memory (override-sized, nested and small
// arrays, a large struct, a vector, a matrix, an atomic, a bool, small
// structs holding an atomic), and that
// WorkgroupUninitialized leaves out the stores and their barrier.
func TestWorkgroupPoison(t *testing.T) {
	d := newDevice(t)
	d.opt = wgsl.Options{WorkgroupInit: wgsl.WorkgroupPoison}
	src := `
override NA: u32 = 100;
struct Big { x: i32, arr: array<vec2<f32>, 40>, y: u32 }
struct Counted { n: atomic<i32>, x: f32 }
var<workgroup> counted: array<Counted, 3>;
var<workgroup> flat: array<f32, NA>;
var<workgroup> nested: array<array<u32, 3>, 37>;
var<workgroup> big: Big;
var<workgroup> tiny: array<i32, 5>;
var<workgroup> v: vec3<f32>;
var<workgroup> mat: mat2x2<f32>;
var<workgroup> flag: bool;
var<workgroup> hits: atomic<u32>;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(7)
fn main(@builtin(local_invocation_index) li: u32) {
	if li != 0u { return; }
	o[0] = bitcast<u32>(flat[0]);
	o[1] = bitcast<u32>(flat[NA - 1u]);
	o[2] = nested[36][2];
	o[3] = bitcast<u32>(big.x);
	o[4] = bitcast<u32>(big.arr[39].y);
	o[5] = big.y;
	o[6] = bitcast<u32>(tiny[4]);
	o[7] = bitcast<u32>(v.z);
	o[8] = bitcast<u32>(mat[1][0]);
	o[9] = select(0u, 1u, flag);
	o[10] = atomicLoad(&hits);
	o[11] = bitcast<u32>(atomicLoad(&counted[2].n));
	o[12] = bitcast<u32>(counted[1].x);
}`
	out := getU32(d.run(t, src, map[string]float64{"NA": 101}, nil, one, make([]byte, 4*13))[0])
	isNaN := func(b uint32) bool { return math.IsNaN(float64(math.Float32frombits(b))) }
	for i, ok := range []bool{isNaN(out[0]), isNaN(out[1]), out[2] == math.MaxUint32, out[3] == math.MaxUint32,
		isNaN(out[4]), out[5] == math.MaxUint32, out[6] == math.MaxUint32, isNaN(out[7]), isNaN(out[8]), out[9] == 1,
		out[10] == math.MaxUint32, out[11] == math.MaxUint32, isNaN(out[12])} {
		if !ok {
			t.Errorf("o[%d] = %#x, not the poison value", i, out[i])
		}
	}

	// Uninitialized: no stores into workgroup memory, no barrier.
	for mode, want := range map[wgsl.WorkgroupInit]bool{wgsl.WorkgroupZero: true, wgsl.WorkgroupUninitialized: false} {
		m, err := wgsl.Compile("u.wgsl", src, wgsl.Options{WorkgroupInit: mode})
		if err != nil {
			t.Fatal(err)
		}
		sp, err := m.Specialize("main", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := opCount(sp.SPIRV, 224) > 0; got != want { // OpControlBarrier
			t.Errorf("mode %d: barrier %v, want %v", mode, got, want)
		}
	}
}

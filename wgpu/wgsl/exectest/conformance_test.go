package exectest

import (
	"math"
	"testing"
)

var one = [3]uint32{1, 1, 1}

func TestIntegerArithmetic(t *testing.T) {
	d := newDevice(t)
	as := []int32{7, -7, 7, math.MinInt32, 5, -1, 123456789, math.MaxInt32, 0, -100}
	bs := []int32{2, 2, 0, -1, -3, 40, 1000, 1, 0, 33}
	src := `
@group(0) @binding(0) var<storage, read> a: array<i32>;
@group(0) @binding(1) var<storage, read> b: array<i32>;
@group(0) @binding(2) var<storage, read_write> o: array<i32>;   // 10 results per pair
@group(0) @binding(3) var<storage, read_write> ou: array<u32>;  // 6 u32 results per pair
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) w: vec3<u32>) {
	let i = w.x;
	let x = a[i]; let y = b[i];
	let k = i * 10u;
	o[k] = x + y; o[k+1] = x - y; o[k+2] = x * y; o[k+3] = x / y; o[k+4] = x % y;
	o[k+5] = x << u32(y); o[k+6] = x >> u32(y); o[k+7] = x & y; o[k+8] = x | y; o[k+9] = x ^ ~y;
	let ux = bitcast<u32>(x); let uy = bitcast<u32>(y);
	let j = i * 6u;
	ou[j] = ux / uy; ou[j+1] = ux % uy; ou[j+2] = ux >> uy; ou[j+3] = ux * uy; ou[j+4] = max(ux, uy); ou[j+5] = u32(min(x, y) < 0);
}`
	n := len(as)
	out := d.run(t, src, nil, nil, [3]uint32{uint32(n), 1, 1}, i32s(as...), i32s(bs...), make([]byte, 4*10*n), make([]byte, 4*6*n))
	got, gotU := getI32(out[2]), getU32(out[3])
	for i := range n {
		x, y := as[i], bs[i]
		div, rem := x, int32(0)
		if y != 0 && !(x == math.MinInt32 && y == -1) {
			div, rem = x/y, x%y
		}
		s := uint32(y) & 31
		want := []int32{x + y, x - y, x * y, div, rem, x << s, x >> s, x & y, x | y, x ^ ^y}
		for k, w := range want {
			if got[i*10+k] != w {
				t.Errorf("pair %d (%d, %d) op %d: got %d, want %d", i, x, y, k, got[i*10+k], w)
			}
		}
		ux, uy := uint32(x), uint32(y)
		udiv, urem := ux, uint32(0)
		if uy != 0 {
			udiv, urem = ux/uy, ux%uy
		}
		lt := uint32(0)
		if min(x, y) < 0 {
			lt = 1
		}
		wantU := []uint32{udiv, urem, ux >> (uy & 31), ux * uy, max(ux, uy), lt}
		for k, w := range wantU {
			if gotU[i*6+k] != w {
				t.Errorf("pair %d (%d, %d) u32 op %d: got %d, want %d", i, ux, uy, k, gotU[i*6+k], w)
			}
		}
	}
}

func TestFloatAndConversions(t *testing.T) {
	d := newDevice(t)
	xs := []float32{0.5, -2.25, 3, 1e10, -1e10, 100.75, -0.0, 7.5e-3}
	src := `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> oi: array<i32>;
@group(0) @binding(3) var<storage, read_write> ou: array<u32>;
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) i: u32) {
	let v = x[i];
	o[i * 4u] = v * 2.0 + 1.0;
	o[i * 4u + 1u] = v / 4.0 - v % 3.0;
	o[i * 4u + 2u] = select(0.0, sqrt(abs(v)), abs(v) < 1e9) + f32(i32(v > 1.0));
	o[i * 4u + 3u] = floor(v) + ceil(v) + trunc(v);
	oi[i] = i32(v);
	ou[i] = u32(v);
}`
	n := len(xs)
	out := d.run(t, src, nil, nil, one, f32s(xs...), make([]byte, 16*n), make([]byte, 4*n), make([]byte, 4*n))
	of, oi, ou := getF32(out[1]), getI32(out[2]), getU32(out[3])
	for i, v := range xs {
		sq := float32(0)
		if abs32(v) < 1e9 {
			sq = float32(math.Sqrt(float64(abs32(v))))
		}
		if v > 1 {
			sq++
		}
		want := []float32{v*2 + 1, v/4 - float32(math.Mod(float64(v), 3)),
			sq, float32(math.Floor(float64(v)) + math.Ceil(float64(v)) + math.Trunc(float64(v)))}
		for k, w := range want {
			if g := of[i*4+k]; math.Abs(float64(g-w)) > 1e-5*math.Max(1, math.Abs(float64(w))) {
				t.Errorf("x=%g op %d: got %g, want %g", v, k, g, w)
			}
		}
		// The spec saturates to the integer closest to trunc(v) that f32 also
		// represents: 2147483520 and 4294967040 above the range.
		wi := int32(math.Max(math.Min(math.Trunc(float64(v)), 2147483520), math.MinInt32))
		wu := uint32(math.Max(math.Min(math.Trunc(float64(v)), 4294967040), 0))
		if oi[i] != wi || ou[i] != wu {
			t.Errorf("x=%g: i32 %d (want %d), u32 %d (want %d)", v, oi[i], wi, ou[i], wu)
		}
	}
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

func TestControlFlowAndFunctions(t *testing.T) {
	d := newDevice(t)
	src := `
struct Acc { sum: i32, count: u32, hist: array<u32, 4> }
var<private> calls: u32;

fn collatz(n0: u32) -> u32 {
	calls += 1u;
	var n = n0; var steps = 0u;
	loop {
		if n == 1u { break; }
		if n % 2u == 0u { n /= 2u; } else { n = 3u * n + 1u; }
		continuing { steps++; break if steps > 1000u; }
	}
	return steps;
}

fn accumulate(p: ptr<function, Acc>, v: i32) {
	(*p).sum += v;
	(*p).count++;
	(*p).hist[u32(v) % 4u] += 1u;
}

@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1)
fn main() {
	var acc: Acc;
	for (var i = 0; i < 20; i++) {
		if i % 3 == 0 { continue; }
		if i > 15 { break; }
		var j = 0;
		while j < i { j += 4; if j == 8 { continue; } accumulate(&acc, j); }
	}
	o[0] = u32(acc.sum); o[1] = acc.count;
	o[2] = acc.hist[0]; o[3] = acc.hist[1]; o[4] = acc.hist[2]; o[5] = acc.hist[3];
	o[6] = collatz(27u); o[7] = collatz(97u) + calls;
	let arr = array<u32, 5>(10u, 20u, 30u, 40u, 50u);
	var k = o[8];
	o[8] = arr[k + 2u] + select(1u, 2u, (k == 0u && arr[1] == 20u) || k > 100u);
}`
	out := d.run(t, src, nil, nil, one, make([]byte, 4*9))
	got := getU32(out[0])
	var sum int32
	var count uint32
	var hist [4]uint32
	for i := int32(0); i < 20; i++ {
		if i%3 == 0 {
			continue
		}
		if i > 15 {
			break
		}
		for j := int32(0); j < i; {
			j += 4
			if j == 8 {
				continue
			}
			sum += j
			count++
			hist[uint32(j)%4]++
		}
	}
	collatz := func(n uint32) uint32 {
		s := uint32(0)
		for n != 1 {
			if n%2 == 0 {
				n /= 2
			} else {
				n = 3*n + 1
			}
			s++
		}
		return s
	}
	want := []uint32{uint32(sum), count, hist[0], hist[1], hist[2], hist[3], collatz(27), collatz(97) + 2, 30 + 2}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("o[%d] = %d, want %d", i, got[i], want[i])
		}
	}
}

func TestWorkgroupReductionAndAtomics(t *testing.T) {
	d := newDevice(t)
	src := `
override WG: u32 = 64;
var<workgroup> part: array<u32, WG>;
var<workgroup> hits: atomic<u32>;
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read_write> total: atomic<u32>;
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
	part[li] = x[wg.x * WG + li];
	atomicAdd(&hits, 1u);
	workgroupBarrier();
	for (var s = WG / 2u; s > 0u; s /= 2u) {
		if li < s { part[li] += part[li + s]; }
		workgroupBarrier();
	}
	if li == 0u {
		sums[wg.x] = part[0] + 1000000u * atomicLoad(&hits);
		atomicAdd(&total, part[0]);
	}
}`
	const wg, groups = 32, 5
	xs := make([]uint32, wg*groups)
	for i := range xs {
		xs[i] = uint32(i*i%97 + 1)
	}
	out := d.run(t, src, map[string]float64{"WG": wg}, nil, [3]uint32{groups, 1, 1}, u32s(xs...), make([]byte, 4*groups), make([]byte, 4))
	sums := getU32(out[1])
	var total uint32
	for g := range groups {
		var s uint32
		for i := range wg {
			s += xs[g*wg+i]
		}
		total += s
		if want := s + 1000000*wg; sums[g] != want {
			t.Errorf("group %d: got %d, want %d", g, sums[g], want)
		}
	}
	if got := getU32(out[2])[0]; got != total {
		t.Errorf("total %d, want %d", got, total)
	}
}

func TestSwitch(t *testing.T) {
	d := newDevice(t)
	src := `
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
fn classify(x: i32) -> u32 {
	switch x {
		case 0: { return 10u; }
		case 1, 2: { return 20u; }
		case -5, default: { return 99u; }
	}
}
@compute @workgroup_size(1)
fn main() {
	var s = 0u;
	for (var i = 0u; i < 10u; i++) {
		switch i % 4u {
			case 0u: { s += 1u; }
			case 1u, 2u { if i > 4u { break; } s += 10u; }
			case 3u, default: { continue; }
		}
		s += 100u;
	}
	o[0] = s;
	o[1] = classify(0) + classify(2) * 100u + classify(-5) * 10000u + classify(7) * 1000000u;
}`
	out := d.run(t, src, nil, nil, one, make([]byte, 8))
	var s uint32
	for i := uint32(0); i < 10; i++ {
		switch i % 4 {
		case 0:
			s++
		case 1, 2:
			if i > 4 {
				s += 100
				continue
			}
			s += 10
		case 3:
			continue
		}
		s += 100
	}
	got := getU32(out[0])
	if got[0] != s || got[1] != 10+20*100+99*10000+99*1000000 {
		t.Errorf("got %v, want [%d %d]", got, s, 10+20*100+99*10000+99*1000000)
	}
}

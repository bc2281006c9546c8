package wgsl

import (
	"fmt"
	"strings"
	"testing"
)

// TestIndexRanges: the emitter leaves out the clamp of an index into a
// fixed-size array only where the range analysis proves it in bounds, and
// keeps it wherever the index can reach the length: each case is a kernel
// whose workgroup array w (64 elements) is indexed with run-time indices
// (pre: helper functions the case calls). The clamped cases try to fool the
// analysis: an index that can leave w must keep its clamp.
func TestIndexRanges(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		clamped bool
		own     int    // UMins the program asks for (min)
		pre     string // module-scope declarations the body uses
	}{
		{"invocation index", `o[0] = w[li];`, false, 0, ""},
		{"loop counter below a constant", `for (var i = 0u; i < 16u; i++) { o[0] += w[i * 4u + li % 4u]; }`, false, 0, ""},
		{"loop counter <=", `for (var i = 0u; i <= 15u; i += 2u) { o[0] += w[i * 4u + 3u]; }`, false, 0, ""},
		{"lets and constants", `let a = li / 8u; let b = (li % 8u) * 8u; const k = 0u; o[0] = w[a + b + k];`, false, 0, ""},
		{"nested loops", `for (var i = 0u; i < 4u; i++) { for (var j = 0u; j < 16u; j++) { o[0] += w[i * 16u + j]; } }`, false, 0, ""},
		{"min", `o[0] = w[min(u32(o[1]), 63u)];`, false, 1, ""},
		{"select", `o[0] = w[select(3u, li, o[1] > 0.0)];`, false, 0, ""},
		{"remainder of anything", `o[0] = w[u32(o[1]) % 64u];`, false, 0, ""},
		{"mask of anything", `o[0] = w[u32(o[1]) & 63u];`, false, 0, ""},
		{"mask too wide", `o[0] = w[u32(o[1]) & 64u];`, true, 0, ""},
		{"select of anything", `o[0] = w[select(3u, u32(o[2]), o[1] > 0.0)];`, true, 0, ""},
		{"subtraction that cannot wrap", `o[0] = w[63u - li];`, false, 0, ""},
		{"double-buffer offset", `for (var s = 0u; s < u32(o[0]); s++) { let cur = (s % 2u) * 32u; for (var k = 0u; k < 32u; k++) { o[0] += w[cur + k]; } }`, false, 0, ""},

		{"past the end", `o[0] = w[li + 1u];`, true, 0, ""},
		{"loop bound off by one", `for (var i = 0u; i <= 16u; i++) { o[0] += w[i * 4u]; }`, true, 0, ""},
		{"counter written in the body", `for (var i = 0u; i < 16u; i++) { i += 1u; o[0] += w[i * 4u]; }`, true, 0, ""},
		{"counter incremented in the body", `for (var i = 0u; i < 63u; i++) { i++; o[0] += w[i]; }`, true, 0, ""},
		{"counter's address taken", `for (var i = 0u; i < 16u; i++) { let p = &i; *p = 99u; o[0] += w[i]; }`, true, 0, ""},
		{"counter of a loop declared outside", `var i = 0u; for (; i < 16u; i++) { o[0] += w[i]; }`, true, 0, ""},
		{"bound from memory", `for (var i = 0u; i < u32(o[0]); i++) { o[0] += w[i]; }`, true, 0, ""},
		{"wrap-around below zero", `for (var i = 0u; i < 16u; i++) { o[0] += w[i - 1u]; }`, true, 0, ""},
		{"multiplication past the end", `o[0] = w[li * 2u];`, true, 0, ""},
		{"multiplication that wraps", `o[0] = w[(li * 4294967295u) / 33554432u];`, true, 0, ""},
		{"any u32 divided to fit", `o[0] = w[(li * 4294967295u) / 67108864u];`, false, 0, ""},
		{"addition that wraps", `o[0] = w[(li + 4294967295u) % 4294967295u];`, true, 0, ""},
		{"index from memory", `o[0] = w[u32(o[0])];`, true, 0, ""},
		{"var assigned", `var j = li; j = j + 1u; o[0] = w[j];`, true, 0, ""},
		{"while loop", `var i = 0u; while i < 16u { o[0] += w[i]; i++; }`, true, 0, ""},
		{"signed index", `o[0] = w[i32(li)];`, true, 0, ""},
		{"condition not on the counter", `for (var i = 0u; li < 16u; i++) { o[0] += w[i]; if i > 100u { break; } }`, true, 0, ""},
		{"counter shadowed by a let", `for (var i = 0u; i < 16u; i++) { let i = li + 1u; o[0] += w[i]; }`, true, 0, ""},

		// Conditions narrow lets, parameters and counters.
		{"guarded let", `let j = u32(o[1]); if j < 64u { o[0] = w[j]; }`, false, 0, ""},
		{"early return", `let j = u32(o[1]); if j >= 64u { return; } o[0] = w[j];`, false, 0, ""},
		{"early continue", `for (var k = 0u; k < 4u; k++) { let j = u32(o[k]); if j > 63u { continue; } o[0] += w[j]; }`, false, 0, ""},
		{"else branch", `let j = u32(o[1]); if j >= 64u { o[0] = 1.0; } else { o[0] = w[j]; }`, false, 0, ""},
		{"guard in the else", `let j = u32(o[1]); if j < 64u { o[0] = 1.0; } else { return; } o[0] = w[j];`, false, 0, ""},
		{"right operand of &&", `if li < 32u && w[li + 32u] > 0.0 { o[0] = 1.0; }`, false, 0, ""},
		{"right operand of ||", `if li >= 32u || w[li + 32u] > 0.0 { o[0] = 1.0; }`, false, 0, ""},
		{"negated guard", `let j = u32(o[1]); if !(j >= 64u) { o[0] = w[j]; }`, false, 0, ""},
		{"bound on the left", `let j = u32(o[1]); if 64u > j { o[0] = w[j]; }`, false, 0, ""},
		{"tree reduction", `for (var s = 32u; s > 0u; s >>= 1u) { if li < s { w[li] += w[li + s]; } workgroupBarrier(); }`, false, 0, ""},
		{"tree reduction by division", `for (var s = 32u; s > 0u; s /= 2u) { if li < s && w[li + s] > w[li] { w[li] = w[li + s]; } workgroupBarrier(); }`, false, 0, ""},
		{"counting down", `for (var i = 64u; i > 0u; i--) { o[0] += w[i - 1u]; }`, false, 0, ""},
		{"counter starting above zero", `for (var i = 1u; i < 64u; i++) { o[0] += w[i - 1u]; }`, false, 0, ""},
		{"while condition", `let j = u32(o[1]); while j < 64u { o[0] = w[j]; break; }`, false, 0, ""},
		{"parameter from every call", `o[0] = load(li) + load(3u);`, false, 0, "fn load(i: u32) -> f32 { return w[i]; }"},
		{"parameter guarded in the callee", `put(u32(o[0]));`, false, 0, "fn put(i: u32) { if i >= 64u { return; } w[i] = 1.0; }"},
		{"parameter through two calls", `o[0] = outer(li / 2u);`, false, 0, "fn inner(i: u32) -> f32 { return w[2u * i + 1u]; }\nfn outer(i: u32) -> f32 { return inner(i); }"},
		{"argument under a guard", `let j = u32(o[1]); if j < 64u { o[0] = load(j); }`, false, 0, "fn load(i: u32) -> f32 { return w[i]; }"},
		{"shift by anything", `o[0] = w[li >> u32(o[1])];`, false, 0, ""},
		{"division by anything", `o[0] = w[li / u32(o[1])];`, false, 0, ""},
		{"remainder by anything", `o[0] = w[li % u32(o[1])];`, false, 0, ""},

		{"guard off by one", `let j = u32(o[1]); if j <= 64u { o[0] = w[j]; }`, true, 0, ""},
		{"guard that does not leave", `let j = u32(o[1]); if j >= 64u { o[0] = 1.0; } o[0] = w[j];`, true, 0, ""},
		{"guard that may not leave", `let j = u32(o[1]); if j >= 64u { if o[2] > 0.0 { return; } } o[0] = w[j];`, true, 0, ""},
		{"guard leaving an inner loop only", `let j = u32(o[1]); if j >= 64u { for (var k = 0u; k < 2u; k++) { break; } } o[0] = w[j];`, true, 0, ""},
		{"guard on a variable", `var j = u32(o[1]); if j < 64u { j += 1u; o[0] = w[j]; }`, true, 0, ""},
		{"guarded variable", `var j = u32(o[1]); if j >= 64u { return; } o[0] = w[j];`, true, 0, ""},
		{"left operand of &&", `if w[li + 32u] > 0.0 && li < 32u { o[0] = 1.0; }`, true, 0, ""},
		{"true left operand of ||", `if li < 32u || w[li + 32u] > 0.0 { o[0] = 1.0; }`, true, 0, ""},
		{"the other branch", `if li < 32u { o[0] = 1.0; } else { o[0] = w[li + 32u]; }`, true, 0, ""},
		{"&& false says nothing", `let j = u32(o[1]); if j < 64u && o[2] > 0.0 { } else { o[0] = w[j]; }`, true, 0, ""},
		{"continue reaches continuing", `loop { let j = u32(o[1]); if j >= 64u { continue; } o[0] = 1.0; continuing { o[0] += w[j]; break if o[0] > 0.0; } }`, true, 0, ""},
		{"counting down past zero", `for (var i = 63u; i >= 0u; i--) { o[0] += w[i]; if o[1] > 0.0 { break; } }`, true, 0, ""},
		{"step down that wraps", `for (var i = 61u; i > 0u; i -= 2u) { o[0] += w[i]; }`, true, 0, ""},
		{"step up that wraps", `for (var i = 8u; i < 4294967295u; i += 4294967288u) { o[0] += w[i - 8u]; }`, true, 0, ""},
		{"small step up that wraps", `for (var i = 8u; i < 72u; i += 4294967292u) { o[0] += w[i - 8u]; }`, true, 0, ""},
		{"product that wraps", `for (var i = 2u; i < 64u; i *= 2147483648u) { o[0] += w[i - 2u]; }`, true, 0, ""},
		{"the other branch, one past", `let j = min(u32(o[1]), 127u); if j < 63u { o[0] = 1.0; } else { o[0] = w[127u - j]; }`, true, 1, ""},
		{"the early return's other side, one past", `let j = min(u32(o[1]), 127u); if j <= 62u { return; } o[0] = w[127u - j];`, true, 1, ""},
		{"the other side of >, one past", `let j = u32(o[1]); if j > 64u { o[0] = 1.0; } else { o[0] = w[j]; }`, true, 0, ""},
		{"greater than an index", `let j = u32(o[1]); if li < j { o[0] = w[j]; }`, true, 0, ""},
		{"doubling that wraps", `for (var i = 1u; i != 0u; i *= 2u) { o[0] += w[i - 1u]; }`, true, 0, ""},
		{"counter written by the condition", `for (var i = 0u; i < min(bump(&i), 16u); i++) { o[0] += w[i * 4u]; }`, true, 1, "fn bump(p: ptr<function, u32>) -> u32 { *p = 1000u; return 20u; }"},
		{"parameter with one call out of range", `o[0] = load(li) + load(li + 1u);`, true, 0, "fn load(i: u32) -> f32 { return w[i]; }"},
		{"parameter with one unknown call", `o[0] = load(li) + load(u32(o[1]));`, true, 0, "fn load(i: u32) -> f32 { return w[i]; }"},
		{"argument beside a guard", `let j = u32(o[1]); if j < 64u { o[0] = load(j); } o[1] = load(j);`, true, 0, "fn load(i: u32) -> f32 { return w[i]; }"},
		{"while loop variable", `var s = 32u; while s > 0u { o[0] += w[li + s]; s >>= 1u; }`, true, 0, ""},
		{"shift left by anything", `o[0] = w[1u << u32(o[1])];`, true, 0, ""},
		{"remainder of anything by anything", `o[0] = w[u32(o[2]) % u32(o[1])];`, true, 0, ""},

		// Adversarial cases added in review: counters that wrap or count
		// past the length, variables changed after their check, parameters
		// whose calls differ, conditions that say less than they seem to.
		{"counting down, one past", `for (var i = 64u; i > 0u; i--) { o[0] += w[i]; }`, true, 0, ""},
		{"counting down from the length", `for (var i = 64u; i >= 1u; i--) { o[0] += w[i]; }`, true, 0, ""},
		{"counting down by two past zero", `for (var i = 63u; i >= 1u; i -= 2u) { o[0] += w[i]; }`, true, 0, ""},
		{"counting up until the wrap", `for (var i = 60u; i >= 60u; i++) { o[0] += w[i - 60u]; }`, true, 0, ""},
		{"decrement under an upper bound", `for (var i = 3u; i < 64u; i--) { o[0] += w[i]; }`, false, 0, ""},
		{"decrement under an upper bound, one past", `for (var i = 3u; i < 64u; i--) { o[0] += w[i + 1u]; }`, true, 0, ""},
		{"counting down by two that cannot wrap", `for (var i = 62u; i >= 2u; i -= 2u) { o[0] += w[i + 1u]; }`, false, 0, ""},
		{"counter changed by a callee", `for (var i = 0u; i < 16u; i++) { bump(&i); o[0] += w[i]; }`, true, 0, "fn bump(p: ptr<function, u32>) { *p += 100u; }"},
		{"counter changed in a nested continuing", `for (var i = 0u; i < 64u; i++) { loop { continuing { i += 64u; break if true; } } o[0] += w[i]; }`, true, 0, ""},
		{"counter changed in a nested loop's update", `for (var i = 0u; i < 64u; i++) { for (var k = 0u; k < 1u; i += 64u) { k = 1u; } o[0] += w[i]; }`, true, 0, ""},
		{"variable changed through a pointer after its guard", `var j = u32(o[1]); let p = &j; if j < 64u { *p = 100u; o[0] = w[j]; }`, true, 0, ""},
		{"variable guarded in a loop", `var j = 0u; for (var k = 0u; k < 4u; k++) { if j < 63u { j += 1u; } o[0] += w[j]; }`, true, 0, ""},
		{"parameter through two helpers, one unguarded", `o[0] = a(li) + b(u32(o[1]));`, true, 0, "fn load(i: u32) -> f32 { return w[i]; }\nfn a(i: u32) -> f32 { return load(i); }\nfn b(i: u32) -> f32 { return load(i); }"},
		{"parameter from a call in dead code", `if false { o[0] = load(100u); } o[1] = load(li);`, true, 0, "fn load(i: u32) -> f32 { return w[i]; }"},
		{"parameter bounded by a parameter, one call one past", `o[0] = load(u32(o[1]), 64u) + load(u32(o[2]), 65u);`, true, 0, "fn load(i: u32, n: u32) -> f32 { if i < n { return w[i]; } return 0.0; }"},
		{"parameter bounded by a parameter", `o[0] = load(u32(o[1]), 64u) + load(u32(o[2]), 32u);`, false, 0, "fn load(i: u32, n: u32) -> f32 { if i < n { return w[i]; } return 0.0; }"},
		{"parameter narrowed, then passed on", `put(u32(o[0]));`, false, 0, "fn store(i: u32) { w[i] = 1.0; }\nfn put(i: u32) { if i < 64u { store(i); } }"},
		{"parameter passed on beside its guard", `put(u32(o[0]));`, true, 0, "fn store(i: u32) { w[i] = 1.0; }\nfn put(i: u32) { if i < 64u { store(i); } store(i / 2u); }"},
		{"|| true says nothing", `let j = u32(o[1]); if j < 64u || o[2] > 0.0 { o[0] = w[j]; }`, true, 0, ""},
		{"negated ||", `let j = u32(o[1]); if !(j >= 64u || o[2] > 0.0) { o[0] = w[j]; }`, false, 0, ""},
		{"negated && says nothing", `let j = u32(o[1]); let k = u32(o[2]); if !(j >= 64u && k >= 64u) { o[0] = w[j]; }`, true, 0, ""},
		{"!= says nothing", `let j = u32(o[1]); if j != 64u { o[0] = w[j]; }`, true, 0, ""},
		{"== a constant", `let j = u32(o[1]); if j == 63u { o[0] = w[j]; }`, false, 0, ""},
		{"== the length", `let j = u32(o[1]); if j == 64u { o[0] = w[j]; }`, true, 0, ""},
		{"switch cases bound nothing", `let j = u32(o[1]); switch j { case 0u, 1u: { o[0] = w[j + 62u]; } default: { o[0] = 1.0; } }`, true, 0, ""},
		{"break out of a switch skips the clause", `let j = u32(o[1]); switch li { default: { if j >= 64u { break; } o[0] = w[j]; } }`, false, 0, ""},
		{"break out of a switch inside a loop", `let j = u32(o[1]); for (var k = 0u; k < 2u; k++) { switch li { default: { if j >= 64u { break; } } } o[0] += w[j]; }`, true, 0, ""},
		{"break if bounds nothing in the body", `let j = u32(o[1]); loop { o[0] = w[j]; continuing { break if j < 64u || o[0] > 0.0; } }`, true, 0, ""},
		{"guard in one loop, use in the next", `let j = u32(o[1]); for (var k = 0u; k < 2u; k++) { if j >= 64u { continue; } } o[0] = w[j];`, true, 0, ""},
		{"guard on a let of a narrowed let", `let j = u32(o[1]); let k = j + 1u; if j < 63u { o[0] = w[k]; }`, false, 0, ""},
		{"guard on a let of a narrowed let, one past", `let j = u32(o[1]); let k = j + 1u; if j < 64u { o[0] = w[k]; }`, true, 0, ""},
		{"division by zero gives the dividend", `o[0] = w[(li + 64u) / (u32(o[1]) % 2u)];`, true, 0, ""},
		{"remainder by zero gives zero", `o[0] = w[(li + 64u) % (u32(o[1]) % 65u)];`, false, 0, ""},
		{"shift by 32 or more is masked", `o[0] = w[(li + 64u) >> (32u + u32(o[1]) % 2u)];`, true, 0, ""},
		{"shift left by a masked amount", `o[0] = w[1u << (u32(o[1]) & 37u)];`, true, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(`
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
%s
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	w[li %% 64u] = f32(li);
	workgroupBarrier();
	%s
}`, c.pre, c.body)
			m, err := Compile("ranges.wgsl", src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sp, err := m.Specialize("main", nil)
			if err != nil {
				t.Fatal(err)
			}
			// o is indexed by constants only (clamped against its length
			// past 0, and not counted) and the setup's w[li % 64u] is
			// always proved: every other UMin is the case's w index.
			if n := fixedClamps(sp.SPIRV) - c.own; c.clamped && n < 1 || !c.clamped && n != 0 {
				t.Errorf("%d clamps: want clamped %v", n, c.clamped)
			}
			spirvVal(t, "ranges", sp.SPIRV)
			// The whole module decides alike (no override here).
			if n := fixedClamps(m.SPIRV) - c.own; c.clamped && n < 1 || !c.clamped && n != 0 {
				t.Errorf("whole module: %d clamps: want clamped %v", n, c.clamped)
			}
		})
	}
}

// TestIndexRangesPerEntryPoint: what the analysis knows depends on the
// module emitted. A helper called from two entry points takes the union of
// their arguments in the whole module and only its entry point's once
// specialized; an override array length is known only once specialized; subgroup builtins are bounded by the workgroup size and
// Vulkan's largest subgroup (128).
func TestIndexRangesPerEntryPoint(t *testing.T) {
	src := `
enable subgroups;
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
var<workgroup> v: array<f32, WG>;
var<workgroup> lanes: array<f32, 128>;
fn load(i: u32) -> f32 { return w[i]; }
@compute @workgroup_size(64)
fn small(@builtin(local_invocation_index) li: u32) { o[0] = load(li); }
@compute @workgroup_size(128)
fn big(@builtin(local_invocation_index) li: u32) { o[0] = load(li); }
@compute @workgroup_size(64)
fn sized(@builtin(local_invocation_index) li: u32) { o[0] = v[li % WG]; }
@compute @workgroup_size(64)
fn sub(@builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_id) sid: u32, @builtin(num_subgroups) nsg: u32) {
	o[0] = lanes[lane] + w[sid];
	for (var i = 0u; i < nsg; i++) { o[0] += w[i]; }
}
@compute @workgroup_size(64)
fn sub3(@builtin(num_subgroups) nsg: u32) { o[0] = w[nsg]; }
@compute @workgroup_size(64)
fn sub2(@builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) n: u32) { o[0] = w[lane] + lanes[n - 1u]; }
`
	m, err := Compile("entries.wgsl", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.SPIRV == nil {
		t.Fatalf("no SPIR-V: %s", m.NoSPIRV)
	}
	spirvVal(t, "entries", m.SPIRV)
	// Whole module: load's w[i] (union 0..127) and sized's v[li % WG] (WG unknown);
	// sub2's w[lane] (lane up to 127); sub3's w[nsg] (up to 64).
	if n := countUMin(m.SPIRV); n != 4 {
		t.Errorf("whole module: %d clamps, want 4", n)
	}
	for _, c := range []struct {
		entry   string
		clamped int
	}{{"small", 0}, {"big", 1}, {"sized", 0}, {"sub", 0}, {"sub2", 1}, {"sub3", 1}} {
		sp, err := m.Specialize(c.entry, map[string]float64{"WG": 32})
		if err != nil {
			t.Fatal(err)
		}
		if n := countUMin(sp.SPIRV); n != c.clamped {
			t.Errorf("%s: %d clamps, want %d", c.entry, n, c.clamped)
		}
		spirvVal(t, c.entry, sp.SPIRV)
	}
}

// TestIndexRangesHugeWorkgroup: local_invocation_index, subgroup_id and
// num_subgroups are bounded by the product of the workgroup's dimensions
// only while that product is a u32. 64 * 536903681 * 536838145 is 2^64 + 64:
// a product taken in 64 bits wraps to 64 and would prove w[li] in bounds
// (the checker may refuse such a workgroup size instead; it must never be
// both accepted and proved).
func TestIndexRangesHugeWorkgroup(t *testing.T) {
	r := &ranges{fn: &function{compute: true, wgSize: [3]wgDim{{val: 64}, {val: 536903681}, {val: 536838145}}}}
	for _, b := range []string{"local_invocation_index", "subgroup_id", "num_subgroups"} {
		if rg, ok := r.builtinRange(b); ok {
			t.Errorf("%s: proved in %v", b, rg)
		}
	}
	r.fn.wgSize = [3]wgDim{{val: 65536}, {val: 65536}, {val: 1}} // 2^32 invocations: any u32
	if rg, ok := r.builtinRange("local_invocation_index"); ok && rg.hi < 1<<32-1 {
		t.Errorf("2^32 invocations: proved in %v", rg)
	}
	const src = `
override A: u32 = 1;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
@compute @workgroup_size(64, 536903681, 536838145)
fn fixed(@builtin(local_invocation_index) li: u32) { o[0] = w[li]; }
@compute @workgroup_size(64, A, 536838145)
fn overridden(@builtin(local_invocation_index) li: u32) { o[0] = w[li] + f32(A); }
`
	m, err := Compile("huge.wgsl", src, Options{})
	if err != nil {
		return // refused by the checker: nothing is proved
	}
	if m.SPIRV != nil && countUMin(m.SPIRV) < 2 {
		t.Errorf("whole module: %d clamps, want 2", countUMin(m.SPIRV))
	}
	for _, entry := range []string{"fixed", "overridden"} {
		sp, err := m.Specialize(entry, map[string]float64{"A": 536903681})
		if err != nil {
			continue // refused when the pipeline is made
		}
		if n := countUMin(sp.SPIRV); n != 1 {
			t.Errorf("%s: %d clamps, want 1", entry, n)
		}
	}
}

// TestIndexRangesOverrides: a proof that rests on an override rests on the
// value the pipeline gives it, never on its default: the whole module (whose
// overrides a Vulkan pipeline may still specialize) proves nothing from one,
// and each specialization proves only what its values allow.
func TestIndexRangesOverrides(t *testing.T) {
	src := `
override N: u32 = 64;
override WG: u32 = 64;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
var<workgroup> v: array<f32, N>;
@compute @workgroup_size(64)
fn sized(@builtin(local_invocation_index) li: u32) { o[0] = v[li]; }
@compute @workgroup_size(64)
fn bound(@builtin(local_invocation_index) li: u32) { for (var i = 0u; i < N; i++) { o[0] += w[i]; } }
@compute @workgroup_size(64)
fn guard(@builtin(local_invocation_index) li: u32) { let j = u32(o[1]); if j < N { o[0] = w[j]; } }
@compute @workgroup_size(64)
fn last(@builtin(local_invocation_index) li: u32) { let k = N - 1u; o[0] = w[k]; }
@compute @workgroup_size(WG)
fn wide(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) li: u32) { o[0] = w[lid.x] + w[li]; }
`
	m, err := Compile("overrides.wgsl", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		entry   string
		n, wg   float64
		clamped int
	}{
		{"sized", 64, 64, 0}, {"sized", 32, 64, 1}, {"sized", 65, 64, 0},
		{"bound", 64, 64, 0}, {"bound", 65, 64, 1},
		{"guard", 64, 64, 0}, {"guard", 65, 64, 1},
		{"last", 64, 64, 0}, {"last", 65, 64, 1},
		{"wide", 64, 64, 0}, {"wide", 64, 65, 2}, {"wide", 64, 32, 0},
	} {
		sp, err := m.Specialize(c.entry, map[string]float64{"N": c.n, "WG": c.wg})
		if err != nil {
			t.Fatal(err)
		}
		if n := fixedClamps(sp.SPIRV); n != c.clamped { // guard's o[1] is not counted
			t.Errorf("%s with N=%v WG=%v: %d clamps, want %d", c.entry, c.n, c.wg, n, c.clamped)
		}
		spirvVal(t, c.entry, sp.SPIRV)
	}
	// The whole module: wide's workgroup size is an override, so it stands
	// alone; the rest, without it, keep every clamp that rests on N.
	src = strings.Replace(src, "@compute @workgroup_size(WG)", "@compute @workgroup_size(64)", 1)
	if m, err = Compile("overrides.wgsl", src, Options{}); err != nil {
		t.Fatal(err)
	}
	if m.SPIRV == nil {
		t.Fatalf("no SPIR-V: %s", m.NoSPIRV)
	}
	// sized's v[li], bound's w[i], guard's w[j], last's w[k]; wide's are
	// proved (and guard's o[1] is not counted).
	if n := fixedClamps(m.SPIRV); n != 4 {
		t.Errorf("whole module: %d clamps, want 4", n)
	}
	spirvVal(t, "whole", m.SPIRV)
}

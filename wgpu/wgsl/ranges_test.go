package wgsl

import (
	"fmt"
	"testing"
)

// TestIndexRanges: the emitter leaves out the clamp of an index into a
// fixed-size array only where the range analysis proves it in bounds, and
// keeps it wherever the index can reach the length: each case is a kernel
// whose workgroup array w (64 elements) is indexed with run-time indices.
func TestIndexRanges(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string
		clamped bool
		own     int // UMins the program asks for (min)
	}{
		{"invocation index", `o[0] = w[li];`, false, 0},
		{"loop counter below a constant", `for (var i = 0u; i < 16u; i++) { o[0] += w[i * 4u + li % 4u]; }`, false, 0},
		{"loop counter <=", `for (var i = 0u; i <= 15u; i += 2u) { o[0] += w[i * 4u + 3u]; }`, false, 0},
		{"lets and constants", `let a = li / 8u; let b = (li % 8u) * 8u; const k = 0u; o[0] = w[a + b + k];`, false, 0},
		{"nested loops", `for (var i = 0u; i < 4u; i++) { for (var j = 0u; j < 16u; j++) { o[0] += w[i * 16u + j]; } }`, false, 0},
		{"min", `o[0] = w[min(u32(o[1]), 63u)];`, false, 1},
		{"select", `o[0] = w[select(3u, li, o[1] > 0.0)];`, false, 0},
		{"remainder of anything", `o[0] = w[u32(o[1]) % 64u];`, false, 0},
		{"mask of anything", `o[0] = w[u32(o[1]) & 63u];`, false, 0},
		{"mask too wide", `o[0] = w[u32(o[1]) & 64u];`, true, 0},
		{"select of anything", `o[0] = w[select(3u, u32(o[2]), o[1] > 0.0)];`, true, 0},
		{"subtraction that cannot wrap", `o[0] = w[63u - li];`, false, 0},
		{"double-buffer offset", `for (var s = 0u; s < u32(o[0]); s++) { let cur = (s % 2u) * 32u; for (var k = 0u; k < 32u; k++) { o[0] += w[cur + k]; } }`, false, 0},

		{"past the end", `o[0] = w[li + 1u];`, true, 0},
		{"loop bound off by one", `for (var i = 0u; i <= 16u; i++) { o[0] += w[i * 4u]; }`, true, 0},
		{"counter written in the body", `for (var i = 0u; i < 16u; i++) { i += 1u; o[0] += w[i * 4u]; }`, true, 0},
		{"counter incremented in the body", `for (var i = 0u; i < 63u; i++) { i++; o[0] += w[i]; }`, true, 0},
		{"counter's address taken", `for (var i = 0u; i < 16u; i++) { let p = &i; *p = 99u; o[0] += w[i]; }`, true, 0},
		{"counter of a loop declared outside", `var i = 0u; for (; i < 16u; i++) { o[0] += w[i]; }`, true, 0},
		{"bound from memory", `for (var i = 0u; i < u32(o[0]); i++) { o[0] += w[i]; }`, true, 0},
		{"wrap-around below zero", `for (var i = 0u; i < 16u; i++) { o[0] += w[i - 1u]; }`, true, 0},
		{"multiplication past the end", `o[0] = w[li * 2u];`, true, 0},
		{"multiplication that wraps", `o[0] = w[(li * 4294967295u) / 33554432u];`, true, 0},
		{"any u32 divided to fit", `o[0] = w[(li * 4294967295u) / 67108864u];`, false, 0},
		{"addition that wraps", `o[0] = w[(li + 4294967295u) % 4294967295u];`, true, 0},
		{"index from memory", `o[0] = w[u32(o[0])];`, true, 0},
		{"var assigned", `var j = li; j = j + 1u; o[0] = w[j];`, true, 0},
		{"while loop", `var i = 0u; while i < 16u { o[0] += w[i]; i++; }`, true, 0},
		{"signed index", `o[0] = w[i32(li)];`, true, 0},
		{"condition not on the counter", `for (var i = 0u; li < 16u; i++) { o[0] += w[i]; if i > 100u { break; } }`, true, 0},
		{"counter shadowed by a let", `for (var i = 0u; i < 16u; i++) { let i = li + 1u; o[0] += w[i]; }`, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(`
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	w[li %% 64u] = f32(li);
	workgroupBarrier();
	%s
}`, c.body)
			m, err := Compile("ranges.wgsl", src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sp, err := m.Specialize("main", nil)
			if err != nil {
				t.Fatal(err)
			}
			// o is indexed by constants only (never clamped) and the setup's
			// w[li % 64u] is always proved: every UMin is the case's w index.
			if n := countUMin(sp.SPIRV) - c.own; c.clamped && n < 1 || !c.clamped && n != 0 {
				t.Errorf("%d clamps: want clamped %v", n, c.clamped)
			}
			spirvVal(t, "ranges", sp.SPIRV)
		})
	}
}

package wgsl

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// countUMin counts GLSL.std.450 UMin instructions, the index clamps.
func countUMin(words []uint32) int {
	n := 0
	for i := 5; i < len(words); {
		op, size := words[i]&0xffff, int(words[i]>>16)
		if size == 0 {
			break
		}
		if spirv.Op(op) == spirv.OpExtInst && size >= 5 && words[i+4] == spirv.GLSLUMin {
			n++
		}
		i += size
	}
	return n
}

// noIndexClampKernel indexes fixed, runtime-sized and workgroup arrays, a
// matrix and a vector with run-time indices no analysis can bound (j comes
// from memory), none of them a min() the program asks for.
const noIndexClampKernel = `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	var a = array<f32, 4>(1.0, 2.0, 3.0, 4.0);
	let m = mat2x2<f32>(5.0, 6.0, 7.0, 8.0);
	let v = vec4<f32>(9.0, 10.0, 11.0, 12.0);
	let j = li + u32(x[0]);
	w[j] = x[li];
	workgroupBarrier();
	o[li] = w[63u - j] + a[j % 5u] + m[j % 3u][(j / 2u) % 3u] + v[j % 5u];
}`

func TestNoIndexClamp(t *testing.T) {
	f, err := parse("noclamp.wgsl", noIndexClampKernel)
	if err != nil {
		t.Fatal(err)
	}
	c, err := checkDefault(f)
	if err != nil {
		t.Fatal(err)
	}
	clamped, err := emit(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	free, err := emit(c, Options{NoIndexClamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := countUMin(clamped); n < 6 {
		t.Errorf("default: %d UMin clamps, want at least 6 (one per run-time index)", n)
	}
	if n := countUMin(free); n != 0 {
		t.Errorf("NoIndexClamp: %d UMin clamps, want none", n)
	}
	spirvVal(t, "noclamp", free)
	m, err := Compile("noclamp.wgsl", noIndexClampKernel, Options{NoIndexClamp: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.SPIRV) != len(free) {
		t.Errorf("Compile with NoIndexClamp gave %d words, emit %d", len(m.SPIRV), len(free))
	}
}

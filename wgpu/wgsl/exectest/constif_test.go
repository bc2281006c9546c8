package exectest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// constIfArms branches on consts (else-if chains, a const-true arm that
// returns), on an override and on run-time values (the workgroup id).
const constIfArms = `
const C: u32 = 2u;
const D: bool = true;
override O: u32 = 1;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
fn only() -> f32 { return a[7]; }
@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) id: vec3<u32>) {
	if C == 1u { o[0] = a[0] + only(); } else if C == 2u { o[0] = a[1]; } else { o[0] = 2.0; }
	if O == 1u { o[1] = a[2]; } else { o[1] = 3.0; }
	if id.x == 5u { o[2] = a[3]; }
	if !D { o[5] = 9.0; }
	if D { o[3] = 4.0; if id.x == 1u { o[6] = a[5]; } return; }
	o[4] = a[4];
}`

// TestConstantIfArms runs constIfArms, whose if statements on consts the
// compiler emits as their taken arms alone (TestConstantIfEmitsTakenArm),
// with the override 1 and 0, from WGSL (wgpu's compile path) and from
// SPIR-V specialized by the compiler, in 6 workgroups: o holds what each arm
// taken writes and nothing of those not taken.
func TestConstantIfArms(t *testing.T) {
	a := []float32{10, 11, 12, 13, 14, 15, 16, 17}
	for _, o := range []float64{1, 0} {
		want := []float32{11, 12, 13, 4, -1, -1, 15, -1}
		if o == 0 {
			want[1] = 3
		}
		for _, opt := range []wgsl.Options{{}, {UnrollLoops: true}} {
			d := newDevice(t)
			d.opt = opt
			init := []float32{-1, -1, -1, -1, -1, -1, -1, -1}
			got := getF32(d.run(t, constIfArms, map[string]float64{"O": o}, nil, [3]uint32{6, 1, 1}, f32s(a...), f32s(init...))[1])
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("O %v, %+v: o[%d] = %v, want %v", o, opt, i, got[i], want[i])
				}
			}
		}
	}
}

// opCounts counts a module's instructions by opcode.
func opCounts(t *testing.T, words []uint32) map[spirv.Op]int {
	t.Helper()
	n := map[spirv.Op]int{}
	for i := 5; i < len(words); {
		size := int(words[i] >> 16)
		if size == 0 || i+size > len(words) {
			t.Fatalf("malformed instruction at word %d", i)
		}
		n[spirv.Op(words[i]&0xffff)]++
		i += size
	}
	return n
}

// TestConstantIfEmitsTakenArm: in constIfArms's SPIR-V, an if whose
// condition is a const-expression is its taken arm alone (no selection; the
// dead arms' loads and calls and the code after the return in a taken arm
// left out), one on an override keeps its selection in the generic module
// and loses it once specialized, and those on run-time values keep theirs;
// every module passes spirv-val.
func TestConstantIfEmitsTakenArm(t *testing.T) {
	m, err := wgsl.Compile("constif.wgsl", constIfArms, wgsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		o          float64 // the override; -1: the generic module
		selections int     // O's (generic only) and the two on the workgroup id
		loads      int     // of a in main: a[1], a[2] (where O's arm may run), a[3], a[5]
	}{
		{"generic", -1, 3, 4},
		{"O=1", 1, 2, 4},
		{"O=0", 0, 2, 3},
	} {
		words := m.SPIRV
		if c.o >= 0 {
			sp, err := m.Specialize("main", map[string]float64{"O": c.o})
			if err != nil {
				t.Fatal(err)
			}
			words = sp.SPIRV
		}
		validateWords(t, words)
		n := opCounts(t, words)
		if n[spirv.OpSelectionMerge] != c.selections || n[spirv.OpBranchConditional] != c.selections {
			t.Errorf("%s: %d selection merges, %d conditional branches, want %d", c.name, n[spirv.OpSelectionMerge], n[spirv.OpBranchConditional], c.selections)
		}
		if n[spirv.OpFunctionCall] != 0 {
			t.Errorf("%s: %d calls, want none (only() is called from a dead arm)", c.name, n[spirv.OpFunctionCall])
		}
		// Of the other loads, one is of the workgroup id and one is in
		// only(), whose function stays, uncalled.
		if got := n[spirv.OpLoad] - 2; got != c.loads {
			t.Errorf("%s: %d loads of a in main, want %d", c.name, got, c.loads)
		}
	}
}

package wgsl

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

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

// constIfKernel branches on a const (C: its else arm taken), on an
// override (O) and on a run-time value, and returns from a const-true arm
// (D) before a statement that is then dead.
const constIfKernel = `
const C: u32 = 0u;
const D: bool = true;
override O: u32 = 1;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
fn only() -> f32 { return a[7]; }
@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	if C == 1u { o[0] = a[0] + only(); } else if C == 2u { o[0] = a[1]; } else { o[0] = 2.0; }
	if O == 1u { o[1] = a[2]; } else { o[1] = 3.0; }
	if id.x == 5u { o[2] = a[3]; }
	if D { o[3] = 4.0; return; }
	o[4] = a[4];
}`

// TestConstantIfEmitsTakenArm: an if whose condition is a const-expression
// is emitted as its taken arm alone (no selection; the dead arm's loads
// and calls and the code after a return in the taken arm are left out), one on
// an override keeps its selection in the generic module and loses it once
// specialized, and one on a run-time value keeps it; every module passes
// spirv-val. (exectest's TestConstantIfArms runs such ifs.)
func TestConstantIfEmitsTakenArm(t *testing.T) {
	m := compileOK(t, "constif.wgsl", constIfKernel)
	for _, c := range []struct {
		name       string
		words      []uint32
		selections int // O's (generic only) and id.x's
		loads      int // a[2] (O generic), a[3]
	}{
		{"generic", m.SPIRV, 2, 2},
		{"O=1", nil, 1, 2},
		{"O=0", nil, 1, 1},
	} {
		if c.words == nil {
			o := 1.0
			if c.name == "O=0" {
				o = 0
			}
			sp, err := m.Specialize("main", map[string]float64{"O": o})
			if err != nil {
				t.Fatal(err)
			}
			c.words = sp.SPIRV
		}
		n := opCounts(t, c.words)
		if n[spirv.OpSelectionMerge] != c.selections || n[spirv.OpBranchConditional] != c.selections {
			t.Errorf("%s: %d selection merges, %d conditional branches, want %d", c.name, n[spirv.OpSelectionMerge], n[spirv.OpBranchConditional], c.selections)
		}
		if n[spirv.OpFunctionCall] != 0 {
			t.Errorf("%s: %d calls, want none (only() is called from a dead arm)", c.name, n[spirv.OpFunctionCall])
		}
		// The loads of a in main: of the others, one is of the invocation
		// id and one is in only(), whose function stays, uncalled.
		if got := n[spirv.OpLoad] - 2; got != c.loads {
			t.Errorf("%s: %d loads of a, want %d", c.name, got, c.loads)
		}
	}
}

package exectest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// constIfArms branches on consts (else-if chains, a const-true arm that
// returns), on an override and on a run-time value (the invocation id).
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
// compiler emits as their taken arms alone (wgsl's
// TestConstantIfEmitsTakenArm), with the override 1 and 0, from WGSL
// (wgpu's compile path) and from SPIR-V specialized by the compiler, in 6
// workgroups: o holds what each arm taken writes and nothing of those not
// taken.
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

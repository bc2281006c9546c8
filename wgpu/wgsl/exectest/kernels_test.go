package exectest

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/x448/float16"
)

func kernelSource(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/kernels/" + name + ".wgsl")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// f16 helpers (IEEE binary16, round to nearest even).
func toF16(f float32) uint16   { return float16.Fromfloat32(f).Bits() }
func fromF16(h uint16) float32 { return float16.Frombits(h).Float32() }

func f16s(v ...float32) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], toF16(x))
	}
	return b
}

func getF16(b []byte) []float32 {
	v := make([]float32, len(b)/2)
	for i := range v {
		v[i] = fromF16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return v
}

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestMatmulTiled(t *testing.T) {
	d := newDevice(t, wgpu.FeatureShaderF16)
	const M, N, K, tile = 5, 7, 19, 4
	a := make([]float32, M*K)
	b := make([]float32, K*N)
	bias := make([]float32, N)
	for i := range a {
		a[i] = float32(i%13) / 7
	}
	for i := range b {
		b[i] = fromF16(toF16(float32(i%11)/5 - 1))
	}
	for i := range bias {
		bias[i] = float32(i) / 2
	}
	out := d.run(t, kernelSource(t, "matmul_tiled"), map[string]float64{"TILE": tile}, nil,
		[3]uint32{(N + tile - 1) / tile, (M + tile - 1) / tile, 1},
		u32s(M, N, K, 1), f32s(a...), f16s(b...), f32s(bias...), make([]byte, 4*M*N))
	c := getF32(out[4])
	for m := range M {
		for n := range N {
			want := float64(bias[n])
			for k := range K {
				want += float64(a[m*K+k]) * float64(b[k*N+n])
			}
			if !close(float64(c[m*N+n]), want, 1e-5) {
				t.Errorf("c[%d,%d] = %g, want %g", m, n, c[m*N+n], want)
			}
		}
	}
}

func TestLayernormF16(t *testing.T) {
	d := newDevice(t, wgpu.FeatureShaderF16)
	const rows, C, wg = 3, 50, 16
	x := make([]float32, rows*C)
	w := make([]float32, C)
	bb := make([]float32, C)
	for i := range x {
		x[i] = fromF16(toF16(float32(math.Sin(float64(i))) * 3))
	}
	for i := range w {
		w[i] = fromF16(toF16(1 + float32(i)/100))
		bb[i] = fromF16(toF16(float32(i%5) / 10))
	}
	out := d.run(t, kernelSource(t, "layernorm_f16"), map[string]float64{"WG": wg}, u32s(rows, C),
		[3]uint32{rows, 1, 1}, f16s(x...), f16s(w...), f16s(bb...), make([]byte, 2*rows*C))
	y := getF16(out[3])
	for r := range rows {
		var mean, vr float64
		for i := range C {
			mean += float64(x[r*C+i])
		}
		mean /= C
		for i := range C {
			dd := float64(x[r*C+i]) - mean
			vr += dd * dd
		}
		rstd := 1 / math.Sqrt(vr/C+1e-5)
		for i := range C {
			want := (float64(x[r*C+i])-mean)*rstd*float64(w[i]) + float64(bb[i])
			if !close(float64(y[r*C+i]), want, 4e-3) {
				t.Errorf("y[%d,%d] = %g, want %g", r, i, y[r*C+i], want)
			}
		}
	}
}

func TestNLLLogsumexp(t *testing.T) {
	d := newDevice(t)
	const P, V = 4, 37
	logits := make([]float32, P*V)
	targets := make([]uint32, P)
	for i := range logits {
		logits[i] = float32(math.Cos(float64(i)*0.7)) * 5
	}
	for p := range targets {
		targets[p] = uint32(p*11) % V
	}
	out := d.run(t, kernelSource(t, "nll_lse"), map[string]float64{"WG": 8}, nil, [3]uint32{P, 1, 1},
		u32s(P, V), f32s(logits...), u32s(targets...), make([]byte, 4*P))
	nll := getF32(out[3])
	for p := range P {
		m := math.Inf(-1)
		for v := range V {
			m = math.Max(m, float64(logits[p*V+v]))
		}
		s := 0.0
		for v := range V {
			s += math.Exp(float64(logits[p*V+v]) - m)
		}
		want := m + math.Log(s) - float64(logits[p*V+int(targets[p])])
		if !close(float64(nll[p]), want, 1e-5) {
			t.Errorf("nll[%d] = %g, want %g", p, nll[p], want)
		}
	}
}

func TestGelu(t *testing.T) {
	d := newDevice(t)
	x := make([]float32, 4*70)
	for i := range x {
		x[i] = float32(i)/20 - 7
	}
	out := d.run(t, kernelSource(t, "gelu"), nil, nil, [3]uint32{2, 1, 1}, f32s(x...))
	y := getF32(out[0])
	for i, v := range x {
		xv := float64(v)
		want := 0.5 * xv * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(xv+0.044715*xv*xv*xv)))
		if !close(float64(y[i]), want, 1e-5) {
			t.Errorf("gelu(%g) = %g, want %g", v, y[i], want)
		}
	}
}

func TestSubgroupSum(t *testing.T) {
	d := newDevice(t, wgpu.FeatureSubgroups)
	const n = 600 // three workgroups of 256, the last partial
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%17) - 3
	}
	out := d.run(t, kernelSource(t, "subgroup_sum"), nil, nil, [3]uint32{3, 1, 1}, f32s(x...), make([]byte, 4*3))
	got := getF32(out[1])
	for g := range 3 {
		want := 0.0
		for i := g * 256; i < min(n, (g+1)*256); i++ {
			want += float64(x[i])
		}
		if !close(float64(got[g]), want, 1e-6) {
			t.Errorf("group %d: %g, want %g", g, got[g], want)
		}
	}
}

func TestF16ArithmeticAndUniformLayout(t *testing.T) {
	d := newDevice(t, wgpu.FeatureShaderF16)
	src := `enable f16;
struct U { scale: f32, v: vec3<f32>, h: f16, arr: array<vec4<f32>, 2> }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> xh: array<f16>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
	let h = xh[i];
	let r = h * u.h + f16(u.scale) - 0.5h;
	o[i] = f32(r) + u.v.z * f32(i) + u.arr[1].w;
}`
	// U layout: scale@0, v@16 (vec3 align 16), h@28, arr@32 (stride 16); size 64.
	ub := make([]byte, 64)
	binary.LittleEndian.PutUint32(ub[0:], math.Float32bits(2))
	binary.LittleEndian.PutUint32(ub[24:], math.Float32bits(10)) // v.z
	binary.LittleEndian.PutUint16(ub[28:], toF16(1.5))
	binary.LittleEndian.PutUint32(ub[60:], math.Float32bits(100)) // arr[1].w
	xs := []float32{1, 2.5, -4, 0.25}
	out := d.run(t, src, nil, nil, one, ub, f16s(xs...), make([]byte, 16))
	got := getF32(out[2])
	for i, x := range xs {
		r := fromF16(toF16(fromF16(toF16(fromF16(toF16(x*1.5))+2)) - 0.5))
		want := float64(r) + 10*float64(i) + 100
		if !close(float64(got[i]), want, 1e-3) {
			t.Errorf("o[%d] = %g, want %g", i, got[i], want)
		}
	}
}

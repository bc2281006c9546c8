package exectest

import (
	"math"
	"math/bits"
	"testing"
)

func TestBuiltinsAndVectors(t *testing.T) {
	d := newDevice(t)
	xs := []float32{0.25, 1.5, 2, 3.75}
	src := `
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> ou: array<u32>;
@compute @workgroup_size(1)
fn main() {
	let v = x[0];
	var k = 0u;
	o[k] = exp(v.x); k++;
	o[k] = log(v.y); k++;
	o[k] = tanh(v.z); k++;
	o[k] = pow(v.y, v.z); k++;
	o[k] = sqrt(v.w); k++;
	o[k] = inverseSqrt(v.z); k++;
	o[k] = clamp(v.w, 1.0, 3.0); k++;
	o[k] = dot(v, vec4(1.0, 2.0, 3.0, 4.0)); k++;
	o[k] = cross(v.xyz, vec3(0.0, 0.0, 1.0)).x; k++;
	o[k] = normalize(v).w; k++;
	o[k] = length(v.xy); k++;
	o[k] = mix(v.x, v.w, 0.25); k++;
	o[k] = fma(v.y, v.z, v.w); k++;
	o[k] = select(v.x, v.y, v.z > 1.0); k++;
	o[k] = (v.wzyx * 2.0 - v).x; k++;
	o[k] = unpack2x16float(pack2x16float(v.xy)).y; k++;
	o[k] = f32(vec3<i32>(v.xyz * -1.0).z); k++;
	let b = bitcast<u32>(v.y);
	ou[0] = b;
	ou[1] = countOneBits(b);
	ou[2] = reverseBits(b);
	ou[3] = u32(all(v > vec4(0.0))) + 2u * u32(any(v > vec4(3.0)));
	ou[4] = bitcast<u32>(vec2<f32>(v.xy).y);
	ou[5] = u32(dot(vec3<u32>(1u, 2u, 3u), vec3(4u, 5u, 6u)));
}`
	out := d.run(t, src, nil, nil, one, f32s(xs...), make([]byte, 4*17), make([]byte, 4*6))
	o, ou := getF32(out[1]), getU32(out[2])
	x, y, z, w := float64(xs[0]), float64(xs[1]), float64(xs[2]), float64(xs[3])
	norm := math.Sqrt(x*x + y*y + z*z + w*w)
	want := []float64{math.Exp(x), math.Log(y), math.Tanh(z), math.Pow(y, z), math.Sqrt(w), 1 / math.Sqrt(z),
		3, x + 2*y + 3*z + 4*w, y, w / norm, math.Sqrt(x*x + y*y), x*0.75 + w*0.25, y*z + w, y,
		w*2 - x, y, -z}
	for i, wv := range want {
		if !close(float64(o[i]), wv, 1e-5) {
			t.Errorf("o[%d] = %g, want %g", i, o[i], wv)
		}
	}
	b := math.Float32bits(xs[1])
	wantU := []uint32{b, uint32(bits.OnesCount32(b)), bits.Reverse32(b), 1 + 2, b, 32}
	for i, wv := range wantU {
		if ou[i] != wv {
			t.Errorf("ou[%d] = %#x, want %#x", i, ou[i], wv)
		}
	}
}

func TestF16Conversions(t *testing.T) {
	d := newDevice(t, "shader-f16")
	src := `enable f16;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> oh: array<f16>;
@group(0) @binding(2) var<storage, read_write> oi: array<i32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
	let h = f16(x[i]);
	oh[i] = h * 2.0h;
	oi[i] = i32(h);
	oi[i + 4u] = i32(u32(h));      // negative f16 saturates to 0 as u32
	let v = vec2<f16>(h, -h);
	oh[i + 4u] = dot(v, v);
}`
	xs := []float32{1.5, -2.25, 100, 0.1}
	out := d.run(t, src, nil, nil, one, f32s(xs...), make([]byte, 2*8), make([]byte, 4*8))
	oh, oi := getF16(out[1]), getI32(out[2])
	for i, xv := range xs {
		h := float64(fromF16(toF16(xv)))
		if !close(float64(oh[i]), 2*h, 1e-3) || !close(float64(oh[i+4]), float64(fromF16(toF16(float32(2*h*h)))), 2e-3) {
			t.Errorf("x=%g: oh %g %g", xv, oh[i], oh[i+4])
		}
		wu := int32(math.Max(math.Trunc(h), 0))
		if oi[i] != int32(math.Trunc(h)) || oi[i+4] != wu {
			t.Errorf("x=%g: i32 %d, u32 %d", xv, oi[i], oi[i+4])
		}
	}
}

package wgpu

import (
	"errors"
	"fmt"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// TestWorkgroupBytes: the workgroup memory a module declares, as the WGSL compiler lays it out for N set per
// pipeline: arrays of scalars and vectors (vec3 aligned as vec4) and a struct, each at its natural size.
func TestWorkgroupBytes(t *testing.T) {
	const src = `override N: u32 = 16;
struct Pair { a: f32, b: vec3<f32> }
var<workgroup> xs: array<f32, N>;
var<workgroup> vs: array<vec3<f32>, 4>;
var<workgroup> ps: array<Pair, 2>;
var<workgroup> n: atomic<u32>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main() {
	xs[0] = 1.0; vs[0] = vec3<f32>(1.0); ps[1].a = 2.0; atomicAdd(&n, 1u);
	out[0] = xs[N - 1u] + vs[3].x + ps[0].b.y + f32(atomicLoad(&n));
}`
	m, err := wgsl.Compile("wg.wgsl", src, wgsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ n, want uint64 }{{16, 64 + 64 + 64 + 4}, {1000, 4000 + 64 + 64 + 4}} {
		sp, err := m.Specialize("main", map[string]float64{"N": float64(c.n)})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := workgroupBytes(sp.SPIRV); !ok || got != c.want {
			t.Errorf("N = %d: %d bytes (%v), want %d", c.n, got, ok, c.want)
		}
	}
}

// TestWorkgroupMemoryLimit: a pipeline whose workgroup memory exceeds maxComputeWorkgroupStorageSize (which
// Vulkan leaves undefined: a driver may refuse it, crash or corrupt memory) is refused with ErrLimit; one that
// fills it exactly is created.
func TestWorkgroupMemoryLimit(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	limit := d.Limits().MaxComputeWorkgroupStorageSize
	const src = `override N: u32 = 16;
var<workgroup> xs: array<f32, N>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
	xs[i] = f32(i);
	workgroupBarrier();
	out[i] = xs[N - 1u - i];
}`
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "wg.wgsl", WGSL: src})
	if err != nil {
		t.Fatal(err)
	}
	fits := float64(limit / 4)
	p, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "fits", Module: m, EntryPoint: "main", Constants: map[string]float64{"N": fits}})
	if err != nil {
		t.Fatalf("%v floats (%d bytes, the limit): %v", fits, limit, err)
	}
	p.Close()
	_, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "over", Module: m, EntryPoint: "main", Constants: map[string]float64{"N": fits + 1}})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("%v floats (%d bytes, 4 past the limit): %v, want ErrLimit", fits+1, limit+4, err)
	}
	t.Log(fmt.Sprint(err))
}

package wgpu_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// Example runs testdata/spec.comp (y = x*MUL + ADD) on the best adapter and prints y[3]; where Vulkan is
// missing it falls back to computing the same on the CPU, as a program using this package would.
func Example() {
	const mul, add = 10, 0.5
	cpu := func() { fmt.Println(float32(3*mul + add)) }
	inst, err := wgpu.CreateInstance(nil)
	if wgpu.Unavailable(err) {
		cpu()
		return
	} else if err != nil {
		log.Fatal(err)
	}
	defer inst.Close()
	adapter, err := inst.RequestAdapter("")
	if wgpu.Unavailable(err) {
		cpu()
		return
	} else if err != nil {
		log.Fatal(err)
	}
	// "-": no pipeline cache on disk, so that running the example leaves nothing behind; a program keeps the
	// default ("": the user cache folder's wgpu-eval/pipelines), which saves compiling the pipelines next time.
	dev, err := adapter.RequestDevice(&wgpu.DeviceDescriptor{PipelineCacheDir: "-"})
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()

	raw, err := os.ReadFile("testdata/spec.spv")
	if err != nil {
		log.Fatal(err)
	}
	code := make([]uint32, len(raw)/4)
	for i := range code {
		code[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	module, err := dev.CreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: "spec", SPIRV: code})
	if err != nil {
		log.Fatal(err)
	}
	bgl, err := dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Entries: []wgpu.BindGroupLayoutEntry{
		{Binding: 0, Type: wgpu.BindingReadOnlyStorage}, {Binding: 1, Type: wgpu.BindingStorage}}})
	if err != nil {
		log.Fatal(err)
	}
	layout, err := dev.CreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{BindGroupLayouts: []*wgpu.BindGroupLayout{bgl}})
	if err != nil {
		log.Fatal(err)
	}
	pipe, err := dev.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{Layout: layout, Module: module,
		Constants: map[string]float64{"0": 64, "MUL": mul, "ADD": add}}) // "0": the workgroup size's constant ID
	if err != nil {
		log.Fatal(err)
	}
	const n = 64
	usage := wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
	x, _ := dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "x", Size: 4 * n, Usage: usage})
	y, _ := dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "y", Size: 4 * n, Usage: usage})
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(i)))
	}
	if err := dev.Queue().WriteBuffer(x, 0, in); err != nil {
		log.Fatal(err)
	}
	group, err := dev.CreateBindGroup(&wgpu.BindGroupDescriptor{Layout: bgl, Entries: []wgpu.BindGroupEntry{
		{Binding: 0, Buffer: x}, {Binding: 1, Buffer: y}}})
	if err != nil {
		log.Fatal(err)
	}
	enc, _ := dev.CreateCommandEncoder(nil)
	pass := enc.BeginComputePass(nil)
	pass.SetPipeline(pipe)
	pass.SetBindGroup(0, group)
	pass.DispatchWorkgroups(n/64, 1, 1)
	pass.End()
	cb, err := enc.Finish()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := dev.Queue().Submit(cb); err != nil {
		log.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := dev.Queue().ReadBuffer(y, 0, out); err != nil { // waits for the GPU
		log.Fatal(err)
	}
	fmt.Println(math.Float32frombits(binary.LittleEndian.Uint32(out[4*3:])))
	// Output: 30.5
}

// TestExampleKeepsNoCache: Example, which `go test` runs, writes nothing into
// the user's cache folder (a pipeline cache there would be the tests'
// leftover in a real user's cache).
func TestExampleKeepsNoCache(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", tmp)
	t.Setenv("HOME", tmp)
	stdout := os.Stdout
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	os.Stdout = devNull
	Example()
	os.Stdout = stdout
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "wgpu-eval")); err == nil {
		t.Errorf("Example wrote %s", filepath.Join(base, "wgpu-eval"))
	}
}

package wgpu

//go:generate sh testdata/build_spirv.sh

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/x448/float16"
)

// testEnv is a device on the first adapter, with the validation layer when installed. Any warning or error the
// layer or driver reports fails the test.
type testEnv struct {
	inst *Instance
	ad   *Adapter
	dev  *Device

	mu   sync.Mutex
	msgs []Message
}

// newEnv makes a device with the features, skipping the test when Vulkan or a feature is missing.
func newEnv(t testing.TB, features ...FeatureName) *testEnv {
	t.Helper()
	return newEnvWith(t, os.Getenv("WGPU_NO_VALIDATION") == "", features...)
}

// newEnvStaged is newEnv on a device that stages its transfers where staged (DeviceDescriptor.StageTransfers): the
// paths of a discrete GPU on a unified-memory one.
func newEnvStaged(t testing.TB, staged bool) *testEnv {
	t.Helper()
	return newEnvDesc(t, os.Getenv("WGPU_NO_VALIDATION") == "", DeviceDescriptor{StageTransfers: staged})
}

func newEnvWith(t testing.TB, validation bool, features ...FeatureName) *testEnv {
	t.Helper()
	return newEnvDesc(t, validation, DeviceDescriptor{}, features...)
}

// newEnvDesc is newEnvWith with a device made from desc (its features and pipeline cache set here).
func newEnvDesc(t testing.TB, validation bool, desc DeviceDescriptor, features ...FeatureName) *testEnv {
	t.Helper()
	env := &testEnv{}
	inst, err := CreateInstance(&InstanceDescriptor{Validation: validation, OnMessage: func(m Message) {
		env.mu.Lock()
		env.msgs = append(env.msgs, m)
		env.mu.Unlock()
	}})
	if Unavailable(err) {
		prereq.Missing(t, "vulkan", fmt.Errorf("%w (no loader or driver; Debian: libvulkan1 mesa-vulkan-drivers)", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	env.inst = inst
	ad, err := inst.RequestAdapter(os.Getenv("WGPU_ADAPTER"))
	if Unavailable(err) {
		inst.Close()
		prereq.Missing(t, "vulkan", err)
	}
	if err != nil {
		inst.Close()
		t.Fatal(err)
	}
	env.ad = ad
	for _, f := range features {
		if !ad.HasFeature(f) {
			inst.Close()
			t.Skipf("adapter %s lacks feature %s", ad.Info().Name, f)
		}
	}
	desc.RequiredFeatures, desc.PipelineCacheDir = features, t.TempDir()
	dev, err := ad.RequestDevice(&desc)
	if err != nil {
		inst.Close()
		t.Fatal(err)
	}
	env.dev = dev
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("device close: %v", err)
		}
		inst.Close()
		env.mu.Lock()
		defer env.mu.Unlock()
		for _, m := range env.msgs {
			t.Errorf("Vulkan message: %v", m)
		}
	})
	if validation && !inst.ValidationEnabled() {
		t.Logf("validation layer %s not installed: running without it", ValidationLayer)
	}
	if inst.ValidationEnabled() {
		prereq.SyncValidation(t, inst.SyncValidationEnabled())
	}
	return env
}

func loadSPIRV(t testing.TB, name string) []uint32 {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name + ".spv")
	if err != nil {
		t.Fatal(err)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// kernel is a pipeline with one bind group layout of the given binding types.
type kernel struct {
	layout *BindGroupLayout
	pl     *PipelineLayout
	pipe   *ComputePipeline
}

func newKernel(t testing.TB, d *Device, shader string, push uint32, consts map[string]float64, types ...BindingType) *kernel {
	t.Helper()
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: shader, SPIRV: loadSPIRV(t, shader)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var entries []BindGroupLayoutEntry
	for i, ty := range types {
		entries = append(entries, BindGroupLayoutEntry{Binding: uint32(i), Type: ty})
	}
	k := &kernel{}
	if k.layout, err = d.CreateBindGroupLayout(&BindGroupLayoutDescriptor{Label: shader, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	if k.pl, err = d.CreatePipelineLayout(&PipelineLayoutDescriptor{Label: shader, BindGroupLayouts: []*BindGroupLayout{k.layout}, PushConstantSize: push}); err != nil {
		t.Fatal(err)
	}
	if k.pipe, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Label: shader, Layout: k.pl, Module: m, Constants: consts}); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *kernel) group(t testing.TB, d *Device, bufs ...*Buffer) *BindGroup {
	t.Helper()
	var es []BindGroupEntry
	for i, b := range bufs {
		es = append(es, BindGroupEntry{Binding: uint32(i), Buffer: b})
	}
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: k.layout, Entries: es})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newBuffer(t testing.TB, d *Device, size uint64, usage BufferUsage) *Buffer {
	t.Helper()
	b, err := d.CreateBuffer(&BufferDescriptor{Label: "test", Size: size, Usage: usage})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const storageRW = BufferUsageStorage | BufferUsageCopySrc | BufferUsageCopyDst

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u32Bytes(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func readF32(t testing.TB, d *Device, b *Buffer) []float32 {
	t.Helper()
	out := make([]byte, b.Size())
	if err := d.Queue().ReadBuffer(b, 0, out); err != nil {
		t.Fatal(err)
	}
	return bytesF32(out)
}

// run records one pass with fn, submits it and waits.
func run(t testing.TB, d *Device, fn func(p *ComputePass)) *CommandEncoder {
	t.Helper()
	e, err := d.CreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := e.BeginComputePass(nil)
	fn(p)
	p.End()
	cb, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := d.Queue().Submit(cb)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Queue().WaitFor(idx); err != nil {
		t.Fatal(err)
	}
	return e
}

func isErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("error %v, want %v", err, want)
	}
}

// f16bits and f16val convert to and from IEEE binary16 (round to nearest even).
func f16bits(f float32) uint16 { return float16.Fromfloat32(f).Bits() }
func f16val(h uint16) float32  { return float16.Frombits(h).Float32() }

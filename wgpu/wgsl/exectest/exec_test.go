package exectest

import (
	"encoding/binary"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

type device struct {
	dev *wgpu.Device
	// opt, when it sets NoIndexClamp, compiles with it and hands wgpu the
	// SPIR-V instead of the WGSL source; with UnrollLoops, the SPIR-V of the
	// entry point specialized with the constants (the loops over overrides
	// unrolled as a pipeline's are); UniformStandardLayout only serves the
	// reflection (wgpu compiles with it where the device allows).
	opt wgsl.Options
	// bound, where set and non-zero, is how many bytes of bufs[i] run binds
	// (the rest is in the buffer, past the binding's end); else all of it.
	bound []uint64
}

// newDevice opens the first adapter with the Khronos validation layer when it
// is installed (WGPU_NO_VALIDATION=1 turns it off); any message it reports
// about our SPIR-V or its use fails the test.
func newDevice(t *testing.T, features ...wgpu.FeatureName) *device {
	t.Helper()
	var mu sync.Mutex
	var msgs []wgpu.Message
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{
		Validation: os.Getenv("WGPU_NO_VALIDATION") == "",
		OnMessage: func(m wgpu.Message) {
			mu.Lock()
			msgs = append(msgs, m)
			mu.Unlock()
		},
	})
	if wgpu.Unavailable(err) {
		prereq.Missing(t, "vulkan", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ad, err := inst.RequestAdapter(os.Getenv("WGPU_ADAPTER"))
	if wgpu.Unavailable(err) {
		inst.Close()
		prereq.Missing(t, "vulkan", err)
	}
	if err != nil {
		inst.Close()
		t.Fatal(err)
	}
	for _, f := range features {
		if !ad.HasFeature(f) {
			inst.Close()
			t.Skipf("adapter %s lacks %s", ad.Info().Name, f)
		}
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: features, PipelineCacheDir: "-"})
	if err != nil {
		inst.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dev.Close()
		inst.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			t.Errorf("Vulkan message: %v", m)
		}
	})
	return &device{dev: dev}
}

// adapterHas reports whether the adapter newDevice opens offers feature f
// (false where there is none).
func adapterHas(f wgpu.FeatureName) bool {
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{})
	if err != nil {
		return false
	}
	defer inst.Close()
	ad, err := inst.RequestAdapter(os.Getenv("WGPU_ADAPTER"))
	return err == nil && ad.HasFeature(f)
}

// run compiles src, binds bufs[i] to @group(0) @binding(i) (types from the
// reflection), dispatches groups workgroups and returns the buffers' contents.
func (d *device) run(t *testing.T, src string, consts map[string]float64, push []byte, groups [3]uint32, bufs ...[]byte) [][]byte {
	t.Helper()
	m, err := wgsl.Compile(t.Name()+".wgsl", src, d.opt)
	if err != nil {
		if l, ok := err.(wgsl.ErrorList); ok {
			t.Fatal(l.Pretty())
		}
		t.Fatal(err)
	}
	dev := d.dev
	// The module goes in as WGSL, so wgpu's own compile path (and its mapping
	// of override names to IDs) is what runs; m serves the reflection.
	desc := &wgpu.ShaderModuleDescriptor{Label: t.Name() + ".wgsl", WGSL: src, WorkgroupInit: d.opt.WorkgroupInit}
	switch {
	case d.opt.UnrollLoops:
		sp, err := m.Specialize(m.Reflection.EntryPoints[0].Name, consts)
		if err != nil {
			t.Fatal(err)
		}
		desc, consts = &wgpu.ShaderModuleDescriptor{Label: t.Name() + ".wgsl", SPIRV: sp.SPIRV}, nil
	case d.opt.NoIndexClamp:
		desc = &wgpu.ShaderModuleDescriptor{Label: t.Name() + ".wgsl", SPIRV: m.SPIRV}
	}
	sm, err := dev.CreateShaderModule(desc)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	var entries []wgpu.BindGroupLayoutEntry
	for _, b := range m.Reflection.Bindings {
		ty := wgpu.BindingStorage
		switch b.Kind {
		case "read-only-storage":
			ty = wgpu.BindingReadOnlyStorage
		case "uniform":
			ty = wgpu.BindingUniform
		}
		entries = append(entries, wgpu.BindGroupLayoutEntry{Binding: uint32(b.Binding), Type: ty})
	}
	if len(entries) != len(bufs) {
		t.Fatalf("%d bindings, %d buffers", len(entries), len(bufs))
	}
	layout, err := dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	defer layout.Close()
	pl, err := dev.CreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{BindGroupLayouts: []*wgpu.BindGroupLayout{layout},
		PushConstantSize: uint32(m.Reflection.PushConstantSize)})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	pipe, err := dev.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{Layout: pl, Module: sm,
		EntryPoint: m.Reflection.EntryPoints[0].Name, Constants: consts})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	var buffers []*wgpu.Buffer
	var ges []wgpu.BindGroupEntry
	for i, data := range bufs {
		usage := wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
		if entries[i].Type == wgpu.BindingUniform {
			usage = wgpu.BufferUsageUniform | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst
		}
		size := uint64(max((len(data)+3)&^3, 16))
		b, err := dev.CreateBuffer(&wgpu.BufferDescriptor{Size: size, Usage: usage})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		padded := make([]byte, size)
		copy(padded, data)
		if err := dev.Queue().WriteBuffer(b, 0, padded); err != nil {
			t.Fatal(err)
		}
		buffers = append(buffers, b)
		bind := uint64(len(data)+3) &^ 3
		if i < len(d.bound) && d.bound[i] != 0 {
			bind = d.bound[i]
		}
		ges = append(ges, wgpu.BindGroupEntry{Binding: entries[i].Binding, Buffer: b, Size: bind})
	}
	bg, err := dev.CreateBindGroup(&wgpu.BindGroupDescriptor{Layout: layout, Entries: ges})
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	enc, err := dev.CreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	pass := enc.BeginComputePass(nil)
	pass.SetPipeline(pipe)
	pass.SetBindGroup(0, bg)
	if push != nil {
		pass.SetPushConstants(0, push)
	}
	pass.DispatchWorkgroups(groups[0], groups[1], groups[2])
	pass.End()
	cb, err := enc.Finish()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := dev.Queue().Submit(cb)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Queue().WaitFor(idx); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(bufs))
	for i, b := range buffers {
		if len(bufs[i]) == 0 {
			out[i] = []byte{}
			continue
		}
		tmp := make([]byte, (len(bufs[i])+3)&^3)
		if err := dev.Queue().ReadBuffer(b, 0, tmp); err != nil {
			t.Fatal(err)
		}
		out[i] = tmp[:len(bufs[i])]
	}
	return out
}

func u32s(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func i32s(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func f32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func getU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func getI32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func getF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

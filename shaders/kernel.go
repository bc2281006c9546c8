package shaders

import (
	"embed"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// sources are the kernels and, in include/, the WGSL they share (see
// includeDirective), which is no kernel of its own.
//
//go:embed *.wgsl include/*.wgsl
var sources embed.FS

// Source returns the WGSL text of the kernel file name ("layernorm.wgsl") for
// the weight type, its includes spliced in: f16 true makes the f16-weight
// variant (see Variant).
func Source(name string, f16 bool) (string, error) {
	x, err := load(name, f16)
	if err != nil {
		return "", err
	}
	return x.Text, nil
}

// load is Source with the origin of every line.
func load(name string, f16 bool) (wgsl.Expanded, error) {
	return loadReplacing(name, f16, nil)
}

// loadReplacing is load with the includes replace maps replaced
// (wgsl.ExpandReplacing).
func loadReplacing(name string, f16 bool, replace map[string]string) (wgsl.Expanded, error) {
	x, err := wgsl.ExpandReplacing(sources, name, replace)
	if err != nil {
		return wgsl.Expanded{}, fmt.Errorf("kernel %w", err)
	}
	x.Text = Variant(x.Text, f16) // the same lines: see Variant
	return x, nil
}

// kvEpilogueBuffers are the storage buffers a stage that matmul_shared.wgsl
// and matmul_coop.wgsl bind with the KV cache (x, w, bias, out, kc, vc), for
// EPI_QKV. Vulkan's minimum is 4 (older Mali drivers report it).
const kvEpilogueBuffers = 6

// kvFreeIncludes are the includes replaced on a device with fewer than
// kvEpilogueBuffers storage buffers a stage: the KV cache bindings and
// EPI_QKV's write (include/matmul_kv.wgsl) give way to a storeKV that
// writes nothing (include/matmul_nokv.wgsl), so that the matmul kernels bind
// 4 storage buffers; the host then stores the QKV product whole and runs
// the KV cache write after (matmulOp).
var kvFreeIncludes = map[string]string{"include/matmul_kv.wgsl": kvFreeInclude}

// kvFreeInclude is the file kvFreeIncludes splices in.
const kvFreeInclude = "include/matmul_nokv.wgsl"

// deviceIncludes are the includes replaced for dev: kvFreeIncludes where
// its storage buffers a stage are too few for the KV cache epilogue.
func deviceIncludes(dev *wgpu.Device) map[string]string {
	if dev.Limits().MaxStorageBuffersPerShaderStage < kvEpilogueBuffers {
		return kvFreeIncludes
	}
	return nil
}

// kvFreeLabel is the mark of a kernel's label where its text is
// kvFreeIncludes'.
func kvFreeLabel(x wgsl.Expanded) string {
	if x.Spliced(kvFreeInclude) {
		return "[nokv]"
	}
	return ""
}

// weightAlias is the line a kernel that reads weights declares; Variant rewrites
// it for f16 weights.
const weightAlias = "alias weight = f32;"

// Variant returns src for f32 or f16 weights. A kernel that reads weights
// declares "alias weight = f32;" and loads them as weight or vec4<weight>,
// converting to f32 for arithmetic; for f16, the alias becomes f16 and
// "enable f16; " is put first, on the first line, so that every line keeps
// its number (diagnostics name the file's lines). WGSL has no conditional compilation and an
// override cannot change a binding's type, so the two weight types are two
// texts of one file (as ggml-vulkan builds its type variants from one source).
func Variant(src string, f16 bool) string {
	if !f16 || !strings.Contains(src, weightAlias) {
		return src
	}
	return "enable f16; " + strings.Replace(src, weightAlias, "alias weight = f16;", 1)
}

// Kernel is one WGSL file compiled for a device, with its reflection and its
// pipelines, one per set of override constants.
type Kernel struct {
	name string
	src  wgsl.Expanded // the text compiled, for the origin of diagnostics
	dev  *wgpu.Device
	mod  *wgpu.ShaderModule
	refl wgsl.Reflection
	// sgSize is the subgroup size every pipeline requires (0: the device's
	// choice): kernels that number their subgroups from the subgroup size
	// the host gave them (matmul_coop.wgsl) need that size.
	sgSize uint32

	mu     sync.Mutex
	pipes  map[constSet]*Pipeline
	making map[constSet]*pipeMaking   // pipelines being created, which other callers wait for
	plans  map[reflect.Type]*pushPlan // PushStruct's, checked once per type
	binds  map[reflect.Type]*bindPlan // the forward pass's binding structs, checked once per type
}

// NewKernel compiles the kernel file name ("matmul.wgsl") for dev, with f16 or
// f32 weights. matmul_shared.wgsl binds the KV cache only where the device
// has the storage buffers for it (kvEpilogueBuffers); Kernel.BindsKV tells.
func NewKernel(dev *wgpu.Device, name string, f16 bool) (*Kernel, error) {
	src, err := loadReplacing(name, f16, deviceIncludes(dev))
	if err != nil {
		return nil, err
	}
	label := strings.TrimSuffix(name, ".wgsl") + kvFreeLabel(src)
	if f16 && strings.HasPrefix(src.Text, "enable f16;") { // Variant made an f16 text
		label += "[f16]"
	}
	return compileKernel(dev, label+".wgsl", src, 0)
}

// compileKernel compiles the expanded text src as the kernel label; its
// pipelines require the subgroup size sgSize when it is not 0.
func compileKernel(dev *wgpu.Device, label string, src wgsl.Expanded, sgSize uint32) (*Kernel, error) {
	wi, err := workgroupInit()
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", label, err)
	}
	mod, err := dev.CreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: label, WGSL: src.Text, WorkgroupInit: wi})
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", label, src.MapErrors(err))
	}
	refl, ok := mod.Reflection()
	if !ok {
		return nil, fmt.Errorf("kernel %s: no reflection", label)
	}
	return &Kernel{name: label, src: src, dev: dev, mod: mod, refl: refl, sgSize: sgSize, pipes: map[constSet]*Pipeline{}}, nil
}

// Name is the kernel's file name, with "[f16]" for the f16-weight variant
// and "[nokv]" for a matmul kernel without the KV cache bindings.
func (k *Kernel) Name() string { return k.name }

// BindsKV reports whether the kernel binds a KV cache (kc): a matmul kernel
// that takes EPI_QKV, or one of the kernels that always bind it.
func (k *Kernel) BindsKV() bool {
	return slices.ContainsFunc(k.refl.Bindings, func(b wgsl.Binding) bool { return b.Name == "kc" })
}

// Reflection is the compiler's description of the kernel's interface.
func (k *Kernel) Reflection() wgsl.Reflection { return k.refl }

// Pipeline returns the kernel's pipeline for the override constants consts
// (by name; those not given keep their defaults), creating it on first use.
func (k *Kernel) Pipeline(consts map[string]float64) (*Pipeline, error) {
	set, err := constsOf(consts)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.name, err)
	}
	return k.pipeline(set)
}

// pipeMaking is a pipeline being created: done closes when p or err is set.
type pipeMaking struct {
	done chan struct{}
	p    *Pipeline
	err  error
}

// pipeline is Pipeline for a constSet, which the forward pass builds without
// a map: a lookup without strings made when the pipeline exists. Pipelines
// of different constants are created concurrently (a driver can take
// seconds for one: compilePipelines); a caller asking for one being created
// waits for it. An error is returned to the callers waiting then, and the
// next call tries again.
func (k *Kernel) pipeline(consts constSet) (*Pipeline, error) {
	k.mu.Lock()
	if p, ok := k.pipes[consts]; ok {
		k.mu.Unlock()
		return p, nil
	}
	if m, ok := k.making[consts]; ok {
		k.mu.Unlock()
		<-m.done
		return m.p, m.err
	}
	m := &pipeMaking{done: make(chan struct{})}
	if k.making == nil {
		k.making = map[constSet]*pipeMaking{}
	}
	k.making[consts] = m
	k.mu.Unlock()
	m.p, m.err = k.newPipeline(consts)
	k.mu.Lock()
	delete(k.making, consts)
	if m.err == nil {
		k.pipes[consts] = m.p
	}
	k.mu.Unlock()
	close(m.done)
	return m.p, m.err
}

// made reports whether the pipeline for consts exists already.
func (k *Kernel) made(consts constSet) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.pipes[consts]
	return ok
}

// newPipeline creates the kernel's pipeline for consts.
func (k *Kernel) newPipeline(consts constSet) (*Pipeline, error) {
	for _, c := range consts.kv[:consts.n] {
		// Every override is settable by name, those computed from others too (the pipeline's compile
		// then takes the value given instead of the initializer).
		if !slices.ContainsFunc(k.refl.Overrides, func(o wgsl.Override) bool { return o.Name == c.name }) {
			return nil, fmt.Errorf("kernel %s: no override %q", k.name, c.name)
		}
	}
	ep := k.refl.EntryPoints[0]
	label := k.name
	if consts.n > 0 {
		label += "{" + consts.String() + "}"
	}
	cp, err := k.dev.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{Label: label, Module: k.mod, EntryPoint: ep.Name, Constants: consts.Map(),
		RequiredSubgroupSize: k.sgSize})
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", label, k.src.MapErrors(err))
	}
	// The compiler computed the workgroup size with these constants (override-expressions included).
	wg, ok := cp.WorkgroupSize()
	if !ok {
		cp.Close()
		return nil, fmt.Errorf("kernel %s: the pipeline does not know its workgroup size", label)
	}
	bgl, err := cp.GetBindGroupLayout(0)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", label, err)
	}
	p := &Pipeline{k: k, label: label, cp: cp, bgl: bgl, WorkgroupSize: wg, bindings: map[string]wgsl.Binding{}}
	for _, bi := range ep.Bindings {
		b := k.refl.Bindings[bi]
		if b.Group != 0 {
			return nil, fmt.Errorf("kernel %s: binding %s is in group %d; kernels use group 0 only", k.name, b.Name, b.Group)
		}
		p.bindings[b.Name] = b
	}
	return p, nil
}

// Pipeline is a kernel specialized with override constants.
type Pipeline struct {
	k     *Kernel
	label string
	cp    *wgpu.ComputePipeline
	bgl   *wgpu.BindGroupLayout
	// WorkgroupSize is the entry point's workgroup size with the constants applied.
	WorkgroupSize [3]uint32
	bindings      map[string]wgsl.Binding // by WGSL variable name
}

// Label names the pipeline: the kernel and its constants.
func (p *Pipeline) Label() string { return p.label }

// Buf is a range of a buffer given to a binding; Size 0 means to the end.
type Buf struct {
	Buffer       *wgpu.Buffer
	Offset, Size uint64
}

// Bind creates a bind group that gives every binding of the entry point, named
// as in the WGSL source, its buffer range. A binding left out, a name the
// kernel does not have, or a range smaller than the binding's minimum size is
// an error.
func (p *Pipeline) Bind(bufs map[string]Buf) (*wgpu.BindGroup, error) {
	entries := make([]wgpu.BindGroupEntry, 0, len(bufs))
	for name, b := range bufs {
		rb, ok := p.bindings[name]
		if !ok {
			return nil, fmt.Errorf("kernel %s: no binding %q", p.label, name)
		}
		if b.Buffer == nil {
			return nil, fmt.Errorf("kernel %s: binding %q: nil buffer", p.label, name)
		}
		size := b.Size
		if size == 0 {
			size = b.Buffer.Size() - b.Offset
		}
		if size < uint64(rb.Size) {
			return nil, fmt.Errorf("kernel %s: binding %q: %d bytes, the kernel reads at least %d", p.label, name, size, rb.Size)
		}
		entries = append(entries, wgpu.BindGroupEntry{Binding: uint32(rb.Binding), Buffer: b.Buffer, Offset: b.Offset, Size: b.Size})
	}
	for name := range p.bindings {
		if _, ok := bufs[name]; !ok {
			return nil, fmt.Errorf("kernel %s: binding %q not given", p.label, name)
		}
	}
	slices.SortFunc(entries, func(a, b wgpu.BindGroupEntry) int { return int(a.Binding) - int(b.Binding) })
	g, err := p.k.dev.CreateBindGroup(&wgpu.BindGroupDescriptor{Label: p.label, Layout: p.bgl, Entries: entries})
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", p.label, err)
	}
	return g, nil
}

// Params are push-constant values by member name of the kernel's
// var<push_constant> struct; each is converted to the member's type (u32, i32
// or f32). The forward pass gives typed structs instead (PushStruct); Params
// serve tests and one-off dispatches.
type Params map[string]float64

// Push encodes params in the layout the compiler reflected for the kernel's
// push-constant block. Every member must be given, and only members.
func (p *Pipeline) Push(params Params) ([]byte, error) {
	pc := p.k.refl.PushConstant
	if pc == nil {
		if len(params) > 0 {
			return nil, fmt.Errorf("kernel %s has no push constants", p.label)
		}
		return nil, nil
	}
	out := make([]byte, (p.k.refl.PushConstantSize+3)&^3)
	for _, m := range pc.Members {
		v, ok := params[m.Name]
		if !ok {
			return nil, fmt.Errorf("kernel %s: push constant %s not given", p.label, m.Name)
		}
		var bits uint32
		switch m.Type {
		case "u32":
			if v < 0 || v > math.MaxUint32 || v != math.Trunc(v) {
				return nil, fmt.Errorf("kernel %s: push constant %s = %v is not a u32", p.label, m.Name, v)
			}
			bits = uint32(v)
		case "i32":
			if v < math.MinInt32 || v > math.MaxInt32 || v != math.Trunc(v) {
				return nil, fmt.Errorf("kernel %s: push constant %s = %v is not an i32", p.label, m.Name, v)
			}
			bits = uint32(int32(v))
		case "f32":
			bits = math.Float32bits(float32(v))
		default:
			return nil, fmt.Errorf("kernel %s: push constant %s has type %s; kernels use u32, i32 and f32", p.label, m.Name, m.Type)
		}
		binary.LittleEndian.PutUint32(out[m.Offset:], bits)
	}
	for name := range params {
		if !slices.ContainsFunc(pc.Members, func(m wgsl.MemberLayout) bool { return m.Name == name }) {
			return nil, fmt.Errorf("kernel %s: no push constant %q", p.label, name)
		}
	}
	return out, nil
}

// Dispatch records one dispatch of groups workgroups with bind group g and the
// encoded push constants pc.
func (p *Pipeline) Dispatch(pass *wgpu.ComputePass, g *wgpu.BindGroup, pc []byte, groups [3]uint32) {
	pass.SetPipeline(p.cp)
	pass.SetBindGroup(0, g)
	if len(pc) > 0 {
		pass.SetPushConstants(0, pc)
	}
	pass.DispatchWorkgroups(groups[0], groups[1], groups[2])
}

// extent is the work of a dispatch as its kernel counts it, turned into
// workgroups by Groups with the pipeline's workgroup size (the compiler's,
// with the pipeline's override values applied), so that no host copy of a
// kernel's WG can disagree with the WGSL. Workgroups along x are spread over
// x and y as grid does, unless y is given.
type extent struct {
	n       int  // invocations (perInvocation) or workgroups (perWorkgroup) along x
	byGroup bool // n counts workgroups
	y       int  // workgroups along y; 0: n is flattened over x and y (grid)
}

// perInvocation is n invocations, one per item, in as many workgroups as
// hold them (kernels index (wid.y * nwg.x + wid.x) * WG + local index).
func perInvocation(n int) extent { return extent{n: n} }

// perWorkgroup is n workgroups, one per item (a row, a tile).
func perWorkgroup(n int) extent { return extent{n: n, byGroup: true} }

// withY is e along x and y workgroups along y (the LM head's vocabulary
// tiles): x is not spread over y.
func (e extent) withY(y int) extent {
	e.y = y
	return e
}

// Groups is the workgroups that run e with pipeline p.
func (p *Pipeline) Groups(e extent) [3]uint32 {
	x := e.n
	if !e.byGroup {
		x = ceilDiv(e.n, int(p.WorkgroupSize[0]))
	}
	if e.y > 0 {
		return [3]uint32{uint32(max(x, 1)), uint32(e.y), 1}
	}
	return grid(x)
}

// ceilDiv is ⌈a / b⌉ for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
	"github.com/x448/float16"
)

// BindingType is the kind of buffer a binding holds.
type BindingType int

const (
	// BindingStorage is var<storage, read_write>.
	BindingStorage BindingType = iota
	// BindingReadOnlyStorage is var<storage, read>.
	BindingReadOnlyStorage
	// BindingUniform is var<uniform>.
	BindingUniform
)

// String is WebGPU's name of the binding type: "storage", "read-only-storage" or "uniform".
func (t BindingType) String() string {
	switch t {
	case BindingStorage:
		return "storage"
	case BindingReadOnlyStorage:
		return "read-only-storage"
	case BindingUniform:
		return "uniform"
	}
	return fmt.Sprintf("BindingType(%d)", int(t))
}

// BindGroupLayoutEntry declares one binding.
type BindGroupLayoutEntry struct {
	Binding uint32
	Type    BindingType
	// MinBindingSize, if not 0, is the fewest bytes a bind group may bind here, checked by CreateBindGroup; a
	// pipeline whose shader needs more for the binding is refused. With 0, each dispatch checks the bound range
	// against the pipeline's shader instead (WGSL modules; a SPIR-V module's needs are not known). An "auto" layout
	// sets it to the WGSL compiler's minimum binding size (wgsl.Binding.Size).
	MinBindingSize uint64
}

// BindGroupLayoutDescriptor configures CreateBindGroupLayout.
type BindGroupLayoutDescriptor struct {
	Label   string
	Entries []BindGroupLayoutEntry
}

// BindGroupLayout is the shape of a bind group (a descriptor set layout).
type BindGroupLayout struct {
	d       *Device
	h       vk.DescriptorSetLayout
	label   string
	entries map[uint32]layoutBinding
}

// layoutBinding is one binding of a layout.
type layoutBinding struct {
	typ     BindingType
	minSize uint64
	what    string // "name: type" of the WGSL variable an "auto" layout made it for, for messages; else ""
}

// CreateBindGroupLayout creates a layout of buffer bindings visible to compute shaders.
func (d *Device) CreateBindGroupLayout(desc *BindGroupLayoutDescriptor) (*BindGroupLayout, error) {
	return d.createBindGroupLayout(desc, nil)
}

// createBindGroupLayout is CreateBindGroupLayout, with the WGSL variables of the bindings an "auto" layout
// makes (by binding) to name in errors.
func (d *Device) createBindGroupLayout(desc *BindGroupLayoutDescriptor, what map[uint32]string) (*BindGroupLayout, error) {
	l := &BindGroupLayout{d: d, label: desc.Label, entries: map[uint32]layoutBinding{}}
	var ar vk.Arena
	defer ar.Release()
	bs := vk.NewSlice[vk.DescriptorSetLayoutBinding](&ar, len(desc.Entries))
	storage := 0
	for i, e := range desc.Entries {
		if _, dup := l.entries[e.Binding]; dup {
			return nil, errorf(ErrBadUsage, "bind group layout %q: binding %d twice", desc.Label, e.Binding)
		}
		l.entries[e.Binding] = layoutBinding{typ: e.Type, minSize: e.MinBindingSize, what: what[e.Binding]}
		bs[i].Binding, bs[i].DescriptorCount, bs[i].StageFlags = e.Binding, 1, vk.ShaderStageComputeBit
		bs[i].DescriptorType = descriptorType(e.Type)
		if e.Type != BindingUniform {
			storage++
		}
	}
	if uint32(storage) > d.limits.MaxStorageBuffersPerShaderStage {
		return nil, errorf(ErrLimit, "bind group layout %q: %d storage buffers, limit %d", desc.Label, storage, d.limits.MaxStorageBuffersPerShaderStage)
	}
	ci := vk.New[vk.DescriptorSetLayoutCreateInfo](&ar)
	ci.BindingCount = uint32(len(bs))
	if len(bs) > 0 {
		ci.PBindings = &bs[0]
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	if err := check("vkCreateDescriptorSetLayout", d.fn.CreateDescriptorSetLayout(d.h, ci, nil, &l.h)); err != nil {
		return nil, fmt.Errorf("bind group layout %q: %w", desc.Label, d.noteLost(err))
	}
	d.live[l] = struct{}{}
	return l, nil
}

func descriptorType(t BindingType) vk.DescriptorType {
	if t == BindingUniform {
		return vk.DescriptorTypeUniformBuffer
	}
	return vk.DescriptorTypeStorageBuffer
}

// Close releases the layout.
func (l *BindGroupLayout) Close() error { return l.d.release(l) }

func (l *BindGroupLayout) describe() string { return fmt.Sprintf("bind group layout %q", l.label) }

func (l *BindGroupLayout) destroy() { l.d.fn.DestroyDescriptorSetLayout(l.d.h, l.h, nil) }

// PipelineLayoutDescriptor configures CreatePipelineLayout.
type PipelineLayoutDescriptor struct {
	Label            string
	BindGroupLayouts []*BindGroupLayout // group i is @group(i)
	PushConstantSize uint32             // bytes of var<push_constant>, a multiple of 4
}

// PipelineLayout is the bind group layouts and push constant size of a pipeline.
type PipelineLayout struct {
	d        *Device
	h        vk.PipelineLayout
	label    string
	groups   []*BindGroupLayout
	pushSize uint32
}

// CreatePipelineLayout creates a pipeline layout.
func (d *Device) CreatePipelineLayout(desc *PipelineLayoutDescriptor) (*PipelineLayout, error) {
	if uint32(len(desc.BindGroupLayouts)) > d.limits.MaxBindGroups {
		return nil, errorf(ErrLimit, "pipeline layout %q: %d bind groups, limit %d", desc.Label, len(desc.BindGroupLayouts), d.limits.MaxBindGroups)
	}
	if desc.PushConstantSize%4 != 0 || desc.PushConstantSize > d.limits.MaxPushConstantSize {
		return nil, errorf(ErrLimit, "pipeline layout %q: push constant size %d (multiple of 4, at most %d)", desc.Label, desc.PushConstantSize, d.limits.MaxPushConstantSize)
	}
	l := &PipelineLayout{d: d, label: desc.Label, groups: slices.Clone(desc.BindGroupLayouts), pushSize: desc.PushConstantSize}
	var ar vk.Arena
	defer ar.Release()
	sets := vk.NewSlice[vk.DescriptorSetLayout](&ar, len(desc.BindGroupLayouts))
	for i, g := range desc.BindGroupLayouts {
		if g == nil || g.d != d {
			return nil, errorf(ErrBadUsage, "pipeline layout %q: bind group layout %d is nil or from another device", desc.Label, i)
		}
		sets[i] = g.h
	}
	ci := pipelineLayoutInfo(&ar, sets, desc.PushConstantSize)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	for i, g := range l.groups { // the layout's bind group layouts live as long as it does
		if err := d.pin(g); err != nil {
			for _, g := range l.groups[:i] {
				d.unpin(g)
			}
			return nil, fmt.Errorf("pipeline layout %q: bind group layout %d: %w", desc.Label, i, err)
		}
	}
	if err := check("vkCreatePipelineLayout", d.fn.CreatePipelineLayout(d.h, ci, nil, &l.h)); err != nil {
		for _, g := range l.groups {
			d.unpin(g)
		}
		return nil, fmt.Errorf("pipeline layout %q: %w", desc.Label, d.noteLost(err))
	}
	d.live[l] = struct{}{}
	return l, nil
}

// pipelineLayoutInfo is the create info, in ar, of a compute pipeline layout of the set layouts sets and push bytes of
// push constants ([0, push)).
func pipelineLayoutInfo(ar *vk.Arena, sets []vk.DescriptorSetLayout, push uint32) *vk.PipelineLayoutCreateInfo {
	ci := vk.New[vk.PipelineLayoutCreateInfo](ar)
	ci.SetLayoutCount = uint32(len(sets))
	if len(sets) > 0 {
		ci.PSetLayouts = &sets[0]
	}
	if push > 0 {
		r := vk.New[vk.PushConstantRange](ar)
		r.StageFlags, r.Size = vk.ShaderStageComputeBit, push
		ci.PushConstantRangeCount, ci.PPushConstantRanges = 1, r
	}
	return ci
}

// autoLayout builds the layout of WebGPU's layout: "auto" for an entry point of a WGSL module, from its
// reflection: one bind group layout per group up to the highest the entry point uses (a group it does not use is
// empty), each binding typed by its address space and access, and the push-constant block's size. Layouts are
// kept per module and entry point, so pipelines from one module with different constants share them and accept
// each other's bind groups.
func (d *Device) autoLayout(m *ShaderModule, entry string) (*PipelineLayout, error) {
	if m.refl == nil {
		return nil, errorf(ErrBadUsage, "module %q was made from SPIR-V: an explicit Layout is required", m.label)
	}
	d.mu.Lock()
	l, ok := m.auto[entry]
	d.mu.Unlock()
	if ok {
		return l, nil
	}
	ep, err := m.entryPoint(entry)
	if err != nil {
		return nil, err
	}
	var groups [][]BindGroupLayoutEntry
	var what []map[uint32]string
	for _, bi := range ep.Bindings {
		b := m.refl.Bindings[bi]
		for len(groups) <= b.Group {
			groups = append(groups, nil)
			what = append(what, map[uint32]string{})
		}
		groups[b.Group] = append(groups[b.Group], BindGroupLayoutEntry{Binding: uint32(b.Binding), Type: bindingType(b),
			MinBindingSize: uint64(b.Size)})
		what[b.Group][uint32(b.Binding)] = b.Name + ": " + b.Type
	}
	bgls := make([]*BindGroupLayout, len(groups))
	for g, entries := range groups {
		bgl, err := d.createBindGroupLayout(&BindGroupLayoutDescriptor{Label: fmt.Sprintf("%s/%s group %d", m.label, entry, g), Entries: entries}, what[g])
		if err != nil {
			return nil, err
		}
		bgls[g] = bgl
	}
	push := uint32(0)
	if m.refl.PushConstant != nil {
		push = uint32(m.refl.PushConstantSize+3) &^ 3
	}
	l, err = d.CreatePipelineLayout(&PipelineLayoutDescriptor{Label: m.label + "/" + entry, BindGroupLayouts: bgls, PushConstantSize: push})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := m.auto[entry]; ok { // another goroutine was first
		return old, nil
	}
	if m.auto == nil {
		m.auto = map[string]*PipelineLayout{}
	}
	m.auto[entry] = l
	return l, nil
}

// entryPoint is the reflection of a WGSL module's entry point.
func (m *ShaderModule) entryPoint(name string) (*wgsl.EntryPoint, error) {
	for i := range m.refl.EntryPoints {
		if m.refl.EntryPoints[i].Name == name {
			return &m.refl.EntryPoints[i], nil
		}
	}
	return nil, errorf(ErrBadUsage, "module %q has no reflected entry point %q", m.label, name)
}

// sizeCheck is a binding whose bound range each dispatch checks: the pipeline's shader needs min bytes there and
// the layout's MinBindingSize, 0, left it to the dispatch.
type sizeCheck struct {
	group   int
	binding uint32
	min     uint64
	what    string // the WGSL variable, "name: type"
}

// checkLayout checks an explicit layout against the bindings a WGSL entry point uses, as WebGPU does at pipeline
// creation: each must be in the layout with a type that fits its address space and access, and with a
// MinBindingSize, where set, of at least the variable's minimum binding size. It returns the bindings whose
// layout left the size to each dispatch.
func checkLayout(l *PipelineLayout, m *ShaderModule, ep *wgsl.EntryPoint) ([]sizeCheck, error) {
	var late []sizeCheck
	for _, bi := range ep.Bindings {
		b := m.refl.Bindings[bi]
		at := fmt.Sprintf("@group(%d) @binding(%d) (%s: %s)", b.Group, b.Binding, b.Name, b.Type)
		var lb layoutBinding
		ok := b.Group < len(l.groups)
		if ok {
			lb, ok = l.groups[b.Group].entries[uint32(b.Binding)]
		}
		need := bindingType(b)
		switch {
		case !ok:
			return nil, errorf(ErrBadUsage, "layout %q lacks %s", l.label, at)
		case lb.typ != need && !(need == BindingReadOnlyStorage && lb.typ == BindingStorage):
			return nil, errorf(ErrBadUsage, "layout %q: %s is a %s binding, the layout's a %s", l.label, at, need, lb.typ)
		case lb.minSize != 0 && lb.minSize < uint64(b.Size):
			return nil, errorf(ErrBadUsage, "layout %q: %s needs at least %d bytes, above the layout's MinBindingSize %d", l.label, at, b.Size, lb.minSize)
		case lb.minSize < uint64(b.Size):
			late = append(late, sizeCheck{group: b.Group, binding: uint32(b.Binding), min: uint64(b.Size), what: b.Name + ": " + b.Type})
		}
	}
	return late, nil
}

// bindingType is the binding type a WGSL resource variable needs.
func bindingType(b wgsl.Binding) BindingType {
	switch b.Kind {
	case "uniform":
		return BindingUniform
	case "read-only-storage":
		return BindingReadOnlyStorage
	}
	return BindingStorage
}

// GetBindGroupLayout returns the layout of bind group index of the pipeline's layout (for an "auto" layout, the
// one its module's reflection gave), for CreateBindGroup.
func (p *ComputePipeline) GetBindGroupLayout(index int) (*BindGroupLayout, error) {
	if index < 0 || index >= len(p.layout.groups) {
		return nil, errorf(ErrBadUsage, "pipeline %q has %d bind groups, not %d", p.label, len(p.layout.groups), index+1)
	}
	return p.layout.groups[index], nil
}

// PushConstantSize is the bytes of push constants the pipeline's layout holds.
func (p *ComputePipeline) PushConstantSize() uint32 { return p.layout.pushSize }

// Close releases the layout.
func (l *PipelineLayout) Close() error { return l.d.release(l) }

func (l *PipelineLayout) describe() string { return fmt.Sprintf("pipeline layout %q", l.label) }

func (l *PipelineLayout) destroy() {
	l.d.fn.DestroyPipelineLayout(l.d.h, l.h, nil)
	for _, g := range l.groups {
		l.d.unpin(g)
	}
}

// ComputePipelineDescriptor configures CreateComputePipeline.
type ComputePipelineDescriptor struct {
	Label string
	// Layout is the pipeline's layout; nil asks for WebGPU's "auto" layout, built from the WGSL compiler's
	// reflection of the module (the bindings the entry point uses, its push-constant block) and read back with
	// ComputePipeline.GetBindGroupLayout. A module made from SPIR-V needs an explicit Layout.
	Layout     *PipelineLayout
	Module     *ShaderModule
	EntryPoint string // default "main"
	// Constants sets override constants by name or by numeric ID, as WebGPU does. For a WGSL module the entry point
	// is compiled with them (an override not set takes its initializer, evaluated from the others); for SPIR-V they
	// are specialization constants.
	Constants map[string]float64
	// RequiredSubgroupSize, if not 0, fixes the subgroup size (feature subgroup-size-control; a power of two
	// within Limits.MinSubgroupSize..MaxSubgroupSize). A shader using cooperative matrices (WGSL subgroup matrices
	// on a device with FeatureCooperativeMatrix) needs it where the adapter's subgroup size varies, and a workgroup
	// size x that is a multiple of it: such pipelines run with whole subgroups only (see coopmat.go).
	RequiredSubgroupSize uint32
}

// ComputePipeline is a compiled compute kernel.
type ComputePipeline struct {
	d      *Device
	h      vk.Pipeline
	label  string
	layout *PipelineLayout
	wgSize [3]uint32 // WGSL modules: the workgroup size with the constants applied
	late   []sizeCheck
	race   *pipelineRace      // DeviceDescriptor.RaceCheck, WGSL modules
	stats  PipelineStatistics // the driver's, with FeaturePipelineStatistics
}

// WorkgroupSize is the entry point's workgroup size with the pipeline's constants applied, as the WGSL compiler
// computed it; ok is false for a pipeline made from a SPIR-V module.
func (p *ComputePipeline) WorkgroupSize() (size [3]uint32, ok bool) {
	return p.wgSize, p.wgSize[0] != 0
}

// CreateComputePipeline compiles a pipeline through the device's pipeline cache.
func (d *Device) CreateComputePipeline(desc *ComputePipelineDescriptor) (*ComputePipeline, error) {
	if desc.Module == nil || desc.Module.d != d || (desc.Layout != nil && desc.Layout.d != d) {
		return nil, errorf(ErrBadUsage, "pipeline %q: a module is required, and module and layout must be from this device", desc.Label)
	}
	entry := desc.EntryPoint
	if entry == "" {
		entry = "main"
	}
	if !desc.Module.entries[entry] {
		return nil, errorf(ErrBadUsage, "pipeline %q: module %q has no compute entry point %q", desc.Label, desc.Module.label, entry)
	}
	// The module is held, and Device.Close waits, until the pipeline is made (the compile runs with d.mu released).
	d.mu.Lock()
	err := d.usable()
	if err == nil {
		err = d.pin(desc.Module)
	}
	if err == nil {
		d.creating++
	}
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
	}
	defer func() { // after every other deferred call, the temporary VkShaderModule's destruction included
		d.mu.Lock()
		d.unpin(desc.Module)
		if d.creating--; d.creating == 0 {
			d.queue.idle.Broadcast()
		}
		d.mu.Unlock()
	}()
	layout := desc.Layout
	var late []sizeCheck
	if layout == nil {
		var err error
		if layout, err = d.autoLayout(desc.Module, entry); err != nil {
			return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
		}
	} else if desc.Module.refl != nil {
		ep, err := desc.Module.entryPoint(entry)
		if err == nil {
			late, err = checkLayout(layout, desc.Module, ep)
		}
		if err != nil {
			return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
		}
	}
	d.mu.Lock()
	err = d.pin(layout) // the pipeline's, for its whole life: its dispatches bind with the layout
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
	}
	made := false
	defer func() {
		if !made {
			d.mu.Lock()
			d.unpin(layout)
			d.mu.Unlock()
		}
	}()
	p := &ComputePipeline{d: d, label: desc.Label, layout: layout, late: late}
	module := desc.Module.h
	coop := desc.Module.coop
	if wm := desc.Module.wgsl; wm != nil {
		// WGSL: this entry point alone, its overrides replaced by their values (errors here are
		// pipeline-creation errors: a bad constant, an override-expression that fails once evaluated).
		sp, err := wm.Specialize(entry, desc.Constants)
		if err != nil {
			return nil, fmt.Errorf("%w: pipeline %q: %w", ErrBadUsage, desc.Label, err)
		}
		if err := d.checkWorkgroupSize(sp.WorkgroupSize); err != nil {
			return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
		}
		p.wgSize = sp.WorkgroupSize
		if err := d.checkCapabilities(fmt.Sprintf("pipeline %q", desc.Label), sp.SPIRV); err != nil {
			return nil, err
		}
		if n, ok := workgroupBytes(sp.SPIRV); ok && n > uint64(d.limits.MaxComputeWorkgroupStorageSize) {
			return nil, errorf(ErrLimit, "pipeline %q: %d bytes of workgroup memory, above the device's limit %d", desc.Label, n, d.limits.MaxComputeWorkgroupStorageSize)
		}
		coop = usesCooperativeMatrix(sp.SPIRV)
		if module, err = d.createVkShaderModule(desc.Label, sp.SPIRV); err != nil {
			return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
		}
		// Pipelines outlive their shader modules: this one is needed only while the pipeline is created.
		defer d.fn.DestroyShaderModule(d.h, module, nil)
		if d.race != nil {
			if p.race, err = d.newPipelineRace(desc.Label, layout, sp); err != nil {
				return nil, err
			}
			defer func() {
				if !made {
					d.fn.DestroyPipelineLayout(d.h, p.race.layout, nil)
				}
			}()
		}
	}
	var ar vk.Arena
	defer ar.Release()
	ci := vk.New[vk.ComputePipelineCreateInfo](&ar)
	ci.Layout, ci.BasePipelineIndex = layout.h, -1
	if p.race != nil {
		ci.Layout = p.race.layout
	}
	st := &ci.Stage
	st.SType = vk.StructureTypePipelineShaderStageCreateInfo
	st.Stage, st.Module, st.PName = vk.ShaderStageComputeBit, module, ar.CString(entry)
	if len(desc.Constants) > 0 && desc.Module.wgsl == nil {
		si, err := specialization(&ar, desc.Module, desc.Constants)
		if err != nil {
			return nil, fmt.Errorf("pipeline %q: %w", desc.Label, err)
		}
		st.PSpecializationInfo = si
	}
	if n := desc.RequiredSubgroupSize; n != 0 {
		if !d.features[FeatureSubgroupSizeControl] {
			return nil, errorf(ErrMissingFeature, "pipeline %q: RequiredSubgroupSize needs %s", desc.Label, FeatureSubgroupSizeControl)
		}
		if n&(n-1) != 0 || n < d.limits.MinSubgroupSize || n > d.limits.MaxSubgroupSize {
			return nil, errorf(ErrLimit, "pipeline %q: subgroup size %d not a power of two in %d..%d", desc.Label, n, d.limits.MinSubgroupSize, d.limits.MaxSubgroupSize)
		}
		rs := vk.New[vk.PipelineShaderStageRequiredSubgroupSizeCreateInfo](&ar)
		rs.RequiredSubgroupSize = n
		st.PNext = unsafe.Pointer(rs)
	}
	if coop {
		if !d.features[FeatureCooperativeMatrix] {
			return nil, errorf(ErrMissingFeature, "pipeline %q: module %q uses cooperative matrices, which need %s", desc.Label, desc.Module.label, FeatureCooperativeMatrix)
		}
		full, err := cooperativeSubgroups(desc.Label, d.limits, desc.RequiredSubgroupSize, p.wgSize[0], d.fullGroups)
		if err != nil {
			return nil, err
		}
		if full {
			st.Flags |= vk.PipelineShaderStageCreateRequireFullSubgroupsBit
		}
	}
	capture := d.features[FeaturePipelineStatistics]
	if capture {
		ci.Flags |= vk.PipelineCreateCaptureStatisticsBitKHR
	}
	// Compiling can take long on real drivers; the pipeline cache is internally synchronized, so other work goes on.
	if compileHook != nil {
		compileHook()
	}
	r := d.fn.CreateComputePipelines(d.h, d.cache, 1, ci, nil, &p.h)
	if r == vk.Success && capture {
		p.stats = d.pipelineStatistics(p.h, desc.Label)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := check("vkCreateComputePipelines", r); err != nil {
		return nil, fmt.Errorf("pipeline %q: %w", desc.Label, d.noteLost(err))
	}
	if d.closed { // Close waits for this call to return before it destroys the device
		d.fn.DestroyPipeline(d.h, p.h, nil)
		return nil, fmt.Errorf("pipeline %q: %w", desc.Label, ErrClosed)
	}
	made = true
	d.live[p] = struct{}{}
	if capture {
		d.stats = append(d.stats, p.stats)
	}
	return p, nil
}

// compileHook, when set (tests only), runs with d.mu released just before a pipeline is compiled.
var compileHook func()

// checkWorkgroupSize refuses a workgroup size beyond the device's limits (each dimension, and the invocations of
// one workgroup), which Vulkan leaves undefined.
func (d *Device) checkWorkgroupSize(wg [3]uint32) error {
	maxes := [3]uint32{d.limits.MaxComputeWorkgroupSizeX, d.limits.MaxComputeWorkgroupSizeY, d.limits.MaxComputeWorkgroupSizeZ}
	for i, n := range wg {
		if n > maxes[i] {
			return errorf(ErrLimit, "workgroup size %v: %c is %d, above the device's limit %d", wg, "xyz"[i], n, maxes[i])
		}
	}
	if n := uint64(wg[0]) * uint64(wg[1]) * uint64(wg[2]); n > uint64(d.limits.MaxComputeInvocationsPerWorkgroup) {
		return errorf(ErrLimit, "workgroup size %v: %d invocations, above the device's limit %d", wg, n, d.limits.MaxComputeInvocationsPerWorkgroup)
	}
	return nil
}

// specialization encodes override constants as VkSpecializationInfo, converting each to its declared type.
func specialization(ar *vk.Arena, m *ShaderModule, consts map[string]float64) (*vk.SpecializationInfo, error) {
	keys := make([]string, 0, len(consts))
	for k := range consts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	entries := vk.NewSlice[vk.SpecializationMapEntry](ar, len(keys))
	var data []byte
	seen := map[uint32]string{}
	for i, k := range keys {
		sc, ok := m.specs[k]
		if !ok {
			return nil, errorf(ErrBadUsage, "module %q has no override constant %q", m.label, k)
		}
		if other, dup := seen[sc.id]; dup {
			return nil, errorf(ErrBadUsage, "override constant %q set twice (also as %q)", k, other)
		}
		seen[sc.id] = k
		v := consts[k]
		off := len(data)
		switch {
		case sc.kind == 'b':
			var b uint32
			if v != 0 {
				b = 1
			}
			data = binary.LittleEndian.AppendUint32(data, b)
		case sc.kind == 'f' && sc.width == 16:
			data = binary.LittleEndian.AppendUint16(data, float16.Fromfloat32(float32(v)).Bits())
		case sc.kind == 'f' && sc.width == 32:
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
		case sc.kind == 'f' && sc.width == 64:
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
		case sc.kind == 'i' && sc.width == 32:
			if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
				return nil, errorf(ErrBadUsage, "override constant %q: %v is not an i32", k, v)
			}
			data = binary.LittleEndian.AppendUint32(data, uint32(int32(v)))
		case sc.kind == 'u' && sc.width == 32:
			if v != math.Trunc(v) || v < 0 || v > math.MaxUint32 {
				return nil, errorf(ErrBadUsage, "override constant %q: %v is not a u32", k, v)
			}
			data = binary.LittleEndian.AppendUint32(data, uint32(v))
		default:
			return nil, errorf(ErrBadUsage, "override constant %q: unsupported type %c%d", k, sc.kind, sc.width)
		}
		entries[i] = vk.SpecializationMapEntry{ConstantID: sc.id, Offset: uint32(off), Size: uintptr(len(data) - off)}
	}
	si := vk.New[vk.SpecializationInfo](ar)
	si.MapEntryCount, si.PMapEntries = uint32(len(entries)), &entries[0]
	si.DataSize, si.PData = uintptr(len(data)), ar.Bytes(data)
	return si, nil
}

// Close releases the pipeline.
func (p *ComputePipeline) Close() error { return p.d.release(p) }

func (p *ComputePipeline) describe() string { return fmt.Sprintf("compute pipeline %q", p.label) }

func (p *ComputePipeline) destroy() {
	p.d.fn.DestroyPipeline(p.d.h, p.h, nil)
	if p.race != nil {
		p.d.fn.DestroyPipelineLayout(p.d.h, p.race.layout, nil)
	}
	p.d.unpin(p.layout)
}

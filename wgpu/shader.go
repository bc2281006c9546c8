package wgpu

import (
	"encoding/binary"
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// ShaderModuleDescriptor configures CreateShaderModule: SPIR-V words, or WGSL source, which is compiled
// by package wgpu/wgsl (Label names the source in its diagnostics: "label:LINE:COL: error: ...").
type ShaderModuleDescriptor struct {
	Label string
	SPIRV []uint32
	WGSL  string
	// WorkgroupInit is how a WGSL module's workgroup memory starts: WGSL's zero value by default; see
	// wgsl.WorkgroupInit for leaving it as it is (code known to write before it reads) or poisoning it (tests).
	WorkgroupInit wgsl.WorkgroupInit
}

// ShaderModule is shader code with its "override" constants. A module made from SPIR-V is a VkShaderModule whose
// overrides are specialization constants; a module made from WGSL is checked when created and compiled per pipeline
// for one entry point with the pipeline's constants (as Dawn does), so every valid WGSL module is accepted.
type ShaderModule struct {
	d       *Device
	h       vk.ShaderModule // SPIR-V modules only
	label   string
	specs   map[string]specConst // SPIR-V modules: by name and by decimal ID
	entries map[string]bool
	coop    bool                       // SPIR-V modules: declares the CooperativeMatrixKHR capability
	wgsl    *wgsl.Module               // the compiled WGSL module; nil for SPIR-V
	refl    *wgsl.Reflection           // the compiler's description of a WGSL module; nil for SPIR-V
	auto    map[string]*PipelineLayout // "auto" layouts by entry point, guarded by d.mu
}

// specConst is an OpSpecConstant* of the module.
type specConst struct {
	id    uint32
	kind  byte // 'b' bool, 'i' signed int, 'u' unsigned int, 'f' float
	width uint32
}

// CreateShaderModule creates a shader module from SPIR-V or WGSL. WGSL is parsed and checked now (errors are
// "label:LINE:COL: error: ..." diagnostics); its SPIR-V is made per pipeline by CreateComputePipeline.
func (d *Device) CreateShaderModule(desc *ShaderModuleDescriptor) (*ShaderModule, error) {
	if desc.SPIRV == nil && desc.WGSL != "" {
		return d.createWGSLModule(desc)
	}
	code := desc.SPIRV
	specs, entries, err := reflectSPIRV(code)
	if err != nil {
		return nil, fmt.Errorf("shader %q: %w", desc.Label, err)
	}
	if err := d.checkCapabilities(fmt.Sprintf("shader %q", desc.Label), code); err != nil {
		return nil, err
	}
	m := &ShaderModule{d: d, label: desc.Label, specs: specs, entries: entries, coop: usesCooperativeMatrix(code)}
	if m.h, err = d.createVkShaderModule(desc.Label, code); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		d.fn.DestroyShaderModule(d.h, m.h, nil)
		return nil, err
	}
	d.live[m] = struct{}{}
	return m, nil
}

// createWGSLModule compiles WGSL source: a module of no Vulkan object of its own until its pipelines are made.
func (d *Device) createWGSLModule(desc *ShaderModuleDescriptor) (*ShaderModule, error) {
	name := desc.Label
	if name == "" {
		name = "shader.wgsl"
	}
	opt := d.wgslOptions()
	opt.WorkgroupInit = desc.WorkgroupInit
	mod, err := wgsl.Compile(name, desc.WGSL, opt)
	if err != nil {
		return nil, err
	}
	if err := d.checkRaceGroups(name, &mod.Reflection); err != nil {
		return nil, err
	}
	if d.features[FeatureCooperativeMatrix] {
		if err := checkMatrixConfigs(name, mod.Reflection.MatrixConfigs, d.CooperativeMatrixConfigs()); err != nil {
			return nil, err
		}
	}
	m := &ShaderModule{d: d, label: desc.Label, entries: map[string]bool{}, wgsl: mod, refl: &mod.Reflection}
	for _, ep := range mod.Reflection.EntryPoints {
		m.entries[ep.Name] = true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	d.live[m] = struct{}{}
	return m, nil
}

// wgslOptions are the compiler's options for this device: uniform buffers may take the storage layout where it
// enabled uniformBufferStandardLayout, subgroup matrices become SPV_KHR_cooperative_matrix exactly when it enabled
// FeatureCooperativeMatrix (ordinary invocation code otherwise), and loops over register arrays are unrolled on
// every device but a CPU (wgsl.Options.UnrollRegisters).
func (d *Device) wgslOptions() wgsl.Options {
	return wgsl.Options{UniformStandardLayout: d.adapter.stdUniform, CooperativeMatrix: d.features[FeatureCooperativeMatrix],
		UnrollRegisters: d.adapter.info.DeviceType != deviceTypeName(vk.PhysicalDeviceTypeCpu), RaceCheck: d.raceOptions()}
}

// createVkShaderModule makes a VkShaderModule of SPIR-V words.
func (d *Device) createVkShaderModule(label string, code []uint32) (vk.ShaderModule, error) {
	var ar vk.Arena
	defer ar.Release()
	ci := vk.New[vk.ShaderModuleCreateInfo](&ar)
	ci.CodeSize, ci.PCode = uintptr(4*len(code)), vk.Copy(&ar, code)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return 0, err
	}
	var h vk.ShaderModule
	if err := check("vkCreateShaderModule", d.fn.CreateShaderModule(d.h, ci, nil, &h)); err != nil {
		return 0, fmt.Errorf("shader %q: %w", label, d.noteLost(err))
	}
	return h, nil
}

// Reflection is the WGSL compiler's description of the module's interface (bindings with their host layout,
// push constants, workgroup sizes, overrides); ok is false for a module created from SPIR-V.
func (m *ShaderModule) Reflection() (r wgsl.Reflection, ok bool) {
	if m.refl == nil {
		return wgsl.Reflection{}, false
	}
	return *m.refl, true
}

// Close releases the module; pipelines created from it stay valid.
func (m *ShaderModule) Close() error { return m.d.release(m) }

func (m *ShaderModule) describe() string { return fmt.Sprintf("shader module %q", m.label) }

func (m *ShaderModule) destroy() {
	if m.h != 0 {
		m.d.fn.DestroyShaderModule(m.d.h, m.h, nil)
	}
}

// SPIR-V opcodes the reflection reads.
const (
	opName              = 5
	opEntryPoint        = 15
	opTypeBool          = 20
	opTypeInt           = 21
	opTypeFloat         = 22
	opSpecConstantTrue  = 48
	opSpecConstantFalse = 49
	opSpecConstant      = 50
	opDecorate          = 71
	decorationSpecID    = 1
)

// operandCount is the minimum operand count of the opcodes reflectSPIRV reads.
var operandCount = map[uint32]int{opName: 2, opEntryPoint: 3, opTypeBool: 1, opTypeInt: 3, opTypeFloat: 2,
	opSpecConstantTrue: 2, opSpecConstantFalse: 2, opSpecConstant: 3, opDecorate: 2}

// reflectSPIRV finds the specialization constants (name, SpecId, type) and the compute entry points.
func reflectSPIRV(code []uint32) (map[string]specConst, map[string]bool, error) {
	if len(code) < 5 || code[0] != 0x07230203 {
		return nil, nil, errorf(ErrBadUsage, "not SPIR-V (bad magic or too short)")
	}
	names := map[uint32]string{}
	specIDs := map[uint32]uint32{}
	types := map[uint32]specConst{}
	consts := map[uint32]uint32{} // result id -> type id
	entries := map[string]bool{}
	for i := 5; i < len(code); {
		op, n := code[i]&0xffff, int(code[i]>>16)
		if n == 0 || i+n > len(code) {
			return nil, nil, errorf(ErrBadUsage, "malformed SPIR-V at word %d", i)
		}
		w := code[i+1 : i+n]
		if need := operandCount[op]; len(w) < need {
			return nil, nil, errorf(ErrBadUsage, "malformed SPIR-V: opcode %d at word %d has %d operands", op, i, len(w))
		}
		switch op {
		case opName:
			names[w[0]] = spirvString(w[1:])
		case opEntryPoint:
			if w[0] == 5 { // GLCompute
				entries[spirvString(w[2:])] = true
			}
		case opDecorate:
			if len(w) >= 3 && w[1] == decorationSpecID {
				specIDs[w[0]] = w[2]
			}
		case opTypeBool:
			types[w[0]] = specConst{kind: 'b', width: 32}
		case opTypeInt:
			k := byte('u')
			if w[2] != 0 {
				k = 'i'
			}
			types[w[0]] = specConst{kind: k, width: w[1]}
		case opTypeFloat:
			types[w[0]] = specConst{kind: 'f', width: w[1]}
		case opSpecConstantTrue, opSpecConstantFalse, opSpecConstant:
			consts[w[1]] = w[0]
		}
		i += n
	}
	specs := map[string]specConst{}
	for id, ty := range consts {
		sid, ok := specIDs[id]
		if !ok {
			continue
		}
		sc := types[ty]
		sc.id = sid
		specs[fmt.Sprint(sid)] = sc
		if name := names[id]; name != "" {
			specs[name] = sc
		}
	}
	return specs, entries, nil
}

func spirvString(w []uint32) string {
	b := make([]byte, 0, 4*len(w))
	for _, x := range w {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

package wgsl

import "fmt"

// Options tunes Compile. The zero value is ready to use.
type Options struct {
	// NoIndexClamp drops the clamping of run-time indices into arrays,
	// matrices and vectors (and of constant indices into runtime-sized
	// arrays), for a module whose host code guarantees every
	// index is in bounds: an out-of-bounds access is then undefined
	// behaviour. Clamping (the WGSL guarantee that no access leaves its
	// memory) is the default.
	NoIndexClamp bool
	// UniformStandardLayout lifts the extra layout rules of the uniform
	// address space (array strides and the offsets of arrays and structs
	// in multiples of 16), so uniform buffers take the storage layout, as
	// WGSL's uniform_buffer_standard_layout language feature allows. Only a
	// device with Vulkan's uniformBufferStandardLayout feature enabled may
	// run such a module; package wgpu sets this when it enabled the feature.
	UniformStandardLayout bool
	// CooperativeMatrix emits the subgroup matrices of
	// chromium_experimental_subgroup_matrix as SPV_KHR_cooperative_matrix
	// (capability CooperativeMatrixKHR): only a device with Vulkan's
	// cooperativeMatrix feature enabled may run such a module; package wgpu
	// sets this when it enabled the feature. False (the default) lowers them
	// to ordinary invocation code (see lower_matrix.go) with the same results
	// up to float rounding, which every device with subgroup arithmetic runs
	// (the lowered subgroupMatrixStore numbers the active invocations with
	// subgroup adds, capability GroupNonUniformArithmetic).
	CooperativeMatrix bool
	// UnrollLoops unrolls (or, where the trip count is not yet known, marks
	// with LoopControl Unroll) the loops over arrays of subgroup matrices as
	// CooperativeMatrix does (see unroll.go), also where the matrices are
	// lowered: tests set it to run the unrolled code on devices without
	// matrix units. No result changes.
	UnrollLoops bool
	// UnrollRegisters unrolls the loops whose counter indexes a register
	// array (see unroll.go), as CooperativeMatrix does, in a module without
	// native matrices: for a GPU's driver, which otherwise may decline a long
	// loop and keep the whole array in scratch memory. Package wgpu sets it
	// on every device but a CPU's, whose LLVM-based compilers take many
	// times longer on the unrolled code (Mesa 25's lavapipe: minutes for one
	// attention kernel at head size 128) and gain nothing. No result changes.
	UnrollRegisters bool
	// WorkgroupInit is how workgroup memory starts: WGSL's zero value
	// (WorkgroupZero, the default), as it is (WorkgroupUninitialized), or
	// poisoned (WorkgroupPoison).
	WorkgroupInit WorkgroupInit
	// RaceCheck, if not nil, instruments every access of workgroup memory to
	// find data races between the invocations of a workgroup (accesses of
	// one scalar between the same two barriers, one of them a write), and
	// every non-atomic access of a read_write storage buffer to find them
	// between the invocations of a dispatch (of different workgroups, or of
	// one with no storageBarrier between them; racecheck_storage.go), which
	// a CPU's Vulkan driver runs in an order that hides: a tool for tests,
	// slower (on lavapipe a kernel test with a cold shader cache takes about
	// 1.7x as long). The module declares two storage buffers more (see
	// RaceCheck and racecheck.go), Specialized.RaceShadowWords and
	// RaceBindings give their layout, and Specialized.DecodeRace reads what
	// they found. A module with a workgroup array sized by an override has
	// no whole-module SPIR-V then (NoSPIRV says so); Specialize compiles it.
	RaceCheck *RaceCheck
}

// WorkgroupInit is how a module's workgroup memory starts.
type WorkgroupInit uint8

const (
	// WorkgroupZero gives workgroup memory WGSL's zero value: the
	// workgroup's invocations store zeros, in turn, then synchronize.
	WorkgroupZero WorkgroupInit = iota
	// WorkgroupUninitialized leaves workgroup memory as it is, with no
	// stores and no barrier (Dawn's disable_workgroup_init): only for a
	// module whose every read of workgroup memory follows a write of it in
	// the same workgroup, such as ours, tested with WorkgroupPoison. Reading
	// an element never written then reads another workgroup's leftovers.
	WorkgroupUninitialized
	// WorkgroupPoison fills workgroup memory with poison (NaN floats, -1,
	// the largest u32, true) as WorkgroupZero fills it with zeros: for
	// tests that show a module never reads an element it has not written,
	// which zeros would hide.
	WorkgroupPoison
)

// Module is a compiled WGSL module: checked, described, and ready to be
// specialized per pipeline.
type Module struct {
	// SPIRV is the whole module as SPIR-V, every override a specialization
	// constant. It is nil for valid WGSL that specialization constants cannot
	// express (NoSPIRV says why): a module without an entry point, an
	// override-sized workgroup in a module of several entry points, an array
	// count or workgroup size computed from overrides with more than integer
	// arithmetic, or an @id on an override computed from others. Specialize
	// compiles every module, one entry point at a time.
	SPIRV []uint32
	// NoSPIRV is the reason SPIRV is nil ("" when it is not).
	NoSPIRV    string
	Reflection Reflection

	file    *file    // the parsed source, re-checked by Specialize
	checked *checked // the result of check
	opt     Options
}

// Compile parses, checks and emits one WGSL source file.
func Compile(filename, source string, opt Options) (*Module, error) {
	f, err := parse(filename, source)
	if err != nil {
		return nil, err
	}
	m, err := check(f, opt)
	if err != nil {
		return nil, err
	}
	mod := &Module{NoSPIRV: m.noSPIRV, Reflection: reflectModule(m), file: f, checked: m, opt: opt}
	if mod.NoSPIRV == "" && opt.RaceCheck != nil {
		mod.NoSPIRV = raceUnsized(m)
	}
	if mod.NoSPIRV == "" {
		if mod.SPIRV, _, err = emitInfo(m, opt); err != nil {
			return nil, err
		}
	}
	mod.defaultWorkgroupSizes()
	return mod, nil
}

// CompileSPIRV compiles with the zero Options and returns only the SPIR-V
// words: the shape wgpu.RegisterWGSLCompiler takes, so a program wires the
// compiler into wgpu with wgpu.RegisterWGSLCompiler(wgsl.CompileSPIRV).
func CompileSPIRV(filename, source string) ([]uint32, error) {
	m, err := Compile(filename, source, Options{})
	if err != nil {
		return nil, err
	}
	if m.SPIRV == nil {
		return nil, fmt.Errorf("%s: no whole-module SPIR-V: %s", filename, m.NoSPIRV)
	}
	return m.SPIRV, nil
}

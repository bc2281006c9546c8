package wgsl

// Options tunes Compile. The zero value is ready to use.
type Options struct {
	// NoIndexClamp drops the clamping of run-time indices into arrays,
	// matrices and vectors, for a module whose host code guarantees every
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
}

// Module is a compiled WGSL module.
type Module struct {
	SPIRV      []uint32
	Reflection Reflection
}

// Compile parses, checks and emits one WGSL source file.
func Compile(filename, source string, opt Options) (*Module, error) {
	f, err := Parse(filename, source)
	if err != nil {
		return nil, err
	}
	m, err := check(f, opt)
	if err != nil {
		return nil, err
	}
	words, err := emit(m, opt)
	if err != nil {
		return nil, err
	}
	return &Module{SPIRV: words, Reflection: Reflect(m)}, nil
}

// CompileSPIRV compiles with the zero Options and returns only the SPIR-V
// words: the shape wgpu.RegisterWGSLCompiler takes, so a program wires the
// compiler into wgpu with wgpu.RegisterWGSLCompiler(wgsl.CompileSPIRV).
func CompileSPIRV(filename, source string) ([]uint32, error) {
	m, err := Compile(filename, source, Options{})
	if err != nil {
		return nil, err
	}
	return m.SPIRV, nil
}

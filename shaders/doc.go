// Package shaders holds GPT-2's compute kernels, one WGSL file per operation
// named after its math (layernorm.wgsl, matmul.wgsl, attention.wgsl, ...),
// embedded with go:embed, and the Go code that compiles, binds and dispatches
// them: Kernel and Pipeline here, the GPT-2 forward pass and loss in gpt2*.go.
//
// Tunables (workgroup sizes, tiles) are WGSL override constants, set by name
// when a pipeline is created, so that one module gives a pipeline per device
// choice without recompiling. Bindings are given by their WGSL variable names
// and push constants by their struct member names; both layouts come from the
// WGSL compiler's reflection (wgpu's "auto" layout), never typed again here.
//
// Weights are f32 or f16 in storage: a kernel that reads weights declares
// "alias weight = f32;" and Variant makes its f16 text. Activations, the
// residual stream, accumulation, softmax and logsumexp are f32.
//
// # Variants per adapter
//
// Software rasterizers (lavapipe, SwiftShader: adapter type "cpu") run one
// invocation per SIMD lane of a CPU thread and pay dearly for barriers, so
// they get register-tiled kernels without workgroup memory; GPUs get
// workgroup-memory tiles. Choose picks them from AdapterInfo; every variant
// is tested on every device the tests run on.
//
// Every kernel has a test against the float64 reference in internal/refops on
// random inputs, with sizes that are not multiples of its tiles, and a stated
// tolerance.
//
// Imports: wgpu, wgpu/wgsl and model of this module.
package shaders

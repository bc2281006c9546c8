// Package wgsl compiles WGSL compute shaders to SPIR-V for Vulkan, in pure Go.
//
// Compile is the entry point. Inside, three stages are kept apart, as in
// naga: the parser (source -> syntax tree with byte offsets), the checker
// (names, types, abstract numerics, const-evaluation, address spaces and
// access modes, host-shareable layout, uniformity) and the emitter (checked
// module -> SPIR-V 1.3 words). The emitter takes only the checker's result,
// so it never sees unchecked input; a failure there is a compiler bug,
// reported as *InternalError. The stages, the syntax tree and the checked
// module are unexported; Compile runs all three and returns a Module with its
// Reflection: bindings with their host layout, workgroup sizes and override
// constants, which wgpu uses to build bind group layouts and to set
// overrides by name. Mistakes in the source come back as an ErrorList of
// "file.wgsl:LINE:COL: error: msg", sorted by position; Pretty adds the
// source line and a caret.
//
// Pipelines are compiled as Dawn does: Compile checks the whole module, and
// Module.Specialize emits one entry point with every override's value known
// (the pipeline's constants, else its initializer evaluated from the other
// overrides), so overrides are plain constants there and array counts and
// workgroup sizes are concrete; errors found then (a bad constant, a division
// by zero, a size out of range) are pipeline-creation errors. Module.SPIRV is
// the whole module with overrides as specialization constants, where they can
// express it (Module.NoSPIRV says why not).
//
// # Supported WGSL
//
// Compute shaders only.
//
// Types: bool, i32, u32, f32, f16 (enable f16;), vec2/3/4 and their aliases
// (vec3f, vec4h, ...), matCxR<f32|f16> (mat4x4f, ...), fixed-size and
// runtime-sized arrays, override-sized arrays in workgroup memory, structs
// with @align/@size, atomic<i32|u32>, ptr<space, T>, alias. Abstract
// int/float literals with the automatic conversions.
//
// Declarations: const, override (@id; in Module.SPIRV an override computed
// from others with integer arithmetic becomes a derived specialization
// constant, and one computed with float arithmetic, builtins or conversions
// is computed in the shader; Specialize evaluates them all), let, var in
// the function, private (initialized by const- or override-expressions),
// workgroup, storage (read, read_write), uniform and immediate (push
// constants; also spelled push_constant, as wgpu's extension has it) address
// spaces, const_assert, functions with value and pointer parameters (pointers into
// any address space, to elements and members, runtime-sized buffer arrays
// included; arguments are checked by the WGSL alias analysis).
//
// Statements: if/else, switch, for, while, loop/continuing/break if, break,
// continue, return, assignment, compound assignment (to swizzles too), ++/--,
// phony assignment.
//
// Expressions: all operators (with the matrix products M*v, v*M, M*M, M*s),
// swizzles, indexing, value constructors, conversions, bitcast.
//
// Builtin values: global and local invocation id and index, workgroup id,
// num_workgroups, subgroup invocation id and size (enable subgroups;), and
// linear_indexing's global_invocation_index and workgroup_index.
//
// Builtin functions: the float math functions (exp, log, tanh, sqrt,
// inverseSqrt, pow, fma, floor, ...), abs, min, max, clamp, sign, select, dot,
// length, distance, normalize, cross, faceForward, reflect, refract, mix,
// step, smoothstep, all, any, countOneBits, reverseBits, countLeadingZeros,
// countTrailingZeros,
// firstLeadingBit, firstTrailingBit, extractBits, insertBits, ldexp, frexp,
// modf, quantizeToF16, transpose, determinant, arrayLength, the data packing
// functions (pack/unpack 4x8snorm, 4x8unorm, 2x16snorm, 2x16unorm,
// 2x16float, pack4xI8/U8 and their Clamp forms, unpack4xI8/U8,
// dot4I8Packed, dot4U8Packed), workgroupBarrier, storageBarrier,
// workgroupUniformLoad, the atomics and the subgroup functions (Add, Mul,
// Min, Max, And, Or, Xor, inclusive and exclusive scans, Broadcast,
// BroadcastFirst, Shuffle, ShuffleXor/Up/Down, Elect, All, Any, Ballot) and
// the quad operations (quadBroadcast, quadSwapX, quadSwapY, quadSwapDiagonal).
//
// Entry point inputs are @builtin parameters or structs whose members all
// carry @builtin, subgroup_id and num_subgroups included. Diagnostic
// directives and @diagnostic attributes (functions, statements) are honoured:
// subgroup_uniformity set to off, info or warning silences that rule.
//
// Subgroup matrices (enable chromium_experimental_subgroup_matrix;, Chromium's
// extension): subgroup_matrix_left/right/result<T, cols, rows> of f32, f16,
// i32, u32, i8 or u8, their zero and fill constructors, subgroupMatrixLoad,
// Store (with the layout as a template argument, through arrays of any f32,
// f16, i32 or u32 scalars or vectors, whose bytes they reinterpret; or in
// the older form with a col_major bool), Multiply, MultiplyAccumulate and
// ScalarAdd, ScalarSubtract and ScalarMultiply (builtin_matrix.go), emitted as
// SPV_KHR_cooperative_matrix with Options.CooperativeMatrix and otherwise
// lowered to invocation code any device with subgroups runs
// (lower_matrix.go, lower_matrix_bytes.go). The diagnostic rule
// chromium_experimental.subgroup_matrix_uniformity governs their uniformity
// checks.
//
// Not supported, each with a clear error: textures and samplers, vertex and
// fragment stages.
//
// Uniform buffers keep WGSL's 16-byte rules for array strides and for the
// offsets of arrays and structs, which Vulkan's extended layout needs, unless
// Options.UniformStandardLayout says the device enabled
// uniformBufferStandardLayout: then they take the storage layout, as WGSL's
// language feature uniform_buffer_standard_layout (which `requires` then
// accepts) allows. Package wgpu sets it wherever the device has the feature.
//
// Matrices keep the WGSL layout everywhere. In uniform buffers, where Vulkan
// needs 16-byte matrix strides, a matrix with narrower columns (matCx2<f32>,
// the f16 matrices) is split into its column vectors, as Tint does.
//
// Whole arrays and structs of any size may be loaded from and stored to
// buffers. A large one is copied element by element in a loop, and lets,
// value parameters and results of such types live in function memory, so
// the module does not grow with the array length (SPIR-V 1.3 has no
// OpCopyLogical, and drivers split whole-aggregate values per element).
//
// Every builtin function is described once, in one table (builtinTable):
// its signature rules, its constant evaluation and its emission.
//
// # Semantics the emitted code keeps
//
// Integer division and remainder by zero (and i32 MIN / -1) give the WGSL
// results; shift amounts are taken modulo the bit width; float to integer
// conversions saturate (to the integers the float type holds: 2147483520
// and 4294967040 for f32); dynamic indices into fixed, override-sized and
// runtime-sized buffer arrays are clamped into bounds, except where a small
// sound range analysis (ranges.go: constants, specialized overrides, lets,
// invocation and subgroup builtins, parameters from every call, counters of
// for loops whose bodies cannot change them, conditions and early returns on
// those, u32 arithmetic that cannot wrap) proves an index below a constant
// length, as in the inner loops of the tiled kernels; function, private and
// workgroup memory start zeroed (workgroup memory by all the workgroup's
// invocations in turn, then a barrier; Options.WorkgroupInit may leave it
// as it is, for code that writes before it reads, or poison it, for tests
// of that); barriers are only accepted in control flow
// uniform across the workgroup, subgroup operations in control flow uniform
// within each subgroup (a conservative form of the WGSL uniformity analysis,
// in its two scopes, flow-sensitive for local variables and through
// pointers as the specification's is, checked against Tint on generated
// programs).
//
// Constant i32 and u32 arithmetic wraps, as the specification says;
// AbstractInt arithmetic and shifts that lose bits are errors. The size
// limits are Tint's (limits.go): array and struct types of at most
// 0xffffffff bytes, arrays of fewer than 65536 elements outside storage
// buffers (in variables, lets, consts, parameters and results), and constant
// @workgroup_size dimensions whose product is a u32; the device's limits
// are checked by package wgpu when it makes a pipeline. Large zero values
// in const-expressions are never expanded element by element.
//
// # Tests
//
// Table tests of valid programs (each emitted module, whole or specialized
// per entry point, must pass spirv-val --target-env vulkan1.1 when it is
// installed) and of invalid ones (message
// and line:col), golden reflection and golden diagnostics (notes included:
// diagnostics carry secondary labels such as "previous declaration here"),
// realistic kernels
// in testdata/kernels, generated and mutated programs, a fuzz target
// (FuzzCompile), and, with WGSL_TINT set, differential tests against Tint
// (testdata/tint/oracle.mjs). The execution tests, which run kernels through
// wgpu on a Vulkan device, are in the exectest subpackage.
//
// This package imports nothing of this module; internal/spirv holds the
// SPIR-V tables generated from the Khronos grammar (go generate).
package wgsl

// Package shaders holds the compute kernels of GPT-2 and of the Llama family,
// one WGSL file per operation named after its math (layernorm.wgsl,
// rmsnorm.wgsl, matmul.wgsl, attention.wgsl, ...), embedded with go:embed, and
// the Go code that compiles, binds and dispatches them: Kernel and Pipeline in
// kernel.go, the GPT-2 weights in gpt2.go, its forward pass and loss in
// forward.go (activation memory in arena.go), the Llama family's weights in
// llama.go and its forward pass in forward_llama.go (batches, sessions, the
// LM head with its loss and the top-K are shared).
//
// # The Llama family
//
// Llama 2/3.x, Mistral, Qwen2/2.5 and Qwen3 reuse GPT-2's kernels where the
// math is the same: nn.Linear's (out, in) matrices are transposed at upload,
// one block at a time, into the matmul kernels' (in, out) layout, with
// q_proj, k_proj and v_proj side by side (one matmul) and gate_proj and
// up_proj interleaved column by column, so that one matmul with the SwiGLU
// epilogue (epiSwiGLU) writes silu(gate) * up; absent biases bind a buffer
// of zeros. rmsnorm.wgsl (rmsnorm_subgroup.wgsl with subgroups, on GPUs)
// normalizes; rope_kv_write.wgsl applies Qwen3's q/k norms and the rotation
// (cos and sin from model.RopeTable, float64 angles rounded once, the CPU's
// values) and writes the keys and values into the KV cache, kv_write.wgsl's
// job, so a block is GPT-2's 8 dispatches; attention.wgsl,
// attention_shared.wgsl and attention_shared_subgroup.wgsl take grouped
// key/value heads and head sizes up to 128; embed.wgsl skips the position embeddings (WPE = 0); the LM head may be
// untied (bound in ranges as wte is). The rotary table holds the model's
// positions (at most 128 MiB of it: GPT2.Positions).
//
// Tunables (workgroup sizes, tiles) are WGSL override constants, set by name
// when a pipeline is created, so that one module gives a pipeline per device
// choice without recompiling. The forward pass gives a kernel's bindings and
// push constants as Go structs per kernel (embedBufs, embedParams, ...) whose
// fields are the WGSL variables and the members of its Params struct (names
// up to case), checked against the compiler's reflection once per struct
// type and kernel (newBindPlan, newPushPlan); tests give them by name
// (Pipeline.Bind, Params). Both layouts come from the reflection (wgpu's
// "auto" layout), never typed again here. Dispatches count their work in invocations or workgroups (extent) and
// take the workgroup size from the pipeline (Pipeline.Groups), not from a
// copy of the WGSL's; the few numbers the host keeps of a kernel are checked
// against the WGSL by TestHostConstantsMatchWGSL, and the matmul epilogues
// (epilogue, EPI_*) by TestEpiloguesMatchWGSL. A kernel's pipelines are
// keyed by their override constants as a comparable constSet and an arena's
// bind groups by a comparable bindKey, so recording a dispatch makes no
// string and no map. Activation memory is laid out from one table, arenaLayout, which
// both allocates an arena and sizes it (arenaBytes, MaxBatchTokens). The
// work profiling reports per kernel (KernelTime.Flops, Bytes) is computed
// from a dispatch's push constants in cost.go, only for profiled batches.
//
// Kernel variants share WGSL through include/: a line
// //#include "include/matmul_epilogue.wgsl" in a kernel is replaced by that
// file's text (itself expanded; each file once) before compiling, and the
// compiler's diagnostics name the file and line the text came from
// (wgsl.Expand, wgsl.IncludeDirective; cmd/wgslc resolves the same lines).
// The epilogues of both matmuls, the row sums of the norms, and the
// interfaces of the LM head's and the top-K's variants live there; those
// files are no kernels of their own. Source gives a kernel's text with its
// includes spliced in.
//
// Weights are f32 or f16 in storage: a kernel that reads weights declares
// "alias weight = f32;" and Variant makes its f16 text. Activations, the
// residual stream, accumulation, softmax and logsumexp are f32.
//
// # Variants per adapter
//
// Two kernel sets (KernelSet) share one interface per operation (bindings,
// push constants, epilogues), so the rest of the forward pass is the same:
//
//   - Software rasterizers (lavapipe, SwiftShader: Vulkan device type "cpu",
//     see Software) run one invocation per SIMD lane of a CPU thread and pay
//     dearly for barriers, so they get the software set: the register-tiled
//     matmul.wgsl without workgroup memory, attention.wgsl (one invocation per
//     query row, keys read from the cache), lmhead_loss.wgsl (a partial per
//     vocabulary tile) and topk_logits.wgsl (--top-logprobs, one invocation
//     per target).
//   - Hardware GPUs (discrete, integrated, virtual) get the hardware set:
//     matmul_shared.wgsl and lmhead_loss_shared.wgsl stage tiles of both
//     operands in workgroup memory (the LM head takes a slice of 8 tiles of
//     128 ids per workgroup, each invocation folding its logits into a running
//     (max, sum) in registers, so a position has 50 partials, not 786);
//     attention_shared.wgsl is flash attention with key/value tiles in
//     workgroup memory, one rescale per tile and masked tiles skipped
//     (attention_shared_subgroup.wgsl, where the device has subgroup
//     operations, the same with a query's channels split over QS
//     invocations of a subgroup: 4 at head sizes 64 to 128, attnQS);
//     c_attn's matmul writes k and v straight into the KV cache (its epilogue
//     epiQKV), so kv_write.wgsl does not run (but on devices with fewer than
//     6 storage buffers a stage, where the matmul kernels are compiled
//     without the KV cache bindings, kvFreeIncludes); where the device has subgroup
//     operations, layernorm_rows.wgsl (rmsnorm_rows.wgsl) gives each row to
//     one subgroup, vec4 loads in registers and subgroupAdd sums without a
//     barrier, where a row fits (normFor; each model compiles them with the
//     register array its rows need, newRowsKernel), else layernorm_subgroup.wgsl
//     (rmsnorm_subgroup.wgsl) a workgroup per row; and
//     topk_logits_shared.wgsl splits one target's vocabulary over a workgroup.
//     Index clamps: the compiler proves the workgroup-memory indices of the
//     tiled inner loops in bounds and leaves them out; global memory keeps
//     them (robust access). Workgroup memory starts as it is, not zeroed:
//     every kernel writes each element before reading it, which the tests
//     hold it to by poisoning the memory with NaNs and all-ones integers
//     ($WGPU_EVAL_WORKGROUP_INIT, workgroup_init.go); the zeroing WGSL
//     asks for cost a barrier and up to 140 stores per invocation at each
//     workgroup's start. The matmul tiles come from an autotuner
//     (TuneMode), per device, driver and shape, cached beside the pipeline
//     cache; every tile configuration gives the same bits.
//
// No kernel binds more than 4 storage buffers on a device that has no more
// (Vulkan's minimum; older Mali drivers): the LM head keeps its target
// logits in the targets binding, after the ids, and rope_kv_write.wgsl the
// q/k norms in the rotary buffer, after the table.
//
// Both sets share embed.wgsl, layernorm.wgsl (without subgroups), kv_write.wgsl
// (the software set) and nll_combine.wgsl (one invocation per target, spread
// over ceil(P/256) workgroups), whose per-target NLLs every batch reads back
// (4 bytes a target) for the host to add exactly (model/exactsum): the sums do
// not depend on the device's scheduling, nor on how targets are batched,
// sharded or resumed.
// $WGPU_EVAL_GPU_KERNELS forces either set on any adapter: the tests run the
// hardware set on CPU implementations too, so that what GPUs execute is
// executed in CI. Mesa's lavapipe also ends an invocation's loops after 65535
// iterations in all and carries on with wrong values; on software adapters
// NewGPT2 sizes lmhead_loss.wgsl's vocabulary tile (VT) so its loops fit,
// cuts the vocabulary the top-K kernels stream (--top-logprobs) into slices,
// and caps the positions attention.wgsl attends over (its loops over a head's
// channels run to an override constant, which llvmpipe unrolls, so an
// invocation loops about once per key: some 60000 positions). Every variant
// is tested on every device the tests run on.
//
// # Matrix units
//
// On a device with matrix units (tensor cores; Vulkan's
// VK_KHR_cooperative_matrix, WGSL's chromium_experimental_subgroup_matrix),
// the hardware set's weight matmuls and LM head run on them:
// matmul_coop.wgsl and lmhead_loss_coop.wgsl take the bindings, push
// constants, epilogues and partials of matmul_shared.wgsl and
// lmhead_loss_shared.wgsl (h f16), with f16 operands (the weights as
// stored, the activations rounded to f16 as their tiles are staged in
// workgroup memory; the LM head's h once, by to_f16.wgsl, since each
// position's row is read once per tile of ids) and f32 accumulation. A subgroup matrix's shape must be a
// constant, so the host writes the device's configuration (M x N x K, 16 x
// 16 x 16 on most GPUs, 8 x 16 x 16 on Intel's) and the result matrices
// per subgroup into the kernels' text (coopSource) and compiles one module
// per configuration. On devices without matrix units the compiler lowers
// the same kernels to invocation code: the tests force them there (a test
// hook, GPT2.coopForce), so CI runs them on lavapipe, where their lowered
// loops count against the loop limit (see fitLoopLimit): a GPT2 there keeps
// them off where coopTiles.loweredLoops estimates more than coopLoopBudget
// (about 100 channels at GPT-2's shapes). The top-K
// (--top-logprobs) keeps its SIMT kernels: it streams the vocabulary on
// its own, not the LM head's product.
//
// Attention comes along: attention_coop.wgsl is attention_shared.wgsl's
// causal flash attention with Q·Kᵀ and P·V on the matrix units (q, k, v and
// the probabilities rounded to f16; the online softmax and the output
// accumulator f32, in invocation registers, since the extension has no
// per-row operation on result matrices). Its shapes are written into its
// text too (attnCoopSource: the configuration, the head size, keys per
// tile, subgroups, whether the next tile's loads are in flight during
// this one, rounded as they arrive or held as loaded). On a hardware GPU
// the autotuner times its tilings (attnCoopShapes) and
// attention_shared.wgsl once per batch shape and runs
// the fastest, a tiling other than the default once it passed the
// self-check (attention_tune.go; "attn ..." entries in the tuning file);
// elsewhere the default tiling runs whenever the matrix units do
// (MatrixUnitsStatus.Attention says which kernel and why).
//
// MatrixUnits (auto, off, on; $WGPU_EVAL_MATRIX_UNITS, SetMatrixUnits)
// chooses; deviceMatrixConfigs is the one place that asks the device. Trust,
// but verify: the first time a device and driver would use them, a
// self-check runs a matmul, an LM-head and an attention case with the coop
// and the SIMT kernels on random inputs and compares them against a bound
// derived from the inputs (2⁻¹¹·Σ|x·w|, the f16 rounding of the
// activations, plus the f32 sums; for attention attnCoopTol's); beyond it,
// the model keeps the SIMT kernels with one warning
// (MatrixUnitsStatus.Warning). The verdict is kept beside the autotuner's
// file, per device UUID, driver version, configuration and kernel text
// (a file that cannot be read is ignored with a warning and rewritten).
// Both files carry kernelsDigest, a hash of the SPIR-V the compiler makes
// of every embedded kernel: a build whose code differs, if only by how the
// compiler emits it, tunes and checks again.
// MatrixUnits and MatrixUnitsUsed report the outcome for provenance.
//
// The coop kernels' tilings are tuned like the SIMT tiles (TuneMode; the
// default tilings under TuneOff and on software adapters): matmul_coop.wgsl
// from 64 x 64 up to 256 x 128 outputs per workgroup of 4 to 16 subgroups
// (coopShapes; its epilogue goes through workgroup memory in chunks, so a
// tile need not fit there whole), lmhead_loss_coop.wgsl with up to 128
// positions per workgroup over the same slices of ids (coopHeadShapes),
// both in 1 to 3 stages (ST: whether the next step's tiles are loaded
// during this one's multiplies, at the cost of their registers, and with
// 3 into a second tile buffer, one barrier a step), the matmul's with w's
// tile in workgroup memory row-major or n-major too (WT: which way the
// right matrices are loaded, one 2-byte load per value on AMD's RDNA3 or
// wide ones, at the cost of the staging's stores), each
// timed at the model's shapes and the batch's rows, kept in the tuning
// file under "coop ..." and "coop-head ..." keys, and run only once the
// self-check's case passed with that tiling (verdicts kept per tiling).
// Profiles name the tiling with the kernel. Every tuner compiles its
// candidates' pipelines concurrently before it times them one by one
// (compilePipelines), and the first timing in a process gives a notice
// (SetTuneNotice): a cold driver cache makes it minutes on NVIDIA. Unlike the SIMT tiles, another
// coop tiling may change the last bits of the sums (the matrix units add in
// an order of their own, and the LM head's fold follows its tiles): results
// are bit-identical for a device, driver and tuning file.
//
// # Batches
//
// GPT2.Submit records a batch into one command buffer over activation memory
// allocated once (two arenas, so that one batch runs while the next is
// written and recorded; an arena grows when a larger batch comes) with bind
// groups made once per arena, and the per-target NLL is summed on the device:
// Pending.Wait reads back 8 bytes. SetChunk scores a window in chunks of
// positions against a KV cache of every layer (chunked prefill), and
// SetProfiling times every dispatch with timestamp queries.
//
// Every kernel has a test against the float64 reference in internal/refops on
// random inputs, with sizes that are not multiples of its tiles, and a stated
// tolerance.
//
// Imports: wgpu, wgpu/wgsl, model and internal/atomicfile (the autotuner's
// file) of this module, and x448/float16 (the autotuner's f16 operands).
package shaders

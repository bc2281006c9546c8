// attention_shared: causal multi-head self-attention over a KV cache, flash
// style, for GPUs: the same function, bindings and push constants as
// attention.wgsl (so the host picks either per adapter). qkv (B*T, ld) is the
// current chunk of T rows per sequence, its first C = H*HD channels the
// queries (GPT-2's c_attn output, ld = 3C; the Llama family's q|k|v,
// ld = (H + 2*KV) * HD); kc, vc (B, KV, S, HD) are the cache of KV key/value
// heads, which must already hold the keys and values of positions
// 0 .. pos0+T-1 (written by c_attn's matmul epilogue, matmul_shared.wgsl's
// epiQKV, or by kv_write.wgsl or rope_kv_write.wgsl). Query head h attends
// with key/value head g = h / (H/KV). For query (b, h, t) at absolute
// position pos0+t:
//   out[(b*T+t)*C + h*HD + i] = Σ_{s<=pos0+t} softmax_s(lscale · q·k_s / sqrt(HD)) v_s[i].
//
// The kernel is include/attention_shared.wgsl with QS = 1: a workgroup
// takes BQ consecutive queries of one (b, h), one invocation per query row;
// attention_shared_subgroup.wgsl is the same with QS = 2 or 4 invocations of
// a subgroup per row, each holding HD/QS of its channels. An invocation
// keeps its share of q and of the output accumulator in private arrays of
// HQ = HD/4/QS vec4 whose bounds are constants (the host sets HD and QS),
// so a GPU compiler keeps them in registers. The keys are streamed in tiles
// of BKV positions: the workgroup copies the tile's keys and values from the
// cache into workgroup memory with vec4 loads spread over all invocations,
// waits at a barrier, and every invocation reads them from there (the same
// address in all rows at once: a broadcast, no bank conflict). Per tile, an
// invocation first computes the scores of its visible keys (those at or
// before its position; with QS > 1 each a sum of QS partial dot products,
// exchanged in the subgroup), then rescales its running sum and accumulator
// once by exp(m_old - m_new), then adds exp(score - m_new) * v. Tiles past
// the block's last query position are never loaded (the causal mask skips
// them whole); within the diagonal tile the mask is per row.
//
// Why so: per key a row does 2·HD multiply-adds and HD/2 vec4 reads of
// workgroup memory, all broadcasts, with no exchange between rows, and
// holds 2·HD/QS f32 of q and accumulator in registers. With QS = 1 (this
// file) no subgroup feature is needed, so one kernel serves every GPU and
// the CPU drivers (whose invocations are cheap to keep and whose shuffles
// are not); but at head size 128 that is 256 f32, past what AMD's
// compiler keeps in a lane's 256 VGPRs (it spilled 46 to scratch memory on
// RDNA3, RDNA2 and GCN) and near NVIDIA's 255 registers. Splitting a row
// over QS invocations divides those registers by QS for log2(QS) shuffles
// per key; keeping q in workgroup memory instead would need BQ·HD·4 bytes
// more (32 KiB at BQ 64, HD 128) and a read of it per multiply-add. The
// query heads of a group each load their key/value head's tiles (from L2
// after the first). The host (attention.go) uses BQ 64, BKV 32 on GPUs,
// with QS from the head size where the device has subgroups, and BQ 16,
// BKV 16, QS 1 on CPU drivers.
//
// Workgroup memory: 2 * BKV * HD * 4 bytes (16 KiB with HD 64, BKV 32).
// Dispatch: B * H * ceil(T / BQ) workgroups of BQ * QS invocations, spread
// over x and y as grid() does (flattened as wid.y * nwg.x + wid.x), those
// past the last return. Requires C = H * HD, HD % 4 == 0, HD <= 128,
// ld % 4 == 0, BKV <= 32 and pos0 + T <= S.

const QS: u32 = 1u; // invocations per query row

// groupSum is x summed over the invocations of a row: x itself.
fn groupSum(x: f32) -> f32 { return x; }

//#include "include/attention_shared.wgsl"

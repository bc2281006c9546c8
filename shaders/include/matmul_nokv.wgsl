// matmul_nokv: include/matmul_kv.wgsl's stand-in where the device has fewer
// than 6 storage buffers a stage (Vulkan's minimum is 4): no KV cache
// bindings, so the kernel binds x, w, bias and out only; the host never
// gives it EPI_QKV (it stores q, k and v with EPI_STORE and runs
// kv_write.wgsl or rope_kv_write.wgsl after).
fn storeKV(m: u32, n: u32, v: f32) {}

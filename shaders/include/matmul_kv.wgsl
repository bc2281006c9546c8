// matmul_kv: the KV cache bindings kc and vc (4, 5) and EPI_QKV's write into
// them, for the matmul kernels that take it (matmul_shared.wgsl,
// matmul_coop.wgsl), which include this file after declaring the push
// constants p (N, T, H, S, pos0) and the bindings 0 to 3. On a device with
// fewer than 6 storage buffers a stage the host splices in
// include/matmul_nokv.wgsl instead (kvFreeSources).
@group(0) @binding(4) var<storage, read_write> kc: array<f32>; // EPI_QKV: (B, H, S, C/H)
@group(0) @binding(5) var<storage, read_write> vc: array<f32>; // EPI_QKV: (B, H, S, C/H)

// storeKV is EPI_QKV's write of column n >= N/3 of row m = b*T + t (k or v:
// channel c of head c / hd) into the KV cache at position pos0 + t of
// sequence b.
fn storeKV(m: u32, n: u32, v: f32) {
	let C = p.N / 3u;
	let c = n % C;
	let hd = C / p.H;
	let dst = (((m / p.T) * p.H + c / hd) * p.S + p.pos0 + m % p.T) * hd + c % hd;
	if n < 2u * C {
		kc[dst] = v;
	} else {
		vc[dst] = v;
	}
}

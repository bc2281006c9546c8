// matmul_epilogue: what matmul.wgsl and matmul_shared.wgsl, which include
// this file, do with y = x·w + bias: the epilogue the override EPI names
// (EPI_*, the host's epilogue constants in matmul.go; a test checks that
// both agree). The including kernel declares override EPI, the push
// constants p (with M and N), out: array<f32> (M, N), and
// storeKV(m, n, v), which writes column n >= N/3 of row m (k or v) for
// EPI_QKV.
const EPI_STORE: u32 = 0u;  // out = y
const EPI_GELU: u32 = 1u;   // out = gelu_new(y)
const EPI_ADD: u32 = 2u;    // out += y (the residual stream: out is read and written)
// EPI_QKV is c_attn's: of the N = 3C columns (q | k | v), q goes to out, k
// and v to storeKV (the columns of k and v in out are not written).
const EPI_QKV: u32 = 3u;
// EPI_SWIGLU is the Llama family's MLP: w's columns are gate and up
// interleaved (column 2i gate_proj's row i, 2i+1 up_proj's), N even, and
// out (M, N/2) gets out[m, i] = silu(y[m, 2i]) * y[m, 2i+1].
const EPI_SWIGLU: u32 = 4u;
const EPI_GELU_ERF: u32 = 5u; // out = y·Φ(y), the exact GELU (erf)

// gelu is GPT-2's gelu_new; the tanh argument is clamped to ±15, where tanh
// is ±1 in f32, so that no implementation overflows.
fn gelu(y: vec4<f32>) -> vec4<f32> {
	let a = clamp(0.7978845608028654 * (y + 0.044715 * y * y * y), vec4<f32>(-15.0), vec4<f32>(15.0));
	return 0.5 * y * (1.0 + tanh(a));
}

// geluErf is the exact GELU, x·Φ(x) = 0.5·x·erfc(-x/√2), which keeps the
// digits of its tail (x < 0) that 1 + erf(x/√2) would cancel.
fn geluErf(y: vec4<f32>) -> vec4<f32> {
	return 0.5 * y * erfc(-0.7071067811865476 * y);
}

// erfc is the complementary error function by the Chebyshev fit of
// Numerical Recipes (erfcc): t·exp(-z² + P(t)), t = 1/(1 + z/2), z = |x|,
// with a fractional error below 1.2e-7 everywhere; erfc(-z) = 2 - erfc(z).
// exp's argument only falls as z grows: 0 past z ≈ 9.4, never a NaN.
fn erfc(x: vec4<f32>) -> vec4<f32> {
	let z = abs(x);
	let t = 1.0 / (1.0 + 0.5 * z);
	let q = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
		t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
	let r = t * exp(q - z * z);
	return select(2.0 - r, r, x >= vec4<f32>(0.0));
}

// silu is x / (1 + e^-x) (e^-x is +inf for x below -88: the quotient is then -0).
fn silu(x: f32) -> f32 { return x / (1.0 + exp(-x)); }

// store applies the epilogue to the 4 columns n0.. of row m, writing those in
// (M, N).
fn store(m: u32, n0: u32, acc: vec4<f32>, b: vec4<f32>) {
	if m >= p.M { return; }
	var y = acc + b;
	if EPI == EPI_SWIGLU { // n0 is a multiple of 4: two (gate, up) pairs, both in bounds or not (N is even)
		let base = m * (p.N / 2u) + n0 / 2u;
		if n0 < p.N { out[base] = silu(y.x) * y.y; }
		if n0 + 2u < p.N { out[base + 1u] = silu(y.z) * y.w; }
		return;
	}
	if EPI == EPI_GELU { y = gelu(y); }
	if EPI == EPI_GELU_ERF { y = geluErf(y); }
	for (var j = 0u; j < 4u; j++) {
		let n = n0 + j;
		if n >= p.N { return; }
		if EPI == EPI_QKV && n >= p.N / 3u {
			storeKV(m, n, y[j]);
		} else if EPI == EPI_ADD {
			out[m * p.N + n] += y[j];
		} else {
			out[m * p.N + n] = y[j];
		}
	}
}

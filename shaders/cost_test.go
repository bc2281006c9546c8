package shaders

import "testing"

// TestCostModel checks the profile's work model on small shapes counted by
// hand.
func TestCostModel(t *testing.T) {
	f16 := costCtx{wb: 2}
	for _, c := range []struct {
		name         string
		v            costed
		ctx          costCtx
		flops, bytes float64
	}{
		// 2*M*N*K; x (M, K) f32, w (K, N) f16, out (M, N) f32.
		{"matmul", matmulParams{M: 2, N: 8, K: 3}, f16, 96, 24 + 48 + 64},
		// SwiGLU writes N/2 columns.
		{"matmul swiglu", matmulSharedParams{M: 2, N: 8, K: 3}, costCtx{wb: 2, consts: consts("EPI", float64(epiSwiGLU))}, 96, 24 + 48 + 32},
		// GPT-2 adds wpe: reads 5 ids, 20 values of wte and of wpe (f16), writes 20 f32.
		// (It was 240 and 160: every value counted as 4 bytes, 1.5x the f16 weights' bytes.)
		{"embed gpt2", embedParams{N: 5, C: 4}, f16, 20, 20 + 20*2 + 20*2 + 20*4},
		{"embed gpt2 f32", embedParams{N: 5, C: 4}, costCtx{wb: 4}, 20, 20 + 20*4 + 20*4 + 20*4},
		{"embed llama", embedParams{N: 5, C: 4}, costCtx{wb: 2, consts: consts("WPE", 0)}, 0, 20 + 20*2 + 20*4},
		{"layernorm", layerNormParams{Rows: 3, C: 10}, f16, 240, 240},
		{"rmsnorm", rmsNormParams{Rows: 3, C: 10}, f16, 120, 240},
		// 2 targets x 7 ids x 4 channels; wte's 7 rows and h's 2.
		{"lm head", lmHeadParams{P: 2, C: 4, V: 7}, f16, 112, 56 + 32},
		// lmhead_loss_coop.wgsl (its tiling has SGM) reads h as f16.
		{"lm head coop", lmHeadParams{P: 2, C: 4, V: 7}, costCtx{wb: 2, consts: consts("SGM", 2)}, 112, 56 + 16},
		{"to f16", toF16Params{N: 3}, f16, 12, 12*4 + 12*2},
		{"top-k", topKParams{P: 2, C: 4, Lo: 3, Hi: 10}, f16, 112, 56 + 32},
		{"logits", logitsParams{C: 4, V: 7}, f16, 56, 56},
		{"nll", nllCombineParams{P: 3, Tiles: 5}, f16, 60, 120 + 24},
		// 1 sequence, 2 queries at positions 4, 5 (mean keys 5.5), one head of 4 channels.
		{"attention", attentionParams{B: 1, T: 2, C: 4, H: 1, KV: 1, Pos0: 4}, f16, 4 * 2 * 5.5 * 4, 4 * (16 + 2*6*4)},
		{"kv write", kvWriteParams{B: 1, T: 2, C: 4}, f16, 0, 128},
		// q: 2 heads, k: 1 head of 2 channels; 6 flops per rotated value.
		{"rope", ropeParams{B: 1, T: 3, H: 2, KV: 1, HD: 2}, f16, 3 * 6 * 6, 4 * 3 * (8 + 4 + 4)},
	} {
		if fl, by := c.v.cost(c.ctx); fl != c.flops || by != c.bytes {
			t.Errorf("%s: %v flops, %v bytes; want %v, %v", c.name, fl, by, c.flops, c.bytes)
		}
	}
	if r := (matmulParams{K: 768, N: 2304}).row(); r != "K768 N2304" {
		t.Errorf("row %q", r)
	}
}

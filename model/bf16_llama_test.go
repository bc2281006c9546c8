package model_test

import (
	"context"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// TestCPUBF16LlamaAgainstReference: the bf16 mode of the Llama-family
// forward (q|k|v, o, gate, up, down and the LM head with both operands
// rounded to bf16, the embedding read from the rounded wte) on the edge
// shapes (one key/value head, head size 2, tied heads, every bias option,
// Qwen3's q/k norms) is the float64 reference with the same roundings
// (RefLlamaNLLBF16): each target within 1e-3 nats and their mean within
// 2e-4, where the unrounded reference is several times further off (the
// residue is float32 error moving an activation across a bf16 rounding
// boundary: a relative 1e-7 nudge of the reference's inputs moves it as
// far). The portable bf16 kernels run on every CPU; where the VDPBF16PS
// kernels run natively they give the portable kernels' bits.
func TestCPUBF16LlamaAgainstReference(t *testing.T) {
	ctx := context.Background()
	var toRounded, toPlain float64
	for _, em := range edgeLlama {
		t.Run(em.name, func(t *testing.T) {
			m := em.m()
			seqs, _ := edgeBatch(m)
			var rounded, plain []float64
			for _, s := range seqs {
				if len(s.Tokens) > 1 {
					rounded = append(rounded, model.RefLlamaNLLBF16(m, s.Tokens)[s.First-1:]...)
					plain = append(plain, model.RefLlamaNLL(m, s.Tokens)[s.First-1:]...)
				}
			}
			bf, err := model.NewCPUBF16(m, 2, true)
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := bf.LossPerToken(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(rounded) {
				t.Fatalf("%d NLLs, want %d", len(got), len(rounded))
			}
			var mean float64
			for i, x := range got {
				d := math.Abs(float64(x) - rounded[i])
				if !(d <= 1e-2) {
					t.Fatalf("target %d: NLL %v, rounded reference %v", i, x, rounded[i])
				}
				mean += d / float64(len(got))
				toRounded += d
				toPlain += math.Abs(float64(x) - plain[i])
			}
			if mean > 2e-4 {
				t.Errorf("mean |NLL - rounded reference| = %.3g, want <= 2e-4", mean)
			}
			if !model.BF16Hardware() {
				return
			}
			t.Setenv("WGPU_EVAL_CPU_KERNELS", "avx512") // VDPBF16PS, not AMX tiles (another order)
			hw, err := model.NewCPUBF16(m, 3, false)
			if err != nil {
				t.Fatal(err)
			}
			_, hwNLL, err := hw.LossPerToken(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			sameNLLs(t, hw.Kernels()+" against the portable bf16 kernels", hwNLL, got)
		})
	}
	t.Logf("Σ|NLL - reference|: rounded %.3g, unrounded %.3g", toRounded, toPlain)
	if !(toRounded*20 < toPlain) {
		t.Errorf("Σ|NLL - rounded reference| = %.3g, Σ|NLL - unrounded reference| = %.3g: the roundings do not explain the bf16 mode", toRounded, toPlain)
	}
}

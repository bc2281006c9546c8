package model_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// TestConfigTensors checks the table against the order and shapes the loaders
// had before it (Hugging Face's GPT2LMHeadModel state_dict order).
func TestConfigTensors(t *testing.T) {
	cfg := model.Config{NLayer: 2, NHead: 2, NEmbd: 8, NPositions: 5, VocabSize: 11, LayerNormEps: 1e-5}
	const C = 8
	want := []model.TensorSpec{
		{Name: "wte.weight", Shape: []int{11, C}, Role: model.RoleWTE, Layer: -1},
		{Name: "wpe.weight", Shape: []int{5, C}, Role: model.RoleWPE, Layer: -1},
	}
	for l := range 2 {
		p := fmt.Sprintf("h.%d.", l)
		want = append(want,
			model.TensorSpec{Name: p + "ln_1.weight", Shape: []int{C}, Role: model.RoleLN1W, Layer: l},
			model.TensorSpec{Name: p + "ln_1.bias", Shape: []int{C}, Role: model.RoleLN1B, Layer: l},
			model.TensorSpec{Name: p + "attn.c_attn.weight", Shape: []int{C, 3 * C}, Role: model.RoleQKVW, Layer: l},
			model.TensorSpec{Name: p + "attn.c_attn.bias", Shape: []int{3 * C}, Role: model.RoleQKVB, Layer: l},
			model.TensorSpec{Name: p + "attn.c_proj.weight", Shape: []int{C, C}, Role: model.RoleProjW, Layer: l},
			model.TensorSpec{Name: p + "attn.c_proj.bias", Shape: []int{C}, Role: model.RoleProjB, Layer: l},
			model.TensorSpec{Name: p + "ln_2.weight", Shape: []int{C}, Role: model.RoleLN2W, Layer: l},
			model.TensorSpec{Name: p + "ln_2.bias", Shape: []int{C}, Role: model.RoleLN2B, Layer: l},
			model.TensorSpec{Name: p + "mlp.c_fc.weight", Shape: []int{C, 4 * C}, Role: model.RoleFCW, Layer: l},
			model.TensorSpec{Name: p + "mlp.c_fc.bias", Shape: []int{4 * C}, Role: model.RoleFCB, Layer: l},
			model.TensorSpec{Name: p + "mlp.c_proj.weight", Shape: []int{4 * C, C}, Role: model.RoleFCProjW, Layer: l},
			model.TensorSpec{Name: p + "mlp.c_proj.bias", Shape: []int{C}, Role: model.RoleFCProjB, Layer: l},
		)
	}
	want = append(want,
		model.TensorSpec{Name: "ln_f.weight", Shape: []int{C}, Role: model.RoleLNFW, Layer: -1},
		model.TensorSpec{Name: "ln_f.bias", Shape: []int{C}, Role: model.RoleLNFB, Layer: -1},
	)
	got := cfg.Tensors()
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || !slices.Equal(g.Shape, w.Shape) || g.Role != w.Role || g.Layer != w.Layer {
			t.Errorf("tensor %d: %+v, want %+v", i, g, w)
		}
		if g.NumElements() != func() int {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			return n
		}() {
			t.Errorf("%s: NumElements %d", g.Name, g.NumElements())
		}
	}
	lm := cfg.LMHeadSpec()
	if lm.Name != "lm_head.weight" || !slices.Equal(lm.Shape, []int{11, C}) || lm.Role != model.RoleLMHead || lm.Layer != -1 {
		t.Errorf("LMHeadSpec %+v", lm)
	}
	if s := model.RoleFCProjW.String(); s != "mlp.c_proj.weight" {
		t.Errorf("RoleFCProjW.String() = %q", s)
	}
}

package shaders

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// reflectKernel compiles kernel (f32 weights) and returns its reflection.
func reflectKernel(t *testing.T, kernel string) wgsl.Reflection {
	t.Helper()
	src, err := Source(kernel, false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wgsl.Compile(kernel, src, wgsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Reflection
}

// TestPushStructsMatchKernels checks every push-constant struct of the
// forward pass against the kernels it is given to, as PushStruct does once
// per pipeline, and that it encodes as Push encodes the same values given by
// name (written out here, not derived from the struct).
func TestPushStructsMatchKernels(t *testing.T) {
	cases := []struct {
		kernels []string
		v       any
		byName  Params
	}{
		{[]string{"embed.wgsl"}, embedParams{N: 1, T: 2, C: 3, Pos0: 4, V0: 5, V: 6},
			Params{"N": 1, "T": 2, "C": 3, "pos0": 4, "v0": 5, "V": 6}},
		{[]string{"layernorm.wgsl", "layernorm_subgroup.wgsl", "layernorm_rows.wgsl"}, layerNormParams{Rows: 7, C: 768, Eps: 1e-5},
			Params{"rows": 7, "C": 768, "eps": 1e-5}},
		{[]string{"rmsnorm.wgsl", "rmsnorm_subgroup.wgsl", "rmsnorm_rows.wgsl"}, rmsNormParams{Rows: 7, C: 768, Eps: 1e-6},
			Params{"rows": 7, "C": 768, "eps": 1e-6}},
		{[]string{"kv_write.wgsl"}, kvWriteParams{B: 1, T: 2, C: 3, H: 4, S: 5, Pos0: 6},
			Params{"B": 1, "T": 2, "C": 3, "H": 4, "S": 5, "pos0": 6}},
		{[]string{"matmul.wgsl"}, matmulParams{M: 3, N: 5, K: 7}, Params{"M": 3, "N": 5, "K": 7}},
		{[]string{"matmul_shared.wgsl"}, matmulSharedParams{M: 3, N: 5, K: 7, T: 9, H: 11, S: 13, Pos0: 15},
			Params{"M": 3, "N": 5, "K": 7, "T": 9, "H": 11, "S": 13, "pos0": 15}},
		{[]string{"attention.wgsl", "attention_shared.wgsl", "attention_shared_subgroup.wgsl", "attention_coop.wgsl"}, attentionParams{B: 1, T: 2, C: 3, H: 4, KV: 5, S: 6, Pos0: 7, LD: 8, LScale: 0.25},
			Params{"B": 1, "T": 2, "C": 3, "H": 4, "KV": 5, "S": 6, "pos0": 7, "ld": 8, "lscale": 0.25}},
		{[]string{"rope_kv_write.wgsl"}, ropeParams{B: 1, T: 2, H: 3, KV: 4, HD: 5, S: 6, Pos0: 7, Eps: 1e-6, Norm: 8},
			Params{"B": 1, "T": 2, "H": 3, "KV": 4, "hd": 5, "S": 6, "pos0": 7, "eps": 1e-6, "norm": 8}},
		{[]string{"lmhead_loss.wgsl", "lmhead_loss_shared.wgsl"}, lmHeadParams{P: 1, C: 2, V: 3, V0: 4},
			Params{"P": 1, "C": 2, "V": 3, "v0": 4}},
		{[]string{"nll_combine.wgsl"}, nllCombineParams{P: 9, Tiles: 50}, Params{"P": 9, "tiles": 50}},
		{[]string{"to_f16.wgsl"}, toF16Params{N: 96}, Params{"n": 96}},
		{[]string{"logits.wgsl"}, logitsParams{C: 1, V: 2, V0: 3, Row: 4}, Params{"C": 1, "V": 2, "v0": 3, "row": 4}},
		{[]string{"topk_logits.wgsl", "topk_logits_shared.wgsl"}, topKParams{P: 1, C: 2, K: 3, Lo: 4, Hi: 5, Base: 6, Init: 1},
			Params{"P": 1, "C": 2, "K": 3, "lo": 4, "hi": 5, "base": 6, "init": 1}},
	}
	for _, c := range cases {
		for _, kernel := range c.kernels {
			p := &Pipeline{k: &Kernel{name: kernel, refl: reflectKernel(t, kernel)}, label: kernel}
			got, err := p.PushStruct(c.v)
			if err != nil {
				t.Errorf("%s: %v", kernel, err)
				continue
			}
			want, err := p.Push(c.byName)
			if err != nil {
				t.Fatalf("%s: %v", kernel, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %T encodes as % x, by name % x", kernel, c.v, got, want)
			}
			if again, _ := p.PushStruct(c.v); !bytes.Equal(again, got) {
				t.Errorf("%s: the cached plan encodes differently", kernel)
			}
		}
	}
}

func TestPushStructErrors(t *testing.T) {
	refl := reflectKernel(t, "matmul_shared.wgsl")
	type short struct{ M, N, K uint32 }
	type extra struct {
		M, N, K, T, H, S, Pos0 uint32
		Q                      uint32
	}
	type wrongType struct {
		M, N, K, T, H, S uint32
		Pos0             int32
	}
	type twice struct {
		M, N, K, T, H, S, Pos0 uint32
		POS0                   uint32
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{short{}, "has no field for push constant T (u32)"},
		{extra{}, "extra.Q: the kernel has no push constant of that name"},
		{wrongType{}, "wrongType.Pos0 is int32, push constant pos0 is u32"},
		{twice{}, "two fields named pos0 up to case"},
		{3, "want a struct"},
	} {
		_, err := newPushPlan(refl, reflect.TypeOf(c.v))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: error %v, want %q", c.v, err, c.want)
		}
	}
	p := &Pipeline{k: &Kernel{name: "matmul_shared.wgsl", refl: refl}}
	if _, err := p.PushStruct(short{}); err == nil || !strings.HasPrefix(err.Error(), "kernel matmul_shared.wgsl: ") {
		t.Errorf("PushStruct(short) = %v, want an error naming the kernel", err)
	}
	if _, err := newPushPlan(reflectKernel(t, "embed.wgsl"), reflect.TypeOf(struct{}{})); err == nil {
		t.Error("an empty struct for a kernel with push constants: no error")
	}
}

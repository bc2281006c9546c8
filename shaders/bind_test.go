package shaders

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// TestBindStructsMatchKernels checks every binding struct of the forward
// pass against the kernels it is given to (every binding a field, every
// field a binding: the names written out here), and that a dispatch's key
// puts each buffer at its binding number without allocating.
func TestBindStructsMatchKernels(t *testing.T) {
	cases := []struct {
		kernels []string
		v       any
		names   []string
	}{
		{[]string{"embed.wgsl"}, embedBufs{}, []string{"tokens", "wte", "wpe", "out"}},
		{[]string{"layernorm.wgsl", "layernorm_subgroup.wgsl", "layernorm_rows.wgsl"}, layerNormBufs{}, []string{"x", "w", "b", "out"}},
		{[]string{"rmsnorm.wgsl", "rmsnorm_subgroup.wgsl", "rmsnorm_rows.wgsl"}, rmsNormBufs{}, []string{"x", "w", "out"}},
		{[]string{"kv_write.wgsl"}, kvWriteBufs{}, []string{"qkv", "kc", "vc"}},
		{[]string{"matmul.wgsl"}, matmulBufs{}, []string{"x", "w", "bias", "out"}},
		{[]string{"matmul_shared.wgsl"}, matmulSharedBufs{}, []string{"x", "w", "bias", "out", "kc", "vc"}},
		{[]string{"attention.wgsl", "attention_shared.wgsl", "attention_shared_subgroup.wgsl"}, attentionBufs{}, []string{"qkv", "kc", "vc", "out"}},
		{[]string{"rope_kv_write.wgsl"}, ropeBufs{}, []string{"qkv", "kc", "vc", "rope"}},
		{[]string{"lmhead_loss.wgsl", "lmhead_loss_shared.wgsl"}, lmHeadBufs{}, []string{"h", "wte", "targets", "part"}},
		{[]string{"nll_combine.wgsl"}, nllCombineBufs{}, []string{"part", "targets", "nll"}},
		{[]string{"to_f16.wgsl"}, toF16Bufs{}, []string{"x", "y"}},
		{[]string{"logits.wgsl"}, logitsBufs{}, []string{"h", "wte", "out"}},
		{[]string{"topk_logits.wgsl", "topk_logits_shared.wgsl"}, topKBufs{}, []string{"h", "wte", "topv", "topi"}},
	}
	for _, c := range cases {
		for _, kernel := range c.kernels {
			refl := reflectKernel(t, kernel)
			k := &Kernel{name: kernel, refl: refl}
			p := &Pipeline{k: k, bindings: map[string]wgsl.Binding{}}
			for _, bi := range refl.EntryPoints[0].Bindings {
				p.bindings[refl.Bindings[bi].Name] = refl.Bindings[bi]
			}
			// Distinct buffers (never dereferenced) in field order, to see where each lands.
			bufs := make([]wgpu.Buffer, len(c.names))
			v := reflect.New(reflect.TypeOf(c.v)).Elem()
			for i := range v.NumField() {
				v.Field(i).Set(reflect.ValueOf(Buf{Buffer: &bufs[i], Offset: uint64(256 * i), Size: 16}))
			}
			m, err := p.bindMap(v.Interface())
			if err != nil {
				t.Errorf("%s: %v", kernel, err)
				continue
			}
			var got []string
			for name := range m {
				got = append(got, name)
			}
			want := slices.Clone(c.names)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %T binds %v, want %v", kernel, c.v, got, want)
			}
			key, err := p.bindKey(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range c.names {
				if b := key.bufs[p.bindings[name].Binding]; b.Buffer != &bufs[i] || b.Offset != uint64(256*i) {
					t.Errorf("%s: %s is not at binding %d", kernel, name, p.bindings[name].Binding)
				}
			}
			x := v.Interface()
			if n := testing.AllocsPerRun(20, func() { p.bindKey(x) }); n != 0 {
				t.Errorf("%s: bindKey allocates %v times", kernel, n)
			}
		}
	}
}

func TestBindStructErrors(t *testing.T) {
	refl := reflectKernel(t, "matmul_shared.wgsl")
	type short struct{ X, W, Bias, Out Buf }
	type extra struct{ X, W, Bias, Out, KC, VC, Q Buf }
	type wrongType struct {
		X, W, Bias, Out, KC Buf
		VC                  *wgpu.Buffer
	}
	type twice struct{ X, W, Bias, Out, KC, VC, Kc Buf }
	for _, c := range []struct {
		v    any
		want string
	}{
		{short{}, "has no field for binding"},
		{extra{}, "extra.Q: the kernel has no binding of that name"},
		{wrongType{}, "wrongType.VC is *wgpu.Buffer, want Buf"},
		{twice{}, "two fields named kc up to case"},
		{3, "want a struct"},
	} {
		_, err := newBindPlan(refl, refl.EntryPoints[0], reflect.TypeOf(c.v))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: error %v, want %q", c.v, err, c.want)
		}
	}
	p := &Pipeline{k: &Kernel{name: "matmul_shared.wgsl", refl: refl}}
	if _, err := p.bindKey(short{}); err == nil || !strings.HasPrefix(err.Error(), "kernel matmul_shared.wgsl: ") {
		t.Errorf("bindKey(short) = %v, want an error naming the kernel", err)
	}
}

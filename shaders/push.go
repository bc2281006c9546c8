package shaders

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// The push constants of the kernels the forward pass dispatches, one Go
// struct per WGSL Params struct: a field per member, named as the member up
// to case (Pos0 for pos0, LD for ld), of the member's type (uint32 for u32, int32 for i32, float32 for f32). Each is
// checked against the compiler's reflection of the kernel once, when a
// pipeline first encodes it (pushPlan), and then encoded without names;
// TestPushStructsMatchKernels checks every pair without a device.
type (
	// embedParams are embed.wgsl's.
	embedParams struct{ N, T, C, Pos0, V0, V uint32 }
	// layerNormParams are layernorm.wgsl's, layernorm_subgroup.wgsl's and
	// layernorm_rows.wgsl's.
	layerNormParams struct {
		Rows, C uint32
		Eps     float32
	}
	// rmsNormParams are rmsnorm.wgsl's, rmsnorm_subgroup.wgsl's and
	// rmsnorm_rows.wgsl's (the same members as layerNormParams; a type of
	// its own for its cost).
	rmsNormParams struct {
		Rows, C uint32
		Eps     float32
	}
	// kvWriteParams are kv_write.wgsl's.
	kvWriteParams struct{ B, T, C, H, S, Pos0 uint32 }
	// matmulParams are matmul.wgsl's.
	matmulParams struct{ M, N, K uint32 }
	// matmulSharedParams are matmul_shared.wgsl's: matmul.wgsl's and, for
	// EPI_QKV, where the KV cache's rows go.
	matmulSharedParams struct{ M, N, K, T, H, S, Pos0 uint32 }
	// attentionParams are attention.wgsl's, attention_shared.wgsl's,
	// attention_shared_subgroup.wgsl's and attention_coop.wgsl's. LScale multiplies the scores besides
	// 1/sqrt(HD): 1, but 1/(l+1) in block l of a GPT-2 with
	// scale_attn_by_inverse_layer_idx.
	attentionParams struct {
		B, T, C, H, KV, S, Pos0 uint32
		LD                      uint32
		LScale                  float32
	}
	// ropeParams are rope_kv_write.wgsl's. Norm is the vec2 index of the
	// layer's q/k norm pairs in the rotary buffer (QKNORM only).
	ropeParams struct {
		B, T, H, KV uint32
		HD          uint32
		S, Pos0     uint32
		Eps         float32
		Norm        uint32
	}
	// lmHeadParams are lmhead_loss.wgsl's and lmhead_loss_shared.wgsl's.
	lmHeadParams struct{ P, C, V, V0 uint32 }
	// nllCombineParams are nll_combine.wgsl's.
	nllCombineParams struct{ P, Tiles uint32 }
	// toF16Params are to_f16.wgsl's: vec4s.
	toF16Params struct{ N uint32 }
	// logitsParams are logits.wgsl's.
	logitsParams struct{ C, V, V0, Row uint32 }
	// topKParams are topk_logits.wgsl's and topk_logits_shared.wgsl's.
	topKParams struct{ P, C, K, Lo, Hi, Base, Init uint32 }
)

// pushPlan is how values of one Go struct type encode a kernel's push
// constants: each member's field and offset, checked against the
// reflection once.
type pushPlan struct {
	size   int
	fields []pushField
}

// pushField is one member: the struct field (by index) and its byte offset.
type pushField struct {
	index  int
	offset int
	kind   reflect.Kind
}

// newPushPlan checks the struct type t against the push-constant block of
// refl: every member has a field of its type, every field is a member.
func newPushPlan(refl wgsl.Reflection, t reflect.Type) (*pushPlan, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("push constants as %v: want a struct", t)
	}
	pc := refl.PushConstant
	if pc == nil {
		if t.NumField() > 0 {
			return nil, fmt.Errorf("%v: the kernel has no push constants", t)
		}
		return &pushPlan{}, nil
	}
	byName := map[string]int{} // fields by lower-cased name
	for i := range t.NumField() {
		name := strings.ToLower(t.Field(i).Name)
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("%v: two fields named %s up to case", t, name)
		}
		byName[name] = i
	}
	plan := &pushPlan{size: (refl.PushConstantSize + 3) &^ 3}
	for _, m := range pc.Members {
		i, ok := byName[strings.ToLower(m.Name)]
		if !ok {
			return nil, fmt.Errorf("%v has no field for push constant %s (%s)", t, m.Name, m.Type)
		}
		delete(byName, strings.ToLower(m.Name))
		f := t.Field(i)
		want := map[string]reflect.Kind{"u32": reflect.Uint32, "i32": reflect.Int32, "f32": reflect.Float32}[m.Type]
		if want == reflect.Invalid {
			return nil, fmt.Errorf("push constant %s has type %s; kernels use u32, i32 and f32", m.Name, m.Type)
		}
		if f.Type.Kind() != want {
			return nil, fmt.Errorf("%v.%s is %v, push constant %s is %s (%v)", t, f.Name, f.Type, m.Name, m.Type, want)
		}
		plan.fields = append(plan.fields, pushField{index: i, offset: m.Offset, kind: want})
	}
	for _, i := range byName {
		return nil, fmt.Errorf("%v.%s: the kernel has no push constant of that name", t, t.Field(i).Name)
	}
	return plan, nil
}

// encode puts v's fields where the plan says.
func (pl *pushPlan) encode(v reflect.Value) []byte {
	if pl.size == 0 {
		return nil
	}
	out := make([]byte, pl.size)
	for _, f := range pl.fields {
		fv := v.Field(f.index)
		var bits uint32
		switch f.kind {
		case reflect.Uint32:
			bits = uint32(fv.Uint())
		case reflect.Int32:
			bits = uint32(int32(fv.Int()))
		case reflect.Float32:
			bits = math.Float32bits(float32(fv.Float()))
		}
		binary.LittleEndian.PutUint32(out[f.offset:], bits)
	}
	return out
}

// PushStruct encodes params, a struct with a field per push-constant member
// of the kernel (see embedParams), in the layout the compiler reflected. The
// struct type is checked against the kernel once; later calls only encode.
func (p *Pipeline) PushStruct(params any) ([]byte, error) {
	v := reflect.ValueOf(params)
	t := v.Type()
	k := p.k
	k.mu.Lock()
	plan, ok := k.plans[t]
	if !ok {
		var err error
		if plan, err = newPushPlan(k.refl, t); err != nil {
			k.mu.Unlock()
			return nil, fmt.Errorf("kernel %s: %w", k.name, err)
		}
		if k.plans == nil {
			k.plans = map[reflect.Type]*pushPlan{}
		}
		k.plans[t] = plan
	}
	k.mu.Unlock()
	return plan.encode(v), nil
}

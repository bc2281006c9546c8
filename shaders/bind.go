package shaders

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// The bindings of the kernels the forward pass dispatches, one Go struct per
// kernel's set of storage variables: a Buf field per binding, named as the
// WGSL variable up to case (KC for kc). Each is checked against the
// compiler's reflection of the kernel once (newBindPlan); a dispatch then
// finds its bind group by a comparable key made from the fields, without a
// map or a name. TestBindStructsMatchKernels checks every pair without a
// device.
type (
	// embedBufs are embed.wgsl's.
	embedBufs struct{ Tokens, WTE, WPE, Out Buf }
	// layerNormBufs are layernorm.wgsl's, layernorm_subgroup.wgsl's and
	// layernorm_rows.wgsl's.
	layerNormBufs struct{ X, W, B, Out Buf }
	// rmsNormBufs are rmsnorm.wgsl's, rmsnorm_subgroup.wgsl's and
	// rmsnorm_rows.wgsl's.
	rmsNormBufs struct{ X, W, Out Buf }
	// kvWriteBufs are kv_write.wgsl's.
	kvWriteBufs struct{ QKV, KC, VC Buf }
	// matmulBufs are matmul.wgsl's.
	matmulBufs struct{ X, W, Bias, Out Buf }
	// matmulSharedBufs are matmul_shared.wgsl's: matmul.wgsl's and the KV
	// cache (EPI_QKV).
	matmulSharedBufs struct{ X, W, Bias, Out, KC, VC Buf }
	// attentionBufs are attention.wgsl's, attention_shared.wgsl's and
	// attention_shared_subgroup.wgsl's.
	attentionBufs struct{ QKV, KC, VC, Out Buf }
	// ropeBufs are rope_kv_write.wgsl's.
	ropeBufs struct{ QKV, KC, VC, Rope Buf }
	// lmHeadBufs are lmhead_loss.wgsl's and lmhead_loss_shared.wgsl's.
	lmHeadBufs struct{ H, WTE, Targets, Part Buf }
	// nllCombineBufs are nll_combine.wgsl's.
	nllCombineBufs struct{ Part, Targets, NLL Buf }
	// toF16Bufs are to_f16.wgsl's.
	toF16Bufs struct{ X, Y Buf }
	// logitsBufs are logits.wgsl's.
	logitsBufs struct{ H, WTE, Out Buf }
	// topKBufs are topk_logits.wgsl's and topk_logits_shared.wgsl's.
	topKBufs struct{ H, WTE, TopV, TopI Buf }
)

// bindPlan is how values of one Go struct type give a kernel's bindings:
// each field's WGSL name and binding number, checked once.
type bindPlan struct {
	names   []string // by field
	binding []int    // by field
}

var bufType = reflect.TypeOf(Buf{})

// newBindPlan checks the struct type t against the bindings of the entry
// point ep of refl: every binding has a Buf field, every field is a
// binding, numbered below maxBindings.
func newBindPlan(refl wgsl.Reflection, ep wgsl.EntryPoint, t reflect.Type) (*bindPlan, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("bindings as %v: want a struct", t)
	}
	byName := map[string]wgsl.Binding{}
	for _, bi := range ep.Bindings {
		b := refl.Bindings[bi]
		byName[strings.ToLower(b.Name)] = b
	}
	plan := &bindPlan{}
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name := strings.ToLower(f.Name)
		b, ok := byName[name]
		switch {
		case f.Type != bufType:
			return nil, fmt.Errorf("%v.%s is %v, want Buf", t, f.Name, f.Type)
		case !ok:
			return nil, fmt.Errorf("%v.%s: the kernel has no binding of that name", t, f.Name)
		case seen[name]:
			return nil, fmt.Errorf("%v: two fields named %s up to case", t, name)
		case b.Group != 0 || b.Binding >= maxBindings:
			return nil, fmt.Errorf("%v.%s: binding %d of group %d; kernels use group 0, bindings below %d", t, f.Name, b.Binding, b.Group, maxBindings)
		}
		seen[name] = true
		plan.names = append(plan.names, b.Name)
		plan.binding = append(plan.binding, b.Binding)
	}
	for name, b := range byName {
		if !seen[name] {
			return nil, fmt.Errorf("%v has no field for binding %s", t, b.Name)
		}
	}
	return plan, nil
}

// bindPlanFor is the pipeline's plan for the struct type t, made and checked
// on first use.
func (p *Pipeline) bindPlanFor(t reflect.Type) (*bindPlan, error) {
	k := p.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if plan, ok := k.binds[t]; ok {
		return plan, nil
	}
	plan, err := newBindPlan(k.refl, k.refl.EntryPoints[0], t)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.name, err)
	}
	if k.binds == nil {
		k.binds = map[reflect.Type]*bindPlan{}
	}
	k.binds[t] = plan
	return plan, nil
}

// bindKey names the bind group of p with bufs, a struct of the kernel's
// bindings (see embedBufs): the pipeline and each binding's range by
// binding number. It allocates nothing once the struct type is checked.
func (p *Pipeline) bindKey(bufs any) (bindKey, error) {
	v := reflect.ValueOf(bufs)
	plan, err := p.bindPlanFor(v.Type())
	if err != nil {
		return bindKey{}, err
	}
	key := bindKey{p: p}
	for i, b := range plan.binding {
		key.bufs[b] = bufField(v.Field(i))
	}
	return key, nil
}

// bufField reads a Buf field without boxing it.
func bufField(f reflect.Value) Buf {
	buf, _ := f.Field(0).Interface().(*wgpu.Buffer) // a pointer: no allocation
	return Buf{Buffer: buf, Offset: f.Field(1).Uint(), Size: f.Field(2).Uint()}
}

// bindMap is bufs by WGSL name, as Bind takes them.
func (p *Pipeline) bindMap(bufs any) (map[string]Buf, error) {
	v := reflect.ValueOf(bufs)
	plan, err := p.bindPlanFor(v.Type())
	if err != nil {
		return nil, err
	}
	m := make(map[string]Buf, len(plan.names))
	for i, name := range plan.names {
		m[name] = bufField(v.Field(i))
	}
	return m, nil
}

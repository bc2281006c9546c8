package wgsl

import (
	"fmt"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// Pointer parameters. SPIR-V's logical addressing (without the
// VariablePointers capabilities, which Vulkan 1.1 does not promise) lets a
// call pass only whole function variables as pointers, yet WGSL passes
// pointers into any address space and to any element (&wg[i], &buf.a[j]).
// So, as Tint's DirectVariableAccess does, a function with pointer
// parameters is emitted once per shape of its pointer arguments: a root in
// module-scope memory is fixed in the variant, a root in function memory is
// passed as a pointer to the whole variable, and each run-time index of the
// access chain from the root is passed as a u32 parameter. Constant indices
// (struct members included) are part of the shape.

// ptrShape is one pointer argument's shape: the root (a module-scope
// variable's id, or 0 for a function-memory root passed as ty) and the
// access chain, with 0 for each run-time index.
type ptrShape struct {
	refv
}

type fnVariant struct {
	f      *function
	id     uint32
	shapes map[int]ptrShape // by parameter index
}

func hasPtrParams(f *function) bool {
	if f.compute {
		return false
	}
	for _, p := range f.params {
		if p.typ != nil && p.typ.Kind == kPtr {
			return true
		}
	}
	return false
}

// callFn emits a call of the user function f and returns its result, or,
// for a large aggregate result (see bigValue), the Function variable holding
// it.
func (e *emitter) callFn(c *callExpr, f *function) uint32 {
	var args []uint32
	var result uint32
	if f.result != nil && bigValue(f.result) {
		result = e.localVar(f.result)
		args = append(args, result)
	}
	var key strings.Builder
	var shapes map[int]ptrShape
	for i, a := range c.Args {
		if pt := f.params[i].typ; bigValue(pt) { // by pointer (see emit_copy.go)
			if v, ok := e.immutableMem(a); ok {
				args = append(args, v) // a let or parameter: never written, so no copy is needed
				continue
			}
			tmp := e.localRef(pt)
			e.storeValue(tmp, pt, a)
			args = append(args, tmp.base)
			continue
		}
		if f.params[i].typ.Kind != kPtr {
			args = append(args, e.expr(a))
			continue
		}
		r := e.ptrRef(a)
		sh := ptrShape{r}
		sh.idx = make([]uint32, len(r.idx))
		if e.isGlobalVar(r.base) {
			fmt.Fprintf(&key, "g%d", r.base)
		} else {
			sh.base = 0
			args = append(args, r.base)
			fmt.Fprintf(&key, "l%d", r.ty)
		}
		for k, id := range r.idx {
			if _, ok := e.constIndex[id]; ok {
				sh.idx[k] = id
			} else {
				args = append(args, id)
			}
			fmt.Fprintf(&key, ".%d", sh.idx[k])
		}
		fmt.Fprintf(&key, "b%d;", r.block)
		if r.split {
			fmt.Fprintf(&key, "c%d;", r.col0)
		}
		if shapes == nil {
			shapes = map[int]ptrShape{}
		}
		shapes[i] = sh
	}
	ret := e.voidType()
	if f.result != nil && result == 0 {
		ret = e.typeID(f.result, plain)
	}
	fid := e.fnIDs[f]
	if shapes != nil {
		k := fmt.Sprintf("%p:%s", f, key.String())
		v := e.variants[k]
		if v == nil {
			v = &fnVariant{f: f, id: e.id(), shapes: shapes}
			e.name(v.id, f.decl.Name)
			e.variants[k] = v
			e.pending = append(e.pending, v)
		}
		fid = v.id
	}
	id := e.op(spirv.OpFunctionCall, ret, append([]uint32{fid}, args...)...)
	if result != 0 {
		return result
	}
	return id
}

// emitVariants emits the variants the calls asked for, and those their
// bodies ask for in turn.
func (e *emitter) emitVariants() {
	for len(e.pending) > 0 {
		v := e.pending[0]
		e.pending = e.pending[1:]
		e.function(v.f, v.id, v.shapes)
	}
}

// ptrParams declares the parameters that carry pointer parameter p of shape
// sh, and records the reference p stands for.
func (e *emitter) ptrParams(p *symbol, sh ptrShape, ptys, pids *[]uint32) {
	r := sh.refv
	r.idx = append([]uint32(nil), sh.idx...)
	if r.base == 0 {
		r.base = e.id()
		*ptys = append(*ptys, r.ty)
		*pids = append(*pids, r.base)
		e.name(r.base, p.name)
	}
	u32 := e.typeID(e.m.types.scalar(kU32), plain)
	for k, id := range r.idx {
		if id == 0 {
			r.idx[k] = e.id()
			*ptys = append(*ptys, u32)
			*pids = append(*pids, r.idx[k])
		}
	}
	e.f.ptrRefs[p] = r
}

package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

func (e *emitter) ext(ty uint32, inst uint32, args ...uint32) uint32 {
	return e.op(spirv.OpExtInst, ty, append([]uint32{e.glsl, inst}, args...)...)
}

// builtin emits a call of a builtin function (see builtinTable).
func (e *emitter) builtin(c *callExpr, info *exprInfo) uint32 {
	b := builtinTable[c.Fn.Name]
	if b == nil {
		bugf("unknown builtin %s", c.Fn.Name)
	}
	return e.emitTable(c, b, info)
}

// arrayLength is OpArrayLength of the buffer a pointer leads to: &buf (a
// wrapped runtime array, member 0 of the Block), &buf.member (the last
// member of the buffer's struct), or a pointer parameter or let made from
// one of them (a runtime-sized array lives only in a storage buffer, so its
// pointer's root is always the buffer variable).
func (e *emitter) arrayLength(c *callExpr, ty uint32) uint32 {
	r := e.ptrRef(c.Args[0])
	member, ok := uint32(0), len(r.idx) == 1
	if ok {
		member, ok = e.constIndex[r.idx[0]]
	}
	if !ok || !e.isGlobalVar(r.base) {
		bugf("arrayLength of a pointer not into a buffer's runtime-sized array")
	}
	return e.op(spirv.OpArrayLength, ty, r.base, member)
}

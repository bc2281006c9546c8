package wgsl

// coopCall emits a subgroup matrix builtin as SPV_KHR_cooperative_matrix.
func (e *emitter) coopCall(c *callExpr, res *wgslType) uint32 {
	bugf("SPV_KHR_cooperative_matrix emission of %s is not implemented yet", c.Fn.Name)
	return 0
}

// coopType is the OpTypeCooperativeMatrixKHR of subgroup matrix t.
func (e *emitter) coopType(t *wgslType) uint32 {
	bugf("SPV_KHR_cooperative_matrix type %s is not implemented yet", t)
	return 0
}

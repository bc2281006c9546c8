package shaders

import "fmt"

// The performance model of profiling (KernelTime.Flops and Bytes), kept out
// of the forward pass: each push-constant struct computes the work of its
// dispatch from the shapes it carries, and the recorder asks for it only
// when a batch is profiled. Bytes are a lower bound: each operand once.

// costed is a dispatch's push constants that know its work.
type costed interface {
	cost(c costCtx) (flops, bytes float64)
}

// costCtx is what a dispatch's work depends on besides its push constants.
// The methods multiply in float64 (products of shapes can pass 2^32), in
// integers exactly below 2^53.
type costCtx struct {
	wb     float64  // bytes of a stored weight
	consts constSet // the pipeline's override constants (EPI, WPE)
}

// profileRow is implemented by push constants whose kernel's profile rows
// are per shape (the matmuls: per weight).
type profileRow interface {
	row() string
}

// embedParams' cost: per value a row of wte (stored weights) and, for GPT-2,
// of wpe read and added, the f32 output written; the token ids once.
func (p embedParams) cost(c costCtx) (float64, float64) {
	n := float64(p.N) * float64(p.C)
	ids := 4 * float64(p.N)
	if v, ok := c.consts.value("WPE"); ok && v == 0 { // no position embeddings (the Llama family)
		return 0, (c.wb+4)*n + ids
	}
	return n, (2*c.wb+4)*n + ids
}

func (p layerNormParams) cost(costCtx) (float64, float64) {
	n := float64(p.Rows) * float64(p.C)
	return 8 * n, 4 * 2 * n
}

func (p rmsNormParams) cost(costCtx) (float64, float64) {
	n := float64(p.Rows) * float64(p.C)
	return 4 * n, 4 * 2 * n
}

func (p kvWriteParams) cost(costCtx) (float64, float64) {
	return 0, 4 * 4 * float64(p.B) * float64(p.T) * float64(p.C)
}

// matmulCost is an (M, K) x (K, N) product's: f32 activations, stored
// weights, and the output's columns (N/2 for the SwiGLU epilogue).
func matmulCost(c costCtx, M, N, K uint32) (float64, float64) {
	outCols := N
	if v, _ := c.consts.value("EPI"); epilogue(v) == epiSwiGLU {
		outCols = N / 2
	}
	m, n, k := float64(M), float64(N), float64(K)
	return 2 * m * n * k, 4*m*k + c.wb*k*n + 4*m*float64(outCols)
}

func (p matmulParams) cost(c costCtx) (float64, float64)       { return matmulCost(c, p.M, p.N, p.K) }
func (p matmulSharedParams) cost(c costCtx) (float64, float64) { return matmulCost(c, p.M, p.N, p.K) }
func (p matmulParams) row() string                             { return fmt.Sprintf("K%d N%d", p.K, p.N) }
func (p matmulSharedParams) row() string                       { return fmt.Sprintf("K%d N%d", p.K, p.N) }

func (p attentionParams) cost(costCtx) (float64, float64) {
	N := float64(p.B) * float64(p.T)
	QD, KVD := float64(p.C), float64(p.KV*(p.C/p.H))
	keys := float64(p.Pos0) + float64(p.T+1)/2 // mean keys per query
	return 4 * N * keys * QD, 4 * (N*2*QD + 2*float64(p.B)*float64(p.Pos0+p.T)*KVD)
}

func (p ropeParams) cost(costCtx) (float64, float64) {
	N := float64(p.B) * float64(p.T)
	QD, KVD := float64(p.H*p.HD), float64(p.KV*p.HD)
	ld := float64((p.H + 2*p.KV) * p.HD)
	return N * (QD + KVD) * 6, 4 * N * (ld + QD + 2*KVD)
}

func (p lmHeadParams) cost(c costCtx) (float64, float64) {
	P, V, C := float64(p.P), float64(p.V), float64(p.C)
	hb := 4.0 // bytes of a value of h: f32, but f16 for lmhead_loss_coop.wgsl (the only LM head with subgroups, SGM)
	if _, ok := c.consts.value("SGM"); ok {
		hb = 2
	}
	return 2 * P * V * C, c.wb*V*C + hb*P*C
}

func (p nllCombineParams) cost(costCtx) (float64, float64) {
	P, parts := float64(p.P), float64(p.Tiles)
	return P * parts * 4, 8*P*parts + 8*P
}

func (p toF16Params) cost(costCtx) (float64, float64) {
	n := 4 * float64(p.N)
	return n, 6 * n
}

func (p logitsParams) cost(c costCtx) (float64, float64) {
	n, C := float64(p.V), float64(p.C)
	return 2 * n * C, n * C * c.wb
}

func (p topKParams) cost(c costCtx) (float64, float64) {
	P, n, C := float64(p.P), float64(p.Hi-p.Lo), float64(p.C)
	return 2 * P * n * C, c.wb*n*C + 4*P*C
}

// Every push-constant struct of the forward pass has a cost.
var (
	_ costed = embedParams{}
	_ costed = layerNormParams{}
	_ costed = rmsNormParams{}
	_ costed = kvWriteParams{}
	_ costed = matmulParams{}
	_ costed = matmulSharedParams{}
	_ costed = attentionParams{}
	_ costed = ropeParams{}
	_ costed = lmHeadParams{}
	_ costed = nllCombineParams{}
	_ costed = toF16Params{}
	_ costed = logitsParams{}
	_ costed = topKParams{}
)

package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// panelNR is the output channels of a panel (model's panelNR): 32, two
// zmm or four ymm.
const panelNR = 32

// panelShape is one outer-product kernel: R rows of a by V vectors of
// channels, the panel's 32 channels in 32/(lanes·V) passes.
type panelShape struct{ R, V int }

// panelShapes are the shapes of each width's outer-product kernels
// (panel{R}x32{elem}{isa}): the main register tile and the smaller ones for
// the rows left over. AVX-512: 14 x 32 (28 zmm accumulators, 2 panel
// vectors, 1 broadcast), one pass. AVX2: 6 x 16 (12 ymm accumulators, 2
// panel vectors, 1 broadcast), the panel's two halves one after the other,
// each over all of k; 4 rows likewise (8 accumulators); 2 and 1 rows in
// one pass of 4 vectors (8 and 4 accumulators, 4 panel vectors).
var panelShapes = map[int][]panelShape{
	16: {{14, 2}, {8, 2}, {4, 2}, {2, 2}, {1, 2}},
	8:  {{6, 2}, {4, 2}, {2, 4}, {1, 4}},
}

// panel emits panel{R}x32{elem}{isa}, the outer-product (BLIS-style)
// micro-kernel: c[i*ldc+j] (i < R, j < 32) accumulates a[i*lda+k]·p[k*32+j]
// for k < K in increasing k, one FMA chain per element, where p is a panel
// of the weights packed k-major, 32 columns wide, in float32 or 16 bits
// widened exactly as they load. The chain starts from zero (acc == 0) or
// from the values in c (acc != 0), so a product split along k at any
// boundaries gives the same bits as the whole. A pass covers lanes·V of
// the 32 columns over all of k; per k: V vector loads of the panel and R
// broadcasts of a, each feeding V FMAs.
func (g *gen) panel(R, V int, e elem) {
	name := fmt.Sprintf("panel%dx%d%s%s", R, panelNR, e.name, g.name)
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr(fmt.Sprintf("func(a *float32, lda int, p %s, k int, c *float32, ldc int, acc int)", e.gotyp))
	g.Doc(fmt.Sprintf("%s accumulates c[i*ldc+j] (from 0 where acc == 0) += Σ_k a[i*lda+k]·p[k*%d+j] for i < %d, j < %d, one FMA chain per element in increasing k.", name, panelNR, R, panelNR))
	cols := g.lanes * V // columns a pass
	passes := panelNR / cols
	acc := make([][]reg.VecVirtual, R)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, V)
		for v := range acc[i] {
			acc[i][v] = g.vec()
		}
	}
	for h := range passes {
		g.panelPass(R, V, e, acc, h*cols, fmt.Sprintf("_%d", h))
	}
	g.VZEROUPPER()
	g.RET()
}

// panelPass emits one pass of panel: columns [col0, col0+lanes·V) of the
// panel over all of k, into the accumulators acc, then stored to c. Labels
// end in suffix.
func (g *gen) panelPass(R, V int, e elem, acc [][]reg.VecVirtual, col0 int, suffix string) {
	vbytes := 4 * g.lanes
	base0, L, L3, L5 := g.GP64(), g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("a"), base0)
	g.Load(g.Param("lda"), L)
	g.SHLQ(operand.U8(2), L)
	g.LEAQ(operand.Mem{Base: L, Index: L, Scale: 2}, L3)
	g.LEAQ(operand.Mem{Base: L, Index: L, Scale: 4}, L5)
	var base7 reg.GPVirtual
	if R > 7 {
		base7 = g.GP64()
		g.LEAQ(operand.Mem{Base: base0, Index: L3, Scale: 2}, base7)
		g.ADDQ(L, base7)
	}
	row := func(i, disp int) operand.Mem {
		base := base0
		if i >= 7 {
			base, i = base7, i-7
		}
		m := operand.Mem{Base: base, Disp: disp}
		switch i {
		case 1, 2, 4:
			m.Index, m.Scale = L, uint8(i)
		case 3, 6:
			m.Index, m.Scale = L3, uint8(i/3)
		case 5:
			m.Index, m.Scale = L5, 1
		}
		return m
	}
	p, K, c, ldc, flag := g.GP64(), g.GP64(), g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("p"), p)
	g.Load(g.Param("k"), K)
	g.Load(g.Param("c"), c)
	g.Load(g.Param("ldc"), ldc)
	g.SHLQ(operand.U8(2), ldc)
	g.Load(g.Param("acc"), flag)
	if col0 > 0 {
		g.ADDQ(operand.U32(col0*e.size), p)
		g.ADDQ(operand.U32(col0*4), c)
	}
	cr := g.GP64()
	g.TESTQ(flag, flag)
	g.JNE(operand.LabelRef("load" + suffix))
	for i := range R {
		for v := range V {
			g.zero(acc[i][v])
		}
	}
	g.JMP(operand.LabelRef("loop4" + suffix))
	g.Label("load" + suffix)
	g.MOVQ(c, cr)
	for i := range R {
		if i > 0 {
			g.ADDQ(ldc, cr)
		}
		for v := range V {
			g.VMOVUPS(operand.Mem{Base: cr, Disp: vbytes * v}, acc[i][v])
		}
	}
	pstride := panelNR * e.size
	step := func(u int) {
		bv := make([]reg.VecVirtual, V)
		for v := range bv {
			bv[v] = g.vec()
			g.loadB(operand.Mem{Base: p, Disp: u*pstride + g.lanes*e.size*v}, bv[v], e)
		}
		for i := range R {
			x := g.vec()
			g.VBROADCASTSS(row(i, 4*u), x)
			for v := range V {
				g.VFMADD231PS(bv[v], x, acc[i][v])
			}
		}
	}
	advance := func(n int) {
		g.ADDQ(operand.U32(n*pstride), p)
		g.ADDQ(operand.U8(4*n), base0)
		if R > 7 {
			g.ADDQ(operand.U8(4*n), base7)
		}
	}
	const unroll = 4
	g.Label("loop4" + suffix)
	g.CMPQ(K, operand.U8(unroll))
	g.JB(operand.LabelRef("loop" + suffix))
	for u := range unroll {
		step(u)
	}
	advance(unroll)
	g.SUBQ(operand.U8(unroll), K)
	g.JMP(operand.LabelRef("loop4" + suffix))
	g.Label("loop" + suffix)
	g.SUBQ(operand.U8(1), K)
	g.JB(operand.LabelRef("store" + suffix))
	step(0)
	advance(1)
	g.JMP(operand.LabelRef("loop" + suffix))
	g.Label("store" + suffix)
	for i := range R {
		if i > 0 {
			g.ADDQ(ldc, c)
		}
		for v := range V {
			g.VMOVUPS(acc[i][v], operand.Mem{Base: c, Disp: vbytes * v})
		}
	}
}

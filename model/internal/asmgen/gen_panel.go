package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// panelShapes are the row counts of the AVX-512 outer-product kernels
// (panel{R}x{V*16}{elem}AVX512): the main R x 32 register tile and the
// smaller ones for the rows left over.
var panelShapes = []struct{ R, V int }{{14, 2}, {8, 2}, {4, 2}, {2, 2}, {1, 2}}

// panel emits panel{R}x{16V}{elem}AVX512, the outer-product (BLIS-style)
// micro-kernel: c[i*ldc+j] (i < R, j < 16V) accumulates a[i*lda+k]·p[k*16V+j]
// for k < K in increasing k, one FMA chain per element, where p is a panel
// of the weights packed k-major, 16V columns wide, in float32 or 16 bits
// widened exactly as they load. The chain starts from zero (acc == 0) or
// from the values in c (acc != 0), so a product split along k at any
// boundaries gives the same bits as the whole. Per k: V vector loads of the
// panel and R·V FMAs whose a operand is broadcast from memory ({1to16}).
func (g *gen) panel(R, V int, e elem) {
	name := fmt.Sprintf("panel%dx%d%s%s", R, 16*V, e.name, g.name)
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr(fmt.Sprintf("func(a *float32, lda int, p %s, k int, c *float32, ldc int, acc int)", e.gotyp))
	g.Doc(fmt.Sprintf("%s accumulates c[i*ldc+j] (from 0 where acc == 0) += Σ_k a[i*lda+k]·p[k*%d+j] for i < %d, j < %d, one FMA chain per element in increasing k.", name, 16*V, R, 16*V))
	// Rows of a from two bases and the strides L, 3L, 5L: base0 + {0, L,
	// 2L, 3L, 4L, 5L, 6L} are rows 0 to 6, base7 = base0 + 7L the same
	// offsets rows 7 to 13.
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
	acc := make([][]reg.VecVirtual, R)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, V)
		for v := range acc[i] {
			acc[i][v] = g.vec()
		}
	}
	cr := g.GP64()
	g.TESTQ(flag, flag)
	g.JNE(operand.LabelRef("load"))
	for i := range R {
		for v := range V {
			g.zero(acc[i][v])
		}
	}
	g.JMP(operand.LabelRef("loop4"))
	g.Label("load")
	g.MOVQ(c, cr)
	for i := range R {
		if i > 0 {
			g.ADDQ(ldc, cr)
		}
		for v := range V {
			g.VMOVUPS(operand.Mem{Base: cr, Disp: 64 * v}, acc[i][v])
		}
	}
	pstride := 16 * V * e.size
	step := func(u int) {
		bv := make([]reg.VecVirtual, V)
		for v := range bv {
			bv[v] = g.vec()
			g.loadB(operand.Mem{Base: p, Disp: u*pstride + 16*e.size*v}, bv[v], e)
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
	g.Label("loop4")
	g.CMPQ(K, operand.U8(unroll))
	g.JB(operand.LabelRef("loop"))
	for u := range unroll {
		step(u)
	}
	advance(unroll)
	g.SUBQ(operand.U8(unroll), K)
	g.JMP(operand.LabelRef("loop4"))
	g.Label("loop")
	g.SUBQ(operand.U8(1), K)
	g.JB(operand.LabelRef("store"))
	step(0)
	advance(1)
	g.JMP(operand.LabelRef("loop"))
	g.Label("store")
	for i := range R {
		if i > 0 {
			g.ADDQ(ldc, c)
		}
		for v := range V {
			g.VMOVUPS(acc[i][v], operand.Mem{Base: c, Disp: 64 * v})
		}
	}
	g.VZEROUPPER()
	g.RET()
}

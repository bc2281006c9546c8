package main

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// isa is one vector width: the kernels' name suffix, lanes per register, and the
// rows of the main dot-product block (rows x 4 accumulators, plus the rows of a
// and one row of b, must fit the register file: 16 for AVX2, 32 for AVX-512).
type isa struct {
	name  string
	lanes int
	rows  int
}

var isas = []isa{
	{"AVX2", 8, 3},
	{"AVX512", 16, 4},
}

// elem is the element type of a dot product's b operand (the weights): f32,
// or 16 bits widened exactly to f32 as they are loaded.
type elem struct {
	name  string // the kernels' name infix: "", "F16", "BF16"
	size  int    // bytes per element
	gotyp string // the Go pointer type of b
}

var (
	elemF32  = elem{"", 4, "*float32"}
	elemF16  = elem{"F16", 2, "*uint16"}  // IEEE binary16, widened by VCVTPH2PS (F16C)
	elemBF16 = elem{"BF16", 2, "*uint16"} // bfloat16: zero-extended to 32 bits, shifted to the upper half
	elems    = []elem{elemF32, elemF16, elemBF16}
)

// argv is the command recorded in the generated files' headers.
var argv = []string{"go", "run", "./internal/asmgen", "-out", "ops_amd64.s", "-stubs", "ops_amd64_stubs.go"}

// Generate returns the assembly file and the Go stub file.
func Generate() (asm, stubs []byte, err error) {
	c := build.NewContext()
	c.ConstraintExpr("amd64,!purego") // the stub file's name implies no GOARCH
	k := defineConsts(c)
	for _, s := range isas {
		g := &gen{Context: c, isa: s, k: k}
		for _, e := range elems {
			for _, shape := range [][2]int{{s.rows, 4}, {1, 4}, {1, 1}} {
				g.dot(shape[0], shape[1], e, wholeProduct)
			}
			if s.rows == 4 {
				for _, mode := range chunkModes {
					g.dot(4, 4, e, mode)
				}
			}
		}
		for _, shape := range [][2]int{{4, 3}, {1, 3}, {4, 1}, {1, 1}} {
			g.nn(shape[0], shape[1])
		}
		g.nnCol()
		g.divMaxRow(true)
		g.divMaxRow(false)
		g.mulRow()
		g.expRow("expSubRow", true)
		g.expRow("sumExpSub", false)
		g.gelu()
		g.geluErf()
		g.swiglu()
		g.rows()
		for _, e := range elems {
			for _, sh := range panelShapes[s.lanes] {
				g.panel(sh.R, sh.V, e)
			}
		}
		if s.lanes == 16 {
			for _, shape := range [][2]int{{4, 4}, {1, 4}, {1, 1}} {
				g.dpbf(shape[0], shape[1], wholeProduct)
			}
			for _, mode := range chunkModes {
				g.dpbf(4, 4, mode)
			}
			g.amxGemm()
		}
	}
	(&gen{Context: c, k: k}).xgetbv()
	f, err := c.Result()
	if err != nil {
		return nil, nil, fmt.Errorf("asmgen: %w", err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, nil, fmt.Errorf("asmgen: %w", err)
	}
	cfg := printer.Config{Argv: argv, Pkg: "model"}
	if asm, err = printer.NewGoAsm(cfg).Print(f); err != nil {
		return nil, nil, fmt.Errorf("asmgen: %w", err)
	}
	if stubs, err = printer.NewStubs(cfg).Print(f); err != nil {
		return nil, nil, fmt.Errorf("asmgen: %w", err)
	}
	if err := checkAVX2Registers(string(asm)); err != nil {
		return nil, nil, err
	}
	return asm, stubs, nil
}

// highReg matches the vector registers only EVEX (AVX-512) encodings reach.
var highReg = regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b|\bZ[0-9]+\b|\bK[0-7]\b`)

// checkAVX2Registers fails when an AVX2 function uses a register that needs
// AVX-512: the assembler would silently encode it with EVEX, and the kernel
// would fault on AVX2-only CPUs.
func checkAVX2Registers(asm string) error {
	inAVX2 := false
	for i, line := range strings.Split(asm, "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			inAVX2 = strings.Contains(line, "AVX2(")
		}
		if inAVX2 && highReg.MatchString(line) {
			return fmt.Errorf("asmgen: line %d: AVX2 kernel uses an AVX-512 register: %s", i+1, strings.TrimSpace(line))
		}
	}
	return nil
}

// gen emits the kernels of one isa.
type gen struct {
	*build.Context
	isa
	k consts
}

// vec returns a new virtual vector register of the isa's width.
func (g *gen) vec() reg.VecVirtual {
	if g.lanes == 16 {
		return g.ZMM()
	}
	return g.YMM()
}

// zero clears v (VPXORD: VXORPS on ZMM registers needs AVX512DQ).
func (g *gen) zero(v reg.VecVirtual) {
	if g.lanes == 16 {
		g.VPXORD(v, v, v)
	} else {
		g.VXORPS(v, v, v)
	}
}

// reduce returns the sum of v's lanes in lane 0 of a new XMM register, in a
// fixed tree: (AVX-512: the two 256-bit halves added,) the two 128-bit halves
// added, then (l0+l2)+(l1+l3).
func (g *gen) reduce(v reg.VecVirtual) reg.VecVirtual {
	y := v.AsY().(reg.VecVirtual)
	if g.lanes == 16 {
		t := g.YMM()
		g.VEXTRACTF64X4(operand.U8(1), v, t)
		g.VADDPS(t, v.AsY(), t)
		y = t
	}
	x := g.XMM()
	if g.lanes == 16 {
		g.VEXTRACTF32X4(operand.U8(1), y, x)
	} else {
		g.VEXTRACTF128(operand.U8(1), y, x)
	}
	g.VADDPS(x, y.AsX(), x)
	h := g.XMM()
	g.VMOVHLPS(x, x, h) // h0, h1 = x2, x3
	g.VADDPS(h, x, h)   // h0, h1 = x0+x2, x1+x3
	s := g.XMM()
	g.VMOVSHDUP(h, s) // s0 = h1
	g.VADDSS(s, h, s) // s0 = h0+h1
	return s
}

// rowPointers returns n pointers to rows of size-byte elements, the first
// from param p, each the previous plus param ld elements.
func (g *gen) rowPointers(p, ld string, n, size int) []reg.GPVirtual {
	rows := []reg.GPVirtual{g.GP64()}
	g.Load(g.Param(p), rows[0])
	if n == 1 {
		return rows
	}
	stride := g.GP64()
	g.Load(g.Param(ld), stride)
	g.SHLQ(operand.U8(map[int]uint8{2: 1, 4: 2}[size]), stride)
	for i := 1; i < n; i++ {
		r := g.GP64()
		g.LEAQ(operand.Mem{Base: rows[i-1], Index: stride, Scale: 1}, r)
		rows = append(rows, r)
	}
	return rows
}

func at(row, k reg.GPVirtual) operand.Mem { return operand.Mem{Base: row, Index: k, Scale: 4} }

// atElem is element k of a row of e.
func atElem(row, k reg.GPVirtual, e elem) operand.Mem {
	return operand.Mem{Base: row, Index: k, Scale: uint8(e.size)}
}

// loadB loads lanes elements of e at m into v as float32 (exact widening).
func (g *gen) loadB(m operand.Mem, v reg.VecVirtual, e elem) {
	switch e {
	case elemF32:
		g.VMOVUPS(m, v)
	case elemF16:
		g.VCVTPH2PS(m, v)
	case elemBF16:
		g.VPMOVZXWD(m, v)
		g.VPSLLD(operand.U8(16), v, v)
	}
}

// loadScalarB loads the one element of e at m into lane 0 of the XMM
// register x as float32 (exact widening).
func (g *gen) loadScalarB(m operand.Mem, x reg.VecVirtual, e elem) {
	if e == elemF32 {
		g.VMOVSS(m, x)
		return
	}
	t := g.GP32()
	g.MOVWLZX(m, t)
	if e == elemBF16 {
		g.SHLL(operand.U8(16), t)
	}
	g.VMOVD(t, x)
	if e == elemF16 {
		g.VCVTPH2PS(x, x)
	}
}

// dot emits dot{R}x{C}{elem}{isa}: out[i*ldo+j] = a_i · b_j for the R rows a_i
// of a (float32, stride lda) and the C rows b_j of b (elements of e, stride
// ldb), all k long. A 16-bit b is widened exactly as it is loaded, so the
// result is bit-identical to the float32 kernel's on the widened values.
func (g *gen) dot(R, C int, e elem, mode chunkMode) {
	name := fmt.Sprintf("dot%dx%d%s%s%s", R, C, e.name, mode.suffix, g.name)
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	what := ""
	if e != elemF32 {
		what = ", b in " + e.name + " widened to float32"
	}
	whole := fmt.Sprintf("dot%dx%d%s%s", R, C, e.name, g.name)
	switch mode {
	case wholeProduct:
		g.SignatureExpr(fmt.Sprintf("func(a *float32, lda int, b %s, ldb int, k int, out *float32, ldo int)", e.gotyp))
		g.Doc(fmt.Sprintf("%s sets out[i*ldo+j] = Σ_k a[i*lda+k]·b[j*ldb+k] for i < %d, j < %d (%d lanes%s).", name, R, C, g.lanes, what))
	default:
		g.SignatureExpr(fmt.Sprintf("func(a *float32, lda int, b %s, ldb int, k int, acc *float32, out *float32, ldo int)", e.gotyp))
		from, to := "zero", fmt.Sprintf("reduces them and adds the k%%%d tail into out as %s does", g.lanes, whole)
		if mode.load {
			from = "the lane sums in acc"
		}
		if mode.store {
			to = fmt.Sprintf("stores the lane sums in acc (k a multiple of %d)", g.lanes)
		}
		g.Doc(fmt.Sprintf("%s is one chunk of %s's product along k: it starts from %s, adds the k elements as %s does, and %s.", name, whole, from, whole, to))
	}
	a := g.rowPointers("a", "lda", R, 4)
	b := g.rowPointers("b", "ldb", C, e.size)
	K, n, kk := g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("k"), K)
	g.MOVQ(K, n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(kk, kk)
	acc := make([][]reg.VecVirtual, R)
	var accp reg.GPVirtual // acc's lane sums in memory (the chunk kernels)
	if mode.load || mode.store {
		accp = g.GP64()
		g.Load(g.Param("acc"), accp)
	}
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, C)
		for j := range acc[i] {
			acc[i][j] = g.vec()
			if mode.load {
				g.VMOVUPS(operand.Mem{Base: accp, Disp: 64 * (i*C + j)}, acc[i][j])
			} else {
				g.zero(acc[i][j])
			}
		}
	}
	g.Label("vec")
	g.CMPQ(kk, n)
	g.JAE(operand.LabelRef("reduce"))
	av := make([]reg.VecVirtual, R)
	for i := range av {
		av[i] = g.vec()
		g.VMOVUPS(at(a[i], kk), av[i])
	}
	for j := range C {
		bv := g.vec()
		g.loadB(atElem(b[j], kk, e), bv, e)
		for i := range R {
			g.VFMADD231PS(bv, av[i], acc[i][j])
		}
	}
	g.ADDQ(operand.U32(g.lanes), kk)
	g.JMP(operand.LabelRef("vec"))

	g.Label("reduce")
	if mode.store {
		for i := range R {
			for j := range C {
				g.VMOVUPS(acc[i][j], operand.Mem{Base: accp, Disp: 64 * (i*C + j)})
			}
		}
		g.VZEROUPPER()
		g.RET()
		return
	}
	if R == 4 && C == 4 && g.lanes == 16 {
		// Without a tail, the sixteen sums are reduced together and
		// stored a row at a time (reduce4x4: the same bits as reduce).
		g.CMPQ(kk, K)
		g.JNE(operand.LabelRef("reduce1"))
		var a [4][4]operand.Op
		for i := range 4 {
			for j := range 4 {
				a[i][j] = acc[i][j]
			}
		}
		v := g.reduce4x4(a, g.vec(), g.vec())
		out, ldo := g.GP64(), g.GP64()
		g.Load(g.Param("out"), out)
		g.Load(g.Param("ldo"), ldo)
		g.SHLQ(operand.U8(2), ldo)
		g.store4x4(v, out, ldo)
		g.VZEROUPPER()
		g.RET()
		g.Label("reduce1")
	}
	c := make([][]reg.VecVirtual, R)
	for i := range c {
		c[i] = make([]reg.VecVirtual, C)
		for j := range c[i] {
			c[i][j] = g.reduce(acc[i][j])
		}
	}
	g.Label("tail")
	g.CMPQ(kk, K)
	g.JAE(operand.LabelRef("store"))
	xa := make([]reg.VecVirtual, R)
	for i := range xa {
		xa[i] = g.XMM()
		g.VMOVSS(at(a[i], kk), xa[i])
	}
	for j := range C {
		for i := range R {
			// b_j[k] is loaded once per product: the 3x4 AVX2 block has no
			// register left to keep it.
			t := g.XMM()
			if e == elemF32 {
				g.VMULSS(at(b[j], kk), xa[i], t)
			} else {
				g.loadScalarB(atElem(b[j], kk, e), t, e)
				g.VMULSS(t, xa[i], t)
			}
			g.VADDSS(t, c[i][j], c[i][j])
		}
	}
	g.INCQ(kk)
	g.JMP(operand.LabelRef("tail"))

	g.Label("store")
	out := g.GP64()
	g.Load(g.Param("out"), out)
	var ldo reg.GPVirtual
	if R > 1 {
		ldo = g.GP64()
		g.Load(g.Param("ldo"), ldo)
		g.SHLQ(operand.U8(2), ldo)
	}
	for i := range R {
		if i > 0 {
			g.ADDQ(ldo, out)
		}
		for j := range C {
			g.VMOVSS(c[i][j], operand.Mem{Base: out, Disp: 4 * j})
		}
	}
	g.VZEROUPPER()
	g.RET()
}

// nn emits nn{R}x{V}{isa}: out[i*ldo+j] = Σ_k a[i*lda+k]·b[k*ldb+j] for
// i < R and j < V·lanes, b row-major (k, n) with stride ldb. Each output is
// one FMA chain in increasing k (a[i][k] broadcast, times V vectors of b's row
// k), so no lane is ever reduced: an element's value depends on nothing but
// its row of a and column of b, whichever block (or nnCol) computes it.
func (g *gen) nn(R, V int) {
	name := fmt.Sprintf("nn%dx%d%s", R, V, g.name)
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(a *float32, lda int, b *float32, ldb int, k int, out *float32, ldo int)")
	g.Doc(fmt.Sprintf("%s sets out[i*ldo+j] = Σ_k a[i*lda+k]·b[k*ldb+j] for i < %d, j < %d, one FMA chain per element in increasing k.", name, R, V*g.lanes))
	a := g.rowPointers("a", "lda", R, 4)
	b, ldb, K, kk := g.GP64(), g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("b"), b)
	g.Load(g.Param("ldb"), ldb)
	g.SHLQ(operand.U8(2), ldb)
	g.Load(g.Param("k"), K)
	g.XORQ(kk, kk)
	acc := make([][]reg.VecVirtual, R)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, V)
		for v := range acc[i] {
			acc[i][v] = g.vec()
			g.zero(acc[i][v])
		}
	}
	g.Label("loop")
	g.CMPQ(kk, K)
	g.JAE(operand.LabelRef("store"))
	bv := make([]reg.VecVirtual, V)
	for v := range bv {
		bv[v] = g.vec()
		g.VMOVUPS(operand.Mem{Base: b, Disp: 4 * g.lanes * v}, bv[v])
	}
	for i := range R {
		x := g.vec()
		g.VBROADCASTSS(at(a[i], kk), x)
		for v := range V {
			g.VFMADD231PS(bv[v], x, acc[i][v])
		}
	}
	g.ADDQ(ldb, b)
	g.INCQ(kk)
	g.JMP(operand.LabelRef("loop"))
	g.Label("store")
	out := g.GP64()
	g.Load(g.Param("out"), out)
	var ldo reg.GPVirtual
	if R > 1 {
		ldo = g.GP64()
		g.Load(g.Param("ldo"), ldo)
		g.SHLQ(operand.U8(2), ldo)
	}
	for i := range R {
		if i > 0 {
			g.ADDQ(ldo, out)
		}
		for v := range V {
			g.VMOVUPS(acc[i][v], operand.Mem{Base: out, Disp: 4 * g.lanes * v})
		}
	}
	g.VZEROUPPER()
	g.RET()
}

// nnCol emits nnCol{isa}: nn for one row and one column, with scalar FMAs,
// for the columns left over by the vector blocks.
func (g *gen) nnCol() {
	name := "nnCol" + g.name
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(a *float32, b *float32, ldb int, k int, out *float32)")
	g.Doc(fmt.Sprintf("%s sets *out = Σ_k a[k]·b[k*ldb], one FMA chain in increasing k.", name))
	a, b, ldb, K, kk := g.GP64(), g.GP64(), g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("a"), a)
	g.Load(g.Param("b"), b)
	g.Load(g.Param("ldb"), ldb)
	g.SHLQ(operand.U8(2), ldb)
	g.Load(g.Param("k"), K)
	g.XORQ(kk, kk)
	acc := g.XMM()
	g.VXORPS(acc, acc, acc)
	g.Label("loop")
	g.CMPQ(kk, K)
	g.JAE(operand.LabelRef("store"))
	x := g.XMM()
	g.VMOVSS(operand.Mem{Base: b}, x)
	g.VFMADD231SS(at(a, kk), x, acc)
	g.ADDQ(ldb, b)
	g.INCQ(kk)
	g.JMP(operand.LabelRef("loop"))
	g.Label("store")
	out := g.GP64()
	g.Load(g.Param("out"), out)
	g.VMOVSS(acc, operand.Mem{Base: out})
	g.VZEROUPPER()
	g.RET()
}

// consts are the exponential's constants in memory, 16 lanes each (AVX2 reads
// the first 8), and the GELUs'.
type consts struct {
	lo, hi, log2e, negC1, c2, p0, p1, p2, p3, p4, p5, one, bias, negInf operand.Mem

	geluC, geluM2S operand.Mem     // gelu_new's 0.044715 and -2·sqrt(2/π)
	rsqrt2, half   operand.Mem     // the exact GELU's 1/√2 and 0.5
	maxFloat       operand.Mem     // the largest float32, where the exact GELU takes +Inf's |x|
	erfc           [10]operand.Mem // Numerical Recipes' erfcc coefficients, constant term first
}

// erfcCoefficients are Numerical Recipes' erfcc: erfc(z) = t·exp(-z² + c0 +
// t·(c1 + t·(c2 + ...))), t = 1/(1 + z/2), fractional error below 1.2e-7;
// model's erfc (float64) and the GPU epilogue use the same ones.
var erfcCoefficients = [10]float32{-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
	0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277}

// defineConsts emits Cephes' expf constants (clamp range, log2 e, ln 2 in two
// parts, the polynomial) and GELU's, each broadcast to 16 lanes.
func defineConsts(c *build.Context) consts {
	f := func(name string, v float32) operand.Mem {
		m := c.StaticGlobal(name)
		c.DataAttributes(attr.RODATA | attr.NOPTR)
		for i := range 16 {
			c.AddDatum(4*i, operand.U32(math.Float32bits(v)))
		}
		return m
	}
	bias := c.StaticGlobal("expbias")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := range 16 {
		c.AddDatum(4*i, operand.U32(127))
	}
	var erfc [10]operand.Mem
	for i, v := range erfcCoefficients {
		erfc[i] = f(fmt.Sprintf("erfcc%d", i), v)
	}
	return consts{
		rsqrt2: f("rsqrt2", float32(1/math.Sqrt2)), half: f("half", 0.5), erfc: erfc, maxFloat: f("maxfloat", math.MaxFloat32),
		lo: f("explo", -87.33654), hi: f("exphi", 88.72283), log2e: f("explog2e", 1.44269504088896341),
		negC1: f("expnegc1", -0.693359375), c2: f("expc2", 2.12194440e-4),
		p0: f("expp0", 1.9875691500e-4), p1: f("expp1", 1.3981999507e-3), p2: f("expp2", 8.3334519073e-3),
		p3: f("expp3", 4.1665795894e-2), p4: f("expp4", 1.6666665459e-1), p5: f("expp5", 5.0000001201e-1),
		one: f("expone", 1), bias: bias,
		geluC: f("geluc", 0.044715), geluM2S: f("gelum2s", -2*0.7978845608028654),
		negInf: f("neginf", float32(math.Inf(-1))),
	}
}

// exp replaces x by e^x, lane-wise (Cephes' expf): x clamped to [lo, hi],
// n = round-to-even(x·log2 e), r = x - n·c1 + n·c2, e^r by a degree-7
// polynomial, times 2^n built in the exponent bits. Every lane does the same
// operations at either width.
func (g *gen) exp(x reg.VecVirtual) {
	k := g.k
	g.VMAXPS(k.lo, x, x)
	g.VMINPS(k.hi, x, x)
	n := g.vec()
	g.VMULPS(k.log2e, x, n)
	if g.lanes == 16 {
		g.VRNDSCALEPS(operand.U8(0), n, n)
	} else {
		g.VROUNDPS(operand.U8(0), n, n)
	}
	g.VFMADD231PS(k.negC1, n, x) // r = x - n·c1
	g.VFMADD231PS(k.c2, n, x)    // r += n·c2
	p := g.vec()
	g.VMOVUPS(k.p0, p)
	for _, c := range []operand.Mem{k.p1, k.p2, k.p3, k.p4, k.p5} {
		g.VFMADD213PS(c, x, p) // p = p·r + c
	}
	r2, q := g.vec(), g.vec()
	g.VMULPS(x, x, r2)
	g.VADDPS(k.one, x, q)
	g.VFMADD213PS(q, r2, p) // p = p·r² + (r + 1)
	g.VCVTPS2DQ(n, n)
	g.VPADDD(k.bias, n, n)
	g.VPSLLD(operand.U8(23), n, n)
	g.VMULPS(n, p, x)
}

// expRow emits name{isa}(row *float32, n int, m float32) float32: over the
// first n - n%lanes floats of row, the sum of e^(row[i]-m) (lane-wise sums in
// increasing i, reduced by reduce); with store, row[i] is set to e^(row[i]-m).
func (g *gen) expRow(name string, store bool) {
	name += g.name
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(row *float32, n int, m float32) float32")
	if store {
		g.Doc(fmt.Sprintf("%s sets row[i] = e^(row[i]-m) for i < n - n%%%d and returns their sum.", name, g.lanes))
	} else {
		g.Doc(fmt.Sprintf("%s returns Σ e^(row[i]-m) for i < n - n%%%d.", name, g.lanes))
	}
	row, n, i := g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("row"), row)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(i, i)
	mv, acc := g.vec(), g.vec()
	m, err := g.Param("m").Resolve()
	if err != nil {
		panic(err)
	}
	g.VBROADCASTSS(m.Addr, mv)
	g.zero(acc)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	x := g.vec()
	g.VMOVUPS(at(row, i), x)
	g.VSUBPS(mv, x, x)
	g.exp(x)
	if store {
		g.VMOVUPS(x, at(row, i))
	}
	g.VADDPS(x, acc, acc)
	g.ADDQ(operand.U32(g.lanes), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	s := g.reduce(acc)
	g.VZEROUPPER() // before the SSE store of the result; keeps the low 128 bits
	g.Store(s, g.ReturnIndex(0))
	g.RET()
}

// divMaxRow emits divMaxRow{isa}(row *float32, n int, d float32) float32:
// row[i] /= d for i < n - n%lanes (IEEE division, as scalar code does), and
// the largest of the quotients (-Inf when there are none). Without div it
// emits maxRow{isa}(row *float32, n int) float32, the largest of those
// elements, row unchanged (the loss's row maximum).
func (g *gen) divMaxRow(div bool) {
	name := "maxRow" + g.name
	if div {
		name = "divMaxRow" + g.name
	}
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	if div {
		g.SignatureExpr("func(row *float32, n int, d float32) float32")
		g.Doc(fmt.Sprintf("%s sets row[i] /= d for i < n - n%%%d and returns the largest quotient (-Inf if none).", name, g.lanes))
	} else {
		g.SignatureExpr("func(row *float32, n int) float32")
		g.Doc(fmt.Sprintf("%s returns the largest row[i] for i < n - n%%%d (-Inf if none).", name, g.lanes))
	}
	row, n, i := g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("row"), row)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(i, i)
	dv, mx := g.vec(), g.vec()
	if div {
		d, err := g.Param("d").Resolve()
		if err != nil {
			panic(err)
		}
		g.VBROADCASTSS(d.Addr, dv)
	}
	g.VBROADCASTSS(g.k.negInf, mx)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	if div {
		x := g.vec()
		g.VMOVUPS(at(row, i), x)
		g.VDIVPS(dv, x, x)
		g.VMOVUPS(x, at(row, i))
		g.VMAXPS(x, mx, mx)
	} else {
		g.VMAXPS(at(row, i), mx, mx)
	}
	g.ADDQ(operand.U32(g.lanes), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	// The lanes' maximum: halves folded until one lane is left.
	y := mx.AsY().(reg.VecVirtual)
	if g.lanes == 16 {
		t := g.YMM()
		g.VEXTRACTF64X4(operand.U8(1), mx, t)
		g.VMAXPS(t, mx.AsY(), t)
		y = t
	}
	x4 := g.XMM()
	if g.lanes == 16 {
		g.VEXTRACTF32X4(operand.U8(1), y, x4)
	} else {
		g.VEXTRACTF128(operand.U8(1), y, x4)
	}
	g.VMAXPS(x4, y.AsX(), x4)
	h := g.XMM()
	g.VMOVHLPS(x4, x4, h)
	g.VMAXPS(h, x4, h)
	s := g.XMM()
	g.VMOVSHDUP(h, s)
	g.VMAXSS(s, h, s)
	g.VZEROUPPER()
	g.Store(s, g.ReturnIndex(0))
	g.RET()
}

// mulRow emits mulRow{isa}(row *float32, n int, m float32): row[i] *= m for
// i < n - n%lanes.
func (g *gen) mulRow() {
	name := "mulRow" + g.name
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(row *float32, n int, m float32)")
	g.Doc(fmt.Sprintf("%s sets row[i] *= m for i < n - n%%%d.", name, g.lanes))
	row, n, i := g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("row"), row)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(i, i)
	mv := g.vec()
	m, err := g.Param("m").Resolve()
	if err != nil {
		panic(err)
	}
	g.VBROADCASTSS(m.Addr, mv)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	x := g.vec()
	g.VMULPS(at(row, i), mv, x)
	g.VMOVUPS(x, at(row, i))
	g.ADDQ(operand.U32(g.lanes), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	g.VZEROUPPER()
	g.RET()
}

// gelu emits geluRow{isa}(x *float32, n int): gelu_new on the first
// n - n%lanes floats of x, as x / (1 + e^(-2u)), u = sqrt(2/π)·(x + 0.044715·x³)
// (the identity 0.5·x·(1 + tanh(u)) = x / (1 + e^(-2u))).
func (g *gen) gelu() {
	name := "geluRow" + g.name
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(x *float32, n int)")
	g.Doc(fmt.Sprintf("%s applies gelu_new to x[i] for i < n - n%%%d.", name, g.lanes))
	p, n, i := g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("x"), p)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(i, i)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	v, u := g.vec(), g.vec()
	g.VMOVUPS(at(p, i), v)
	g.VMULPS(v, v, u)
	g.VMULPS(v, u, u)
	g.VFMADD132PS(g.k.geluC, v, u) // u = x³·0.044715 + x
	g.VMULPS(g.k.geluM2S, u, u)
	g.exp(u)
	g.VADDPS(g.k.one, u, u)
	g.VDIVPS(u, v, v)
	g.VMOVUPS(v, at(p, i))
	g.ADDQ(operand.U32(g.lanes), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	g.VZEROUPPER()
	g.RET()
}

// geluErf emits geluErfRow{isa}(x *float32, n int): the exact GELU,
// x·Φ(x), on the first n - n%lanes floats of x, as max(x, 0) - 0.5·|x|·r
// with r = erfc(|x|/√2) = t·exp(-z² + P(t)), z = |x|/√2, t = 1/(1 + z/2)
// (erfcCoefficients): for x > 0, 0.5·x·(2 - r); for x <= 0, 0.5·x·r, the
// tail's digits kept. |x| is max(min(x, MaxFloat32), -x), so that +Inf
// gives +Inf - 0.5·MaxFloat32·0 = +Inf, not +Inf - Inf·0 (NaN), as the
// portable code does; -Inf gives NaN, as there (and in PyTorch).
func (g *gen) geluErf() {
	name := "geluErfRow" + g.name
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(x *float32, n int)")
	g.Doc(fmt.Sprintf("%s applies the exact GELU x·Φ(x) to x[i] for i < n - n%%%d.", name, g.lanes))
	p, n, i := g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("x"), p)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(i, i)
	zero, big := g.vec(), g.vec()
	g.zero(zero)
	g.VMOVUPS(g.k.maxFloat, big)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	k := g.k
	v, a, z, t, q := g.vec(), g.vec(), g.vec(), g.vec(), g.vec()
	g.VMOVUPS(at(p, i), v)
	g.VSUBPS(v, zero, a)     // -x
	g.VMINPS(v, big, z)      // min(x, MaxFloat32), x where x is a NaN
	g.VMAXPS(z, a, a)        // |x| = max(-x, that), exact; MaxFloat32 for +Inf
	g.VMULPS(k.rsqrt2, a, z) // z = |x|/√2
	g.VMOVUPS(k.half, t)
	g.VFMADD213PS(k.one, z, t) // t = z/2 + 1
	g.VMOVUPS(k.one, q)
	g.VDIVPS(t, q, t) // t = 1/(1 + z/2)
	g.VMOVUPS(k.erfc[9], q)
	for j := 8; j >= 0; j-- {
		g.VFMADD213PS(k.erfc[j], t, q) // q = q·t + c_j
	}
	g.VMULPS(z, z, z) // z²
	g.VSUBPS(z, q, q) // q -= z²
	g.exp(q)
	g.VMULPS(t, q, q) // r = erfc(z)
	g.VMULPS(k.half, a, a)
	g.VMULPS(a, q, q) // 0.5·|x|·r
	g.VMAXPS(zero, v, v)
	g.VSUBPS(q, v, v) // max(x, 0) - 0.5·|x|·r
	g.VMOVUPS(v, at(p, i))
	g.ADDQ(operand.U32(g.lanes), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	g.VZEROUPPER()
	g.RET()
}

// swiglu emits swigluRow{isa}(gate, up *float32, n int): the SwiGLU of the
// Llama family's MLP on the first n - n%lanes floats, gate[i] = gate[i] / (1
// + e^(-gate[i])) · up[i] (silu(gate) times up), rounded after each operation
// as the scalar code rounds them.
func (g *gen) swiglu() {
	name := "swigluRow" + g.name
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(gate *float32, up *float32, n int)") // not g: the assembler's name for R14
	g.Doc(fmt.Sprintf("%s sets gate[i] = gate[i] / (1 + e^(-gate[i])) · up[i] for i < n - n%%%d.", name, g.lanes))
	gp, up, n, i := g.GP64(), g.GP64(), g.GP64(), g.GP64()
	g.Load(g.Param("gate"), gp)
	g.Load(g.Param("up"), up)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-g.lanes), n)
	g.XORQ(i, i)
	zero := g.vec()
	g.zero(zero)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	v, e := g.vec(), g.vec()
	g.VMOVUPS(at(gp, i), v)
	g.VSUBPS(v, zero, e) // e = -x
	g.exp(e)
	g.VADDPS(g.k.one, e, e) // 1 + e^(-x)
	g.VDIVPS(e, v, v)       // x / (1 + e^(-x))
	g.VMULPS(at(up, i), v, v)
	g.VMOVUPS(v, at(gp, i))
	g.ADDQ(operand.U32(g.lanes), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	g.VZEROUPPER()
	g.RET()
}

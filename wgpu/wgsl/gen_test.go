package wgsl

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// exprGen writes random well-typed WGSL expressions over a fixed set of
// variables, to exercise the checker and emitter on combinations the
// hand-written tables miss.
type exprGen struct {
	rng     *rand.Rand
	depth   int
	cfKinds int // 11, or 17 to add barriers, writes of qv (also through pointers) and barriers that depend on qv (uniformity tests)
}

// genTypes are the types the generator produces.
var genTypes = []string{"f32", "i32", "u32", "bool", "vec2<f32>", "vec3<f32>", "vec4<f32>", "vec3<i32>", "vec2<u32>", "vec3<bool>", "f16", "vec4<f16>"}

// genVars declares one variable of each type (plus storage-backed ones).
const genPrelude = `enable f16;
@group(0) @binding(0) var<storage, read_write> sf: array<f32>;
@group(0) @binding(1) var<storage, read_write> su: array<u32>;
@group(0) @binding(2) var<uniform> un: vec4<u32>;
var<private> pv: vec4<f32>;
var<workgroup> wa: array<f32, 16>;
struct S { a: f32, v: vec3<f32>, n: array<u32, 3> }
fn helper(x: f32, y: vec3<f32>) -> f32 { return x + y.y; }
fn setq(p: ptr<function, u32>, v: u32) { *p = v; }
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) li: u32) {
	let f = sf[li]; let i = i32(su[li]); let u = su[li + 1u]; let b = f > 0.5;
	var v2 = vec2<f32>(f, 2.0); let v3 = vec3<f32>(f, 1.0, -2.0); var v4 = pv;
	let iv3 = vec3<i32>(i, 2, -3); let uv2 = vec2<u32>(u, 7u); let bv3 = vec3<bool>(b, true, false);
	let h = f16(f); let hv4 = vec4<f16>(h, 1.0h, 2.0h, 3.0h);
	var s = S(f, v3, array<u32, 3>(u, 1u, 2u));
	var arr = array<i32, 4>(i, 1, 2, 3);
	let q = un.x; var qv = un.y;
	var m3 = mat3x3<f32>(v3, v3.zxy, vec3(1.0)); let m24 = mat2x4<f32>(v4, pv);
`

func (g *exprGen) leaf(t string) string {
	vars := map[string][]string{
		"f32": {"f", "s.a", "v3.y", "wa[li % 16u]", "sf[u % 4u]", "1.5", "-0.25", "2.0", "f32(arr[u % 4u])", "determinant(m3)", "m3[li % 3u].z", "(m24 * v2).w"},
		"i32": {"i", "arr[li % 4u]", "iv3.z", "3", "-7i", "i32(u)"}, "u32": {"u", "li", "s.n[li % 3u]", "uv2.y", "5u", "su[0]", "q", "qv", "un.z", "q", "qv"},
		"bool": {"b", "bv3.x", "true"}, "vec2<f32>": {"v2", "v3.xz", "vec2(1.0, 2.0)"}, "vec3<f32>": {"v3", "s.v", "v4.wzy", "vec3(0.5)", "(m3 * v3)", "(s.v * transpose(m3 * 2.0))", "(m3 + m3)[u % 3u]"},
		"vec4<f32>": {"v4", "pv", "vec4<f32>(v2, v3.xy)", "(m24 * (transpose(m24) * v4).xy)"}, "vec3<i32>": {"iv3", "vec3(1, 2, 3)"}, "vec2<u32>": {"uv2", "vec2(4u)"}, "vec3<u32>": {"vec3<u32>(iv3)", "vec3(u, 1u, li)"},
		"vec3<bool>": {"bv3", "v3 > vec3(0.0)"}, "f16": {"h", "hv4.w", "0.5h"}, "vec4<f16>": {"hv4", "vec4<f16>(v4)"},
	}
	l := vars[t]
	return l[g.rng.Intn(len(l))]
}

func scalarOfName(t string) string {
	if i := strings.Index(t, "<"); i >= 0 {
		return t[i+1 : len(t)-1]
	}
	return t
}

func (g *exprGen) expr(t string) string {
	if g.depth > 4 || g.rng.Intn(4) == 0 {
		return g.leaf(t)
	}
	g.depth++
	defer func() { g.depth-- }()
	s := scalarOfName(t)
	vec := strings.HasPrefix(t, "vec")
	switch g.rng.Intn(7) {
	case 0, 1: // arithmetic / logic
		switch s {
		case "bool":
			if vec {
				return fmt.Sprintf("(%s == %s)", g.expr(strings.Replace(t, "bool", "f32", 1)), g.expr(strings.Replace(t, "bool", "f32", 1)))
			}
			ops := []string{"&&", "||", "==", "!="}
			return fmt.Sprintf("(%s %s %s)", g.expr(t), ops[g.rng.Intn(len(ops))], g.expr(t))
		default:
			ops := []string{"+", "-", "*", "/", "%"}
			if s != "f32" && s != "f16" && g.rng.Intn(2) == 0 {
				ops = []string{"&", "|", "^", "<<", ">>"}
				op := ops[g.rng.Intn(len(ops))]
				if op == "<<" || op == ">>" {
					ut := "u32"
					if vec {
						ut = strings.Replace(t, s, "u32", 1)
					}
					return fmt.Sprintf("(%s %s %s)", g.expr(t), op, g.expr(ut))
				}
				return fmt.Sprintf("(%s %s %s)", g.expr(t), op, g.expr(t))
			}
			op := ops[g.rng.Intn(len(ops))]
			if vec && g.rng.Intn(2) == 0 {
				return fmt.Sprintf("(%s %s %s)", g.expr(t), op, g.expr(s))
			}
			return fmt.Sprintf("(%s %s %s)", g.expr(t), op, g.expr(t))
		}
	case 2: // conversion from another type of the same shape
		if vec {
			n := t[3:4]
			from := []string{"f32", "i32", "u32"}[g.rng.Intn(3)]
			src := "vec" + n + "<" + from + ">"
			if n == "2" && from != "u32" && from != "f32" || n == "3" && from == "u32" || n == "4" && from != "f32" {
				return g.leaf(t)
			}
			return fmt.Sprintf("%s(%s)", t, g.expr(src))
		}
		from := []string{"f32", "i32", "u32", "bool", "f16"}[g.rng.Intn(5)]
		return fmt.Sprintf("%s(%s)", t, g.expr(from))
	case 3: // builtins
		switch s {
		case "f32", "f16":
			fns := []string{"abs", "floor", "ceil", "exp", "sqrt", "tanh", "fract", "sign", "trunc"}
			if g.rng.Intn(2) == 0 {
				return fmt.Sprintf("%s(%s, %s)", []string{"max", "min", "pow", "step", "atan2"}[g.rng.Intn(5)], g.expr(t), g.expr(t))
			}
			return fmt.Sprintf("%s(%s)", fns[g.rng.Intn(len(fns))], g.expr(t))
		case "i32", "u32":
			if g.rng.Intn(2) == 0 {
				return fmt.Sprintf("clamp(%s, %s, %s)", g.expr(t), g.expr(t), g.expr(t))
			}
			return fmt.Sprintf("%s(%s)", []string{"abs", "countOneBits", "reverseBits"}[g.rng.Intn(3)], g.expr(t))
		case "bool":
			if !vec {
				return fmt.Sprintf("any(%s)", g.expr("vec3<bool>"))
			}
		}
		return fmt.Sprintf("select(%s, %s, %s)", g.expr(t), g.expr(t), g.expr("bool"))
	case 4: // swizzles and indexing
		if vec {
			n := int(t[3] - '0')
			src := strings.Replace(t, t[:4], "vec4", 1)
			if s == "bool" || s == "i32" || s == "u32" {
				src = strings.Replace(t, t[:4], "vec"+t[3:4], 1)
			}
			if s == "f16" {
				src = "vec4<f16>"
			}
			m := int(src[3] - '0')
			sw := ""
			for range n {
				sw += string("xyzw"[g.rng.Intn(m)])
			}
			return fmt.Sprintf("(%s).%s", g.expr(src), sw)
		}
		if s == "f32" {
			return fmt.Sprintf("(%s)[(%s) %% 3u]", g.expr("vec3<f32>"), g.expr("u32"))
		}
		if s == "f32" || s == "i32" || s == "u32" || s == "bool" {
			return g.leaf(t)
		}
	case 5: // constructors
		if vec {
			n := int(t[3] - '0')
			parts := make([]string, n)
			for i := range parts {
				parts[i] = g.expr(s)
			}
			return fmt.Sprintf("%s(%s)", t, strings.Join(parts, ", "))
		}
		if s == "f32" {
			return fmt.Sprintf("helper(%s, %s)", g.expr("f32"), g.expr("vec3<f32>"))
		}
	case 6:
		if s == "f32" && !vec {
			return fmt.Sprintf("dot(%s, %s)", g.expr("vec3<f32>"), g.expr("vec3<f32>"))
		}
		if t == "vec3<f32>" {
			return fmt.Sprintf("normalize(%s + vec3(1.0))", g.expr(t))
		}
	}
	return g.leaf(t)
}

// randomProgram is a valid module storing random expressions of every type.
func randomProgram(rng *rand.Rand, n int) string {
	return randomProgramKinds(rng, n, 11)
}

func randomProgramKinds(rng *rand.Rand, n, kinds int) string {
	g := &exprGen{rng: rng, cfKinds: kinds}
	var b strings.Builder
	b.WriteString(genPrelude)
	b.WriteString("\tvar acc = 0u;\n")
	g.stmts(&b, cfCtx{}, 2+rng.Intn(3))
	b.WriteString("\tsu[31] = acc;\n")
	for k := range n {
		t := genTypes[rng.Intn(len(genTypes))]
		e := g.expr(t)
		switch {
		case t == "bool" || strings.HasSuffix(t, "<bool>"):
			fmt.Fprintf(&b, "\tsu[%d] = select(0u, 1u, all(%s(%s)));\n", k, map[bool]string{true: "", false: "vec2"}[strings.HasPrefix(t, "vec")], e)
		case t == "f16":
			fmt.Fprintf(&b, "\tsf[%d] = f32(%s);\n", k, e)
		case strings.HasPrefix(t, "vec"):
			fmt.Fprintf(&b, "\tsf[%d] = f32((%s).x);\n", k, e)
		case t == "f32":
			fmt.Fprintf(&b, "\tsf[%d] = %s;\n", k, e)
		default:
			fmt.Fprintf(&b, "\tsu[%d] = u32(%s);\n", k, e)
		}
		if rng.Intn(4) == 0 {
			fmt.Fprintf(&b, "\tv2 += vec2(%s); s.n[%d] = u32(%s); v4.y = %s;\n", g.expr("f32"), k%3, g.expr("i32"), g.expr("f32"))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestRandomPrograms compiles generated programs; each must compile (or be
// rejected only for a const-evaluation reason such as overflow or division
// by zero in constant sub-expressions) and pass spirv-val.
func TestRandomPrograms(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	seed := int64(1)
	if s, err := strconv.ParseInt(os.Getenv("WGSL_RANDOM_SEED"), 10, 64); err == nil {
		seed, n = s, 400 // explore
	}
	rng := rand.New(rand.NewSource(seed))
	compiled := 0
	for i := range n {
		src := randomProgram(rng, 12)
		m, err := Compile(fmt.Sprintf("random%d.wgsl", i), src, Options{})
		if err != nil {
			list, ok := err.(ErrorList)
			if !ok {
				if ie, ok := err.(*InternalError); ok {
					t.Fatalf("program %d: %v\n%s\n%s", i, err, ie.Stack, src)
				}
				t.Fatalf("program %d: %v\n%s", i, err, src)
			}
			for _, e := range list {
				if !strings.Contains(e.Msg, "const-expression") && !strings.Contains(e.Msg, "division by zero") &&
					!strings.Contains(e.Msg, "cannot be represented") && !strings.Contains(e.Msg, "not finite") &&
					!strings.Contains(e.Msg, "shift amount") && !strings.Contains(e.Msg, "overflows") && !strings.Contains(e.Msg, "out of bounds") && !strings.Contains(e.Msg, "zero vector") && !strings.Contains(e.Msg, "shift by") && !strings.Contains(e.Msg, "low <= high") && !strings.Contains(e.Msg, "low != high") {
					t.Errorf("program %d: %s\n%s", i, list.Pretty(), src)
					break
				}
			}
			continue
		}
		compiled++
		spirvVal(t, fmt.Sprintf("random%d", i), m.SPIRV)
	}
	t.Logf("%d of %d random programs compiled and passed spirv-val", compiled, n)
	if compiled < n/2 {
		t.Errorf("only %d of %d random programs compiled", compiled, n)
	}
}

// cfCtx says which jumps are valid where a statement is generated.
type cfCtx struct {
	inLoop, inSwitch, inContinuing bool
	depth                          int
}

var cfVars = 0

// stmts writes random nested control flow over the variables of genPrelude
// (f, i, u, v2, v4, s, arr) and a counter acc.
func (g *exprGen) stmts(b *strings.Builder, ctx cfCtx, n int) {
	ind := strings.Repeat("\t", ctx.depth+1)
	for range n {
		switch k := g.rng.Intn(g.cfKinds); {
		case k < 3 || ctx.depth > 3:
			fmt.Fprintf(b, "%sacc += %s;\n", ind, g.expr("u32"))
		case k == 3:
			fmt.Fprintf(b, "%sif %s {\n", ind, g.expr("bool"))
			g.stmts(b, cfCtx{ctx.inLoop, ctx.inSwitch, ctx.inContinuing, ctx.depth + 1}, 1+g.rng.Intn(2))
			if g.rng.Intn(2) == 0 {
				fmt.Fprintf(b, "%s} else {\n", ind)
				g.stmts(b, cfCtx{ctx.inLoop, ctx.inSwitch, ctx.inContinuing, ctx.depth + 1}, 1+g.rng.Intn(2))
			}
			fmt.Fprintf(b, "%s}\n", ind)
		case k == 4 && !ctx.inContinuing:
			cfVars++
			fmt.Fprintf(b, "%sfor (var k%d = 0u; k%d < (%s) %% 5u; k%d++) {\n", ind, cfVars, cfVars, g.expr("u32"), cfVars)
			g.stmts(b, cfCtx{inLoop: true, depth: ctx.depth + 1}, 1+g.rng.Intn(3))
			fmt.Fprintf(b, "%s}\n", ind)
		case k == 5 && !ctx.inContinuing:
			cfVars++
			w := cfVars
			fmt.Fprintf(b, "%svar w%d = 0u;\n%sloop {\n", ind, w, ind)
			fmt.Fprintf(b, "%s\tif w%d > 3u { break; }\n", ind, w)
			g.stmts(b, cfCtx{inLoop: true, depth: ctx.depth + 1}, 1+g.rng.Intn(3))
			fmt.Fprintf(b, "%s\tcontinuing {\n%s\t\tw%d++;\n", ind, ind, w)
			if g.rng.Intn(2) == 0 {
				g.stmts(b, cfCtx{inContinuing: true, depth: ctx.depth + 2}, 1)
			}
			fmt.Fprintf(b, "%s\t\tbreak if w%d > 5u || %s;\n%s\t}\n%s}\n", ind, w, g.expr("bool"), ind, ind)
		case k == 6 && !ctx.inContinuing:
			fmt.Fprintf(b, "%swhile %s {\n", ind, g.expr("bool"))
			g.stmts(b, cfCtx{inLoop: true, depth: ctx.depth + 1}, 1+g.rng.Intn(2))
			fmt.Fprintf(b, "%s\tbreak;\n%s}\n", ind, ind)
		case k == 7:
			fmt.Fprintf(b, "%sswitch (%s) %% 4u {\n", ind, g.expr("u32"))
			fmt.Fprintf(b, "%s\tcase 0u, 2u: {\n", ind)
			g.stmts(b, cfCtx{ctx.inLoop, true, ctx.inContinuing, ctx.depth + 2}, 1+g.rng.Intn(2))
			fmt.Fprintf(b, "%s\t}\n%s\tcase 1u: { acc ^= 1u; }\n%s\tdefault: {\n", ind, ind, ind)
			g.stmts(b, cfCtx{ctx.inLoop, true, ctx.inContinuing, ctx.depth + 2}, 1)
			fmt.Fprintf(b, "%s\t}\n%s}\n", ind, ind)
		case k == 8 && (ctx.inLoop || ctx.inSwitch) && !ctx.inContinuing:
			fmt.Fprintf(b, "%sif %s { break; }\n", ind, g.expr("bool"))
		case k == 9 && ctx.inLoop && !ctx.inContinuing:
			fmt.Fprintf(b, "%sif %s { continue; }\n", ind, g.expr("bool"))
		case k == 10 && !ctx.inContinuing:
			fmt.Fprintf(b, "%sif %s { return; }\n", ind, g.expr("bool"))
		case k == 11:
			fmt.Fprintf(b, "%sworkgroupBarrier();\n", ind)
		case k == 12:
			fmt.Fprintf(b, "%sqv = %s;\n", ind, g.expr("u32"))
		case k == 13:
			fmt.Fprintf(b, "%s{ let p = &qv; *p = %s; }\n", ind, g.expr("u32"))
		case k == 14:
			fmt.Fprintf(b, "%ssetq(&qv, %s);\n", ind, g.expr("u32"))
		case k == 15:
			fmt.Fprintf(b, "%sqv = un.w;\n", ind)
		case k == 16:
			fmt.Fprintf(b, "%sif qv > 2u { workgroupBarrier(); }\n", ind)
		default:
			fmt.Fprintf(b, "%sv4.x = %s;\n", ind, g.expr("f32"))
		}
	}
}

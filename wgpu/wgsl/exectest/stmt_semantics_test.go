package exectest

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestStatementSemantics: the evaluation order and once-only evaluation the
// specification demands (compound assignment and increment evaluate their
// reference once, an assignment its left side before its right, operands
// and arguments left to right, && and || short-circuit), value semantics
// of struct and array copies, pointer arguments to elements, switch with
// default in the middle, continue reaching a for loop's update and a
// loop's continuing block, shadowing and wrapping increments. A trace
// records the order of side effects.
func TestStatementSemantics(t *testing.T) {
	src := `
var<private> trace: array<u32, 20>;
var<private> nt: u32;
fn rec(id: u32, v: u32) -> u32 { trace[nt] = id; nt++; return v; }
fn reci(id: u32, v: i32) -> i32 { trace[nt] = id; nt++; return v; }
fn two(a: u32, b: u32) -> u32 { return a * 10u + b; }
struct S { a: array<vec2<i32>, 3>, m: i32 }
fn inc(p: ptr<function, i32>) { *p += 1; }
fn incv(p: ptr<function, vec2<i32>>) { (*p).y += 100; (*p)[0] -= 1; }
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@group(0) @binding(1) var<storage, read_write> seq: array<u32>;
@compute @workgroup_size(1)
fn main() {
	var k = 0u;
	// 0: compound assignment evaluates the reference once
	var a = array<i32, 4>(10, 20, 30, 40);
	a[rec(1u, 2u)] += 5;
	a[rec(2u, 1u)]++;
	a[rec(3u, 3u)] *= reci(4u, 2);
	o[k] = u32(a[0] + a[1] * 100 + a[2] * 10000) ; k++;  // 10 + 21*100 + 35*10000
	o[k] = u32(a[3]); k++; // 80
	// simple assignment: lhs then rhs
	a[rec(5u, 0u)] = reci(6u, 7);
	o[k] = u32(a[0]); k++;
	// call arguments left to right, binary operands left to right
	o[k] = two(rec(7u, 1u), rec(8u, 2u)); k++;
	o[k] = rec(9u, 50u) - rec(10u, 8u); k++;
	// short circuit
	var z = 0u;
	if (z == 1u && rec(99u, 1u) == 1u) { z = 5u; }
	if (z == 0u || rec(98u, 1u) == 1u) { z += 1u; }
	let sc = (z == 7u) && (rec(97u, 0u) == 0u);
	o[k] = z + u32(sc) * 100u; k++;
	// struct with nested vector in array: compound through swizzle/index
	var s: S;
	s.a[rec(11u, 1u)].y -= 3;
	s.a[1][rec(12u, 0u)] += 9;
	s.m = 4;
	var s2 = s; s2.a[1].x = 1000; s2.m = 0;
	o[k] = bitcast<u32>(s.a[1].x * 100 + s.a[1].y) ; k++; // 900 - 3 = 897
	o[k] = u32(s.m + s2.a[1].x); k++; // 1004
	// array copy semantics
	var b = a; b[0] = -1;
	let c = b; b[1] = -2;
	o[k] = u32(a[0] + c[1] * 1000) ; k++; // 7 + 21000
	// pointer params on elements
	inc(&a[2]); inc(&b[rec(13u, 3u)]);
	incv(&s.a[2]);
	o[k] = u32(a[2]) + u32(b[3]) * 1000u + u32(s.a[2].y + s.a[2].x) * 1000000u; k++; // 36 + 81000 + 99e6
	// switch with default in the middle
	var sw = 0u;
	for (var x = 0u; x < 5u; x++) {
		switch x {
			case 1u: { sw += 1u; }
			default: { sw += 100u; }
			case 2u, 3u: { sw += 10u; }
		}
	}
	o[k] = sw; k++; // 1 + 10 + 10 + 200 = 221
	// for with continue still runs the update
	var fs = 0;
	for (var i = 0; i < 10; i++) { if i % 2 == 0 { continue; } fs += i; }
	o[k] = u32(fs); k++; // 25
	// loop with continuing, continue, break if
	var li = 0; var ls = 0;
	loop {
		li++;
		if li == 3 { continue; }
		ls += li;
		continuing { break if li >= 6; }
	}
	o[k] = u32(ls * 10 + li); k++; // (1+2+4+5+6)=18 -> 186
	// let shadowing
	let sh = 1u;
	{ let sh = 2u; o[k] = sh; k++; }
	o[k] = sh; k++;
	// increments wrap
	var w = 2147483647; w++;
	var wu = 0u; wu--;
	o[k] = bitcast<u32>(w); k++;
	o[k] = wu; k++;
	// while with complex condition and break
	var wi = 0u;
	while wi < 100u && rec(14u, wi) != 2u { wi++; }
	o[k] = wi; k++;
	// vector dynamic component compound with side effects
	var v = vec4<i32>(1, 2, 3, 4);
	v[rec(15u, 2u)] <<= 2u;
	o[k] = u32(v.z); k++; // 12
	for (var q = 0u; q < nt; q++) { seq[q] = trace[q]; }
	seq[nt] = nt;
}`
	d := newDevice(t)
	out := d.run(t, src, nil, nil, one, make([]byte, 4*24), make([]byte, 4*20))
	o, seq := getU32(out[0]), getU32(out[1])
	want := []uint32{352110, 80, 7, 12, 42, 1, 897, 1004, 21007, 99081036, 221, 25, 186, 2, 1, 0x80000000, 0xffffffff, 2, 12}
	if !slices.Equal(o[:len(want)], want) {
		t.Errorf("results %v,\nwant    %v", o[:len(want)], want)
	}
	// 1..13: the calls in program order, once each; 14 three times (the
	// while condition until it fails); 15 once; none of the short-circuited 97..99.
	wantSeq := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 14, 14, 15, 17}
	if !slices.Equal(seq[:len(wantSeq)], wantSeq) {
		t.Errorf("side effects in the order %v,\nwant                     %v", seq[:len(wantSeq)], wantSeq)
	}
}

// An inode is a node of a random i32 expression: an operator over kids, or
// a leaf (v >= 0: input $v; v < 0: the constant c).
type inode struct {
	op   string
	kids []*inode
	v    int // var index for leaves; -1 const
	c    int32
}

// genI draws an expression of depth at most d.
func genI(r *rand.Rand, d int) *inode {
	if d == 0 || r.Intn(4) == 0 {
		if r.Intn(3) == 0 {
			cs := []int32{0, 1, -1, 2, 31, 32, math.MinInt32, math.MaxInt32, 7}
			return &inode{v: -1, c: cs[r.Intn(len(cs))]}
		}
		return &inode{v: r.Intn(3)}
	}
	bin := []string{"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "min", "max", "sel"}
	un := []string{"neg", "not", "abs", "cob", "rev", "flb", "ftb", "clz", "ctz", "u/", "u%", "u>>", "umin"}
	if r.Intn(3) == 0 {
		op := un[r.Intn(len(un))]
		if strings.HasPrefix(op, "u") && op != "umin" {
			return &inode{op: op, kids: []*inode{genI(r, d-1), genI(r, d-1)}}
		}
		if op == "umin" {
			return &inode{op: op, kids: []*inode{genI(r, d-1), genI(r, d-1)}}
		}
		return &inode{op: op, kids: []*inode{genI(r, d-1)}}
	}
	return &inode{op: bin[r.Intn(len(bin))], kids: []*inode{genI(r, d-1), genI(r, d-1)}}
}

// wgsl spells n as a template over $0..$3 ($3 is a run-time zero).
func (n *inode) wgsl() string {
	if n.op == "" {
		if n.v >= 0 {
			return fmt.Sprintf("$%d", n.v)
		}
		return fmt.Sprintf("(i32(%du) ^ $3)", uint32(n.c))
	}
	k := func(i int) string { return n.kids[i].wgsl() }
	switch n.op {
	case "neg":
		return "(-" + k(0) + ")"
	case "not":
		return "(~" + k(0) + ")"
	case "abs":
		return "abs(" + k(0) + ")"
	case "cob":
		return "countOneBits(" + k(0) + ")"
	case "rev":
		return "reverseBits(" + k(0) + ")"
	case "flb":
		return "firstLeadingBit(" + k(0) + ")"
	case "ftb":
		return "firstTrailingBit(" + k(0) + ")"
	case "clz":
		return "countLeadingZeros(" + k(0) + ")"
	case "ctz":
		return "countTrailingZeros(" + k(0) + ")"
	case "u/":
		return "bitcast<i32>(bitcast<u32>(" + k(0) + ") / bitcast<u32>(" + k(1) + "))"
	case "u%":
		return "bitcast<i32>(bitcast<u32>(" + k(0) + ") % bitcast<u32>(" + k(1) + "))"
	case "u>>":
		return "bitcast<i32>(bitcast<u32>(" + k(0) + ") >> bitcast<u32>(" + k(1) + "))"
	case "umin":
		return "bitcast<i32>(min(bitcast<u32>(" + k(0) + "), bitcast<u32>(" + k(1) + ")))"
	case "min", "max":
		return n.op + "(" + k(0) + ", " + k(1) + ")"
	case "sel":
		return "select(" + k(0) + ", " + k(1) + ", " + k(0) + " < " + k(1) + ")"
	case "<<", ">>":
		return "(" + k(0) + " " + n.op + " bitcast<u32>(" + k(1) + "))"
	}
	return "(" + k(0) + " " + n.op + " " + k(1) + ")"
}

// eval is n on inputs x by the specification's integer rules.
func (n *inode) eval(x []int32) int32 {
	if n.op == "" {
		if n.v >= 0 {
			return x[n.v]
		}
		return n.c
	}
	a := n.kids[0].eval(x)
	var b int32
	if len(n.kids) > 1 {
		b = n.kids[1].eval(x)
	}
	ua, ub := uint32(a), uint32(b)
	switch n.op {
	case "neg":
		return -a
	case "not":
		return ^a
	case "abs":
		if a < 0 {
			return -a
		}
		return a
	case "cob":
		return int32(bits.OnesCount32(ua))
	case "rev":
		return int32(bits.Reverse32(ua))
	case "flb":
		return int32(goFirstLeadingBit(ua, true))
	case "ftb":
		return int32(goFirstTrailingBit(ua))
	case "clz":
		return int32(bits.LeadingZeros32(ua))
	case "ctz":
		return int32(bits.TrailingZeros32(ua))
	case "u/":
		if ub == 0 {
			return a
		}
		return int32(ua / ub)
	case "u%":
		if ub == 0 {
			return 0
		}
		return int32(ua % ub)
	case "u>>":
		return int32(ua >> (ub & 31))
	case "umin":
		return int32(min(ua, ub))
	case "min":
		return min(a, b)
	case "max":
		return max(a, b)
	case "sel":
		if a < b {
			return b
		}
		return a
	case "<<":
		return a << (ub & 31)
	case ">>":
		return a >> (ub & 31)
	case "+":
		return a + b
	case "-":
		return a - b
	case "*":
		return a * b
	case "/":
		if b == 0 || a == math.MinInt32 && b == -1 {
			return a
		}
		return a / b
	case "%":
		if b == 0 || a == math.MinInt32 && b == -1 {
			return 0
		}
		return a % b
	case "&":
		return a & b
	case "|":
		return a | b
	case "^":
		return a ^ b
	}
	panic(n.op)
}

// TestRandomIntegerExpressions: random i32 expression trees over three
// run-time inputs (every integer operator and bit builtin, u32 forms through
// bitcasts, edge inputs), against a Go evaluation with the specification's
// rules: wrapping arithmetic, x / 0 == x and x % 0 == 0 (also for
// i32 MIN / -1), shift amounts taken modulo 32. Constant leaves are
// xor-ed with a run-time zero, so nothing folds into a shader-creation error.
func TestRandomIntegerExpressions(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var cs []ecase
	for range 120 {
		n := genI(r, 4)
		for range 10 {
			x := make([]int32, 3)
			for j := range x {
				switch r.Intn(4) {
				case 0:
					x[j] = []int32{0, 1, -1, math.MinInt32, math.MaxInt32, 31, 32, 33}[r.Intn(8)]
				default:
					x[j] = int32(r.Uint32()) >> uint(r.Intn(32))
				}
			}
			cs = append(cs, ecase{n.wgsl(), []barg{i(x[0]), i(x[1]), i(x[2]), i(0)}, comps(1), []uint32{uint32(n.eval(x))}, true})
		}
	}
	runExprs(t, "", cs)
}

package wgsl

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// clampsOf describes each UMin index clamp of a module as "index <= bound":
// the index is its constant value, or "?" when it is computed; the bound is
// "len(o.M)-1" for OpArrayLength(o, M) - 1, with o the buffer variable's
// name, "spec-1" for a specialization constant minus one, or the constant.
func clampsOf(words []uint32) []string {
	type inst struct {
		op  spirv.Op
		ops []uint32 // the operands after the result id
	}
	defs := map[uint32]inst{}
	names := map[uint32]string{}
	var umins [][2]uint32
	for i := 5; i < len(words); {
		op, size := spirv.Op(words[i]&0xffff), int(words[i]>>16)
		if size == 0 || i+size > len(words) {
			break
		}
		w := words[i : i+size]
		switch {
		case op == spirv.OpName:
			names[w[1]] = decodeString(w[2:])
		case op == spirv.OpExtInst && size >= 7 && w[4] == spirv.GLSLUMin:
			umins = append(umins, [2]uint32{w[5], w[6]})
		case op == spirv.OpConstant || op == spirv.OpSpecConstant || op == spirv.OpSpecConstantOp ||
			op == spirv.OpISub || op == spirv.OpArrayLength:
			defs[w[2]] = inst{op, w[3:]}
		}
		i += size
	}
	describe := func(id uint32) string {
		d := defs[id]
		switch {
		case d.op == spirv.OpConstant:
			return fmt.Sprint(d.ops[0])
		case d.op == spirv.OpISub && defs[d.ops[1]].op == spirv.OpConstant && defs[d.ops[1]].ops[0] == 1:
			a := defs[d.ops[0]]
			switch a.op {
			case spirv.OpArrayLength:
				return fmt.Sprintf("len(%s.%d)-1", names[a.ops[0]], a.ops[1])
			case spirv.OpSpecConstant, spirv.OpSpecConstantOp:
				return "spec-1"
			}
		}
		return "?"
	}
	var out []string
	for _, u := range umins {
		out = append(out, describe(u[0])+" <= "+describe(u[1]))
	}
	slices.Sort(out)
	return out
}

// fixedClamps counts the UMins of a module other than the clamps against a
// buffer's length: the clamps of indices into fixed-size arrays, vectors and
// matrices, and the min() calls the program makes.
func fixedClamps(words []uint32) int {
	n := 0
	for _, c := range clampsOf(words) {
		if !strings.Contains(c, "len(") {
			n++
		}
	}
	return n
}

// decodeString is the string a SPIR-V literal string's words hold.
func decodeString(words []uint32) string {
	var b []byte
	for _, w := range words {
		for k := 0; k < 4; k++ {
			if c := byte(w >> (8 * k)); c != 0 {
				b = append(b, c)
			} else {
				return string(b)
			}
		}
	}
	return string(b)
}

// TestConstIndexRuntimeArray: a constant index into a runtime-sized array is
// clamped to the array's last element exactly as a run-time index is (the
// buffer may hold fewer elements than the constant, and our Vulkan device
// does not enable robustBufferAccess), in loads and stores, directly and
// through a struct's last member, a pointer let or a pointer parameter, into
// arrays of scalars, vectors and structs. Index 0 needs no clamp: NRuntime
// is at least 1 (and min(0, n) is 0 whatever n is). Constant indices into
// vectors, matrices and fixed-size arrays stay unclamped: the checker
// rejects those out of range.
func TestConstIndexRuntimeArray(t *testing.T) {
	const pre = `
struct P { a: vec2<f32>, b: array<f32, 4> }
struct Tail { n: u32, data: array<f32> }
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> s: Tail;
@group(0) @binding(3) var<storage, read_write> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> ps: array<P>;
fn put(p: ptr<storage, array<f32>, read_write>, k: f32) { (*p)[7] = k; p[0] = k; }
`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"store", `o[1000000] = 1.0;`, []string{"1000000 <= len(o.0)-1"}},
		{"load", `o[0] = x[7];`, []string{"7 <= len(x.0)-1"}},
		{"index 0", `o[0] = x[0];`, nil},
		{"i32 index", `o[3i] = x[2i];`, []string{"2 <= len(x.0)-1", "3 <= len(o.0)-1"}},
		{"const-expression index", `const K = 12u; o[K * 2u] = 1.0;`, []string{"24 <= len(o.0)-1"}},
		{"struct's last member", `s.data[5] = s.data[9];`, []string{"5 <= len(s.1)-1", "9 <= len(s.1)-1"}},
		{"compound assignment", `s.data[3] += 1.0;`, []string{"3 <= len(s.1)-1"}},
		{"vectors", `v[3] = v[4] * 2.0;`, []string{"3 <= len(v.0)-1", "4 <= len(v.0)-1"}},
		{"vector component", `v[2].y = v[6][3]; v[0][1] = 1.0;`, []string{"2 <= len(v.0)-1", "6 <= len(v.0)-1"}},
		{"structs", `ps[5].b[3] = ps[2].a[1];`, []string{"2 <= len(ps.0)-1", "5 <= len(ps.0)-1"}},
		{"pointer let", `let p = &s.data; p[6] = (*p)[0];`, []string{"6 <= len(s.1)-1"}},
		{"pointer parameter", `put(&o, 1.0); put(&s.data, 2.0);`, []string{"7 <= len(o.0)-1", "7 <= len(s.1)-1"}},
		{"run-time index, for comparison", `o[u32(x[0])] = 1.0;`, []string{"? <= len(o.0)-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := pre + "@compute @workgroup_size(1)\nfn main() {\n\t" + c.body + "\n}\n"
			m := compileOK(t, "constindex.wgsl", src)
			if got := clampsOf(m.SPIRV); !slices.Equal(got, c.want) {
				t.Errorf("whole module: clamps %q, want %q", got, c.want)
			}
			sp, err := m.Specialize("main", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := clampsOf(sp.SPIRV); !slices.Equal(got, c.want) {
				t.Errorf("specialized: clamps %q, want %q", got, c.want)
			}
			spirvVal(t, c.name, sp.SPIRV)
			free, err := Compile("constindex.wgsl", src, Options{NoIndexClamp: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := countUMin(free.SPIRV); n != 0 {
				t.Errorf("NoIndexClamp: %d clamps, want none", n)
			}
		})
	}
}

// TestConstIndexOverrides: an override used as an index is a constant once
// specialized, and is clamped into a runtime-sized array there too. A
// constant index into an array whose count is an override is clamped in the
// whole module (whose overrides a Vulkan pipeline may still set) and is
// checked when specialized: in range it needs no clamp, out of range it is a
// pipeline-creation error.
func TestConstIndexOverrides(t *testing.T) {
	const src = `
override N: u32 = 64;
override K: u32 = 3;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, N>;
@compute @workgroup_size(1)
fn main() {
	w[5] = 1.0;
	w[0] = 2.0;
	o[K] = w[5] + w[0];
}`
	m := compileOK(t, "overrides.wgsl", src)
	// The whole module: w[5] twice against N - 1, o[K] against o's length.
	if got, want := clampsOf(m.SPIRV), []string{"5 <= spec-1", "5 <= spec-1", "? <= len(o.0)-1"}; !slices.Equal(got, want) {
		t.Errorf("whole module: clamps %q, want %q", got, want)
	}
	sp, err := m.Specialize("main", map[string]float64{"N": 6, "K": 1000000})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := clampsOf(sp.SPIRV), []string{"1000000 <= len(o.0)-1"}; !slices.Equal(got, want) {
		t.Errorf("N=6, K=1000000: clamps %q, want %q", got, want)
	}
	spirvVal(t, "specialized", sp.SPIRV)
	_, err = m.Specialize("main", map[string]float64{"N": 5})
	if err == nil || !strings.Contains(err.Error(), "8:4: error: index 5 is out of bounds for 'array<f32, 5>'") {
		t.Errorf("N=5: got %v, want index 5 out of bounds at 8:4", err)
	}
}

// Constant indices out of range are shader-creation errors wherever the
// count is known to the checker (WGSL's vector, matrix and array access
// expressions), and a negative one is an error into a runtime-sized array.
var constIndexInvalid = []struct{ name, src, want string }{
	{"const_index_oob_vector", body("var v: vec4<f32>; v[4] = 1.0;"), "2:21: index 4 is out of bounds for 'vec4<f32>'"},
	{"const_index_oob_vector_value", body("let v = vec2(1.0); _ = v[2u];"), "2:26: index 2 is out of bounds for 'vec2<f32>'"},
	{"const_index_oob_matrix", body("var m: mat2x2<f32>; m[2][0] = 1.0;"), "2:23: index 2 is out of bounds for 'mat2x2<f32>'"},
	{"const_index_oob_storage_member", "struct S { a: array<f32, 8>, b: array<f32> }\n@group(0) @binding(0) var<storage, read_write> s: S;\n@compute @workgroup_size(1) fn main() { s.a[8] = 1.0; }",
		"3:45: index 8 is out of bounds for 'array<f32, 8>'"},
	{"const_index_oob_workgroup_expr", "const K = 4;\nvar<workgroup> w: array<u32, K>;\n@compute @workgroup_size(1) fn main() { w[K] = 1u; }",
		"3:43: index 4 is out of bounds for 'array<u32, 4>'"},
	{"const_index_negative_runtime", "@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n@compute @workgroup_size(1) fn main() { o[-1] = 1.0; }",
		"2:43: index -1 is out of bounds for 'array<f32>'"},
	{"const_index_negative_i32", body("var a: array<f32, 4>; a[-1i] = 1.0;"), "2:25: index -1 is out of bounds"},
}

func init() { invalidPrograms = append(invalidPrograms, constIndexInvalid...) }

// TestDynamicIndexVectorMatrix: a run-time index into a vector or a matrix is
// clamped to its last component or column (N known statically), whether the
// vector or matrix is a value (OpVectorExtractDynamic, or a matrix copied to
// function memory) or in memory (OpAccessChain), with u32 and i32 indices;
// out of range, OpVectorExtractDynamic is undefined behaviour in SPIR-V
// where WGSL allows only an indeterminate value. An index the range
// analysis proves in bounds keeps no clamp.
func TestDynamicIndexVectorMatrix(t *testing.T) {
	const pre = `
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@group(0) @binding(1) var<storage, read_write> s: array<vec4<f32>>;
var<private> pv: vec2<f32>;
fn two() -> vec2<f32> { return vec2(1.0, 2.0); }
fn pick3(p: ptr<function, vec3<f32>>, j: u32) -> f32 { return (*p)[j]; }
`
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"vector value, u32", `let v = vec4(1.0, 2.0, 3.0, 4.0); o[0] = v[j];`, []string{"? <= 3"}},
		{"vector value, i32", `let v = vec4(1.0, 2.0, 3.0, 4.0); o[0] = v[i];`, []string{"? <= 3"}},
		{"vector call result", `o[0] = two()[j];`, []string{"? <= 1"}},
		{"vector expression", `o[0] = (vec3(1.0) * o[0])[j];`, []string{"? <= 2"}},
		{"vector value of bools", `let b = vec2(true, false); if b[j] { o[0] = 1.0; }`, []string{"? <= 1"}},
		{"matrix value column and component", `let m = mat3x2(1.0, 2.0, 3.0, 4.0, 5.0, 6.0); o[0] = m[j][i];`, []string{"? <= 1", "? <= 2"}},
		{"vector in function memory", `var w = vec3(1.0); w[j] = 2.0; o[0] = w[i];`, []string{"? <= 2", "? <= 2"}},
		{"vector through a pointer parameter", `var w = vec3(1.0); o[0] = pick3(&w, j);`, []string{"? <= 2"}},
		{"vector in private memory", `pv[j] += 1.0;`, []string{"? <= 1"}},
		{"vector in storage", `s[0][j] = s[0][i];`, []string{"? <= 3", "? <= 3"}},
		{"matrix in function memory", `var m = mat2x4<f32>(); m[j][i] = 1.0; o[0] = m[i][j];`, []string{"? <= 1", "? <= 1", "? <= 3", "? <= 3"}},
		{"proved in range", `let v = vec4(1.0); o[0] = v[j % 4u] + v[li];`, nil},
		{"not proved", `let v = vec4(1.0); o[0] = v[j % 5u];`, []string{"? <= 3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := pre + "@compute @workgroup_size(4)\nfn main(@builtin(local_invocation_index) li: u32) {\n" +
				"\tlet j = u32(o[1]);\n\tlet i = i32(o[2]);\n\t" + c.body + "\n}\n"
			m := compileOK(t, "dynindex.wgsl", src)
			want := append([]string{"1 <= len(o.0)-1", "2 <= len(o.0)-1"}, c.want...) // j's and i's loads
			slices.Sort(want)
			if got := clampsOf(m.SPIRV); !slices.Equal(got, want) {
				t.Errorf("clamps %q, want %q", got, want)
			}
			spirvVal(t, c.name, m.SPIRV)
			sp, err := m.Specialize("main", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := clampsOf(sp.SPIRV); !slices.Equal(got, want) {
				t.Errorf("specialized: clamps %q, want %q", got, want)
			}
			spirvVal(t, c.name, sp.SPIRV)
		})
	}
}

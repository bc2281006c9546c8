package wgsl

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// spirvValNew validates words with the newer spirv-val of
// $WGPU_TEST_SPIRV_VAL_NEW (Debian 13's, which knows
// SPV_KHR_cooperative_matrix), for Vulkan 1.1 (the SPIR-V 1.3 the compiler
// emits).
func spirvValNew(t *testing.T, val, name string, words []uint32) {
	t.Helper()
	buf := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	file := filepath.Join(t.TempDir(), "m.spv")
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(val, "--target-env", "vulkan1.1", file).CombinedOutput(); err != nil {
		t.Errorf("%s: %s: %v\n%s", name, val, err, out)
	}
}

// TestSubgroupMatrixNative emits every valid subgroup matrix program as
// SPV_KHR_cooperative_matrix and validates it with Debian 13's spirv-val
// (no Vulkan implementation here runs it), and checks the instructions that
// carry the matrix semantics.
func TestSubgroupMatrixNative(t *testing.T) {
	val := prereq.SpirvValNew(t)
	for _, p := range sgmValid {
		t.Run(p.name, func(t *testing.T) {
			m, err := Compile(p.name+".wgsl", p.src, Options{CooperativeMatrix: true})
			if err != nil {
				t.Fatal(err)
			}
			spirvValNew(t, val, p.name, m.SPIRV)
		})
	}
}

// Opcodes and enumerants the native read-backs below use, from the SPIR-V
// 1.6 and SPV_KHR_cooperative_matrix specifications (not the compiler's own
// tables, which these tests check).
const (
	rbExtension   = 10
	rbExtInst     = 12
	rbCapability  = 17
	rbTypeInt     = 21
	rbTypeFloat   = 22
	rbConstant    = 43
	rbAccessChain = 65
	rbComposite   = 80
	rbUConvert    = 113
	rbSConvert    = 114
	rbIAdd        = 128
	rbFSub        = 131
	rbFMul        = 133
	rbSelect      = 169
	rbULE         = 178
	rbTypeCoop    = 4456
	rbCoopLoad    = 4457
	rbCoopStore   = 4458
	rbCoopMulAdd  = 4459
	rbCapInt8     = 39
	rbCapCoop     = 6022
	rbGLSLUMin    = 38
	rbGLSLUClamp  = 44
	rbGLSLSClamp  = 45
)

// readBack is what the native read-backs keep of a module: its u32
// constants, the names of its scalar types ("f32", "u8") and of its
// cooperative matrix types ("f32 scope=3 rows=4 cols=8 use=0": subgroup
// scope 3; uses A, B, Accumulator 0, 1, 2), its capabilities and
// extensions, and, for the results of the instructions defs lists, the
// opcode and the operands after the result id.
type readBack struct {
	consts map[uint32]uint32
	scalar map[uint32]string
	coop   map[uint32]string
	caps   map[uint32]bool
	spvExt bool // an OpExtension whose name starts "SPV_"
	defs   map[uint32][]uint32
}

// readNative walks words (a module), recording what readBack keeps, and
// calls each with every instruction's opcode and operands (after the word
// count), once the instruction is recorded.
func readNative(words []uint32, defs []uint32, each func(rb *readBack, op uint32, in []uint32)) *readBack {
	rb := &readBack{consts: map[uint32]uint32{}, scalar: map[uint32]string{}, coop: map[uint32]string{},
		caps: map[uint32]bool{}, defs: map[uint32][]uint32{}}
	w := words[5:]
	for len(w) > 0 {
		n, op := w[0]>>16, w[0]&0xffff
		in := w[1:n]
		switch op {
		case rbCapability:
			rb.caps[in[0]] = true
		case rbExtension:
			rb.spvExt = rb.spvExt || len(in) > 0 && in[0] == 0x5f565053 // "SPV_"
		case rbConstant:
			rb.consts[in[1]] = in[2]
		case rbTypeFloat:
			rb.scalar[in[0]] = fmt.Sprintf("f%d", in[1])
		case rbTypeInt:
			rb.scalar[in[0]] = fmt.Sprintf("%s%d", map[uint32]string{0: "u", 1: "i"}[in[2]], in[1])
		case rbTypeCoop:
			rb.coop[in[0]] = fmt.Sprintf("%s scope=%d rows=%d cols=%d use=%d", rb.scalar[in[1]], rb.consts[in[2]], rb.consts[in[3]], rb.consts[in[4]], rb.consts[in[5]])
		}
		if slices.Contains(defs, op) {
			rb.defs[in[1]] = append([]uint32{op}, in[2:]...)
		}
		each(rb, op, in)
		w = w[n:]
	}
	return rb
}

// describe names how value id came to be: a constant, a select against a
// constant limit (of an OpSelect whose condition is an OpULessThanEqual),
// a clamp (GLSL UMin), or something else ("value"); its defining
// instructions must be among readNative's defs.
func (rb *readBack) describe(id uint32) string {
	if v, ok := rb.consts[id]; ok {
		return fmt.Sprint(v)
	}
	d := rb.defs[id]
	switch {
	case d == nil:
		return "value"
	case d[0] == rbSelect:
		if cond := rb.defs[d[1]]; cond != nil && cond[0] == rbULE {
			if lim, ok := rb.consts[cond[2]]; ok {
				return fmt.Sprintf("select(<=%d)", lim)
			}
		}
		return "select"
	case d[0] == rbExtInst && d[2] == rbGLSLUMin:
		return "umin"
	}
	return "value"
}

// offset describes the last index of access chain p (describe's terms).
func (rb *readBack) offset(t *testing.T, p uint32) string {
	t.Helper()
	ac := rb.defs[p]
	if ac == nil || ac[0] != rbAccessChain {
		t.Fatalf("pointer %%%d is not an access chain", p)
	}
	return rb.describe(ac[len(ac)-1])
}

// checkLines fails t where got is not want, line for line.
func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

// TestSubgroupMatrixNativeInstructions reads the cooperative matrix
// instructions back from the words: types (component, scope, rows, columns,
// use), load and store layouts and strides, and the signedness operands of
// the integer multiply, against what the WGSL says.
func TestSubgroupMatrixNativeInstructions(t *testing.T) {
	src := sgm("@group(0) @binding(3) var<storage, read> ia: array<i32>;", `
let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 4>>(&a, 0u, false, 10u);
let r = subgroupMatrixLoad<subgroup_matrix_right<f32, 16, 8>>(&a, 32u, true, 9u);
subgroupMatrixStore(&o, 0u, subgroupMatrixMultiply<f32>(l, r), true, 4u);
let il = subgroupMatrixLoad<subgroup_matrix_left<i32, 8, 8>>(&ia, 0u, false, 8u);
let ir = subgroupMatrixLoad<subgroup_matrix_right<i32, 8, 8>>(&ia, 64u, false, 8u);
subgroupMatrixStore(&ou, 0u, subgroupMatrixMultiply<u32>(il, ir), false, 8u);`)
	m, err := Compile("native.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	var types, loads, stores, muls []string
	rb := readNative(m.SPIRV, nil, func(rb *readBack, op uint32, in []uint32) {
		switch op {
		case rbTypeCoop:
			types = append(types, rb.coop[in[0]])
		case rbCoopLoad:
			loads = append(loads, fmt.Sprintf("%s layout=%d stride=%d", rb.coop[in[0]], rb.consts[in[3]], rb.consts[in[4]]))
		case rbCoopStore:
			stores = append(stores, fmt.Sprintf("layout=%d stride=%d", rb.consts[in[2]], rb.consts[in[3]]))
		case rbCoopMulAdd:
			mask := "none"
			if len(in) > 5 {
				mask = fmt.Sprintf("%#x", in[5])
			}
			muls = append(muls, rb.coop[in[0]]+" operands="+mask)
		}
	})
	if !rb.caps[rbCapCoop] || !rb.spvExt {
		t.Errorf("capability CooperativeMatrixKHR %v, extension SPV_KHR_cooperative_matrix %v", rb.caps[rbCapCoop], rb.spvExt)
	}
	// Layouts RowMajorKHR 0, ColumnMajorKHR 1 (SPIR-V 1.6 rev 4 grammar).
	checkLines(t, "types", types, []string{
		"f32 scope=3 rows=4 cols=8 use=0", "f32 scope=3 rows=8 cols=16 use=1", "f32 scope=3 rows=4 cols=16 use=2",
		"i32 scope=3 rows=8 cols=8 use=0", "i32 scope=3 rows=8 cols=8 use=1", "u32 scope=3 rows=8 cols=8 use=2",
	})
	checkLines(t, "loads", loads, []string{
		"f32 scope=3 rows=4 cols=8 use=0 layout=0 stride=10", "f32 scope=3 rows=8 cols=16 use=1 layout=1 stride=9",
		"i32 scope=3 rows=8 cols=8 use=0 layout=0 stride=8", "i32 scope=3 rows=8 cols=8 use=1 layout=0 stride=8",
	})
	checkLines(t, "stores", stores, []string{"layout=1 stride=4", "layout=0 stride=8"})
	// Signed A and B (i32), unsigned C and result (u32).
	checkLines(t, "multiplies", muls, []string{"f32 scope=3 rows=4 cols=16 use=2 operands=none", "u32 scope=3 rows=8 cols=8 use=2 operands=0x3"})
	if val := os.Getenv(prereq.SpirvValNewEnv); val != "" {
		spirvValNew(t, val, "native.wgsl", m.SPIRV)
	}
}

// TestSubgroupMatrixNativeBounds reads back how each native load and store
// is kept in bounds (emit_matrix.go's coopBounds): in the fixed-length
// workgroup array w (256 f32), a whole 8x8 matrix with a known stride 8
// spans 64 elements, so an unknown offset is selected against 192 (an
// in-bounds offset passes unchanged), a constant or range-proved one is left
// alone, a run-time stride selects offset and stride, and in the
// runtime-sized array a the first element's index is clamped.
func TestSubgroupMatrixNativeBounds(t *testing.T) {
	src := sgm("", `
let s = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&w, wid.x, false, 8u);
subgroupMatrixStore(&w, 192u, s, true, 8u);
subgroupMatrixStore(&w, wid.x % 16u * 8u, s, false, 8u);
let d = subgroupMatrixLoad<subgroup_matrix_right<f32, 8, 8>>(&w, 5u, true, wid.y);
subgroupMatrixStore(&o, wid.x, d, false, 8u);
let c = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>>(&w, wid.x, true, 24u);
subgroupMatrixStore(&o, 0u, c, false, 8u);`)
	m, err := Compile("bounds.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	var accesses [][2]uint32 // pointer, stride of each load and store
	rb := readNative(m.SPIRV, []uint32{rbExtInst, rbAccessChain, rbSelect, rbULE}, func(_ *readBack, op uint32, in []uint32) {
		switch op {
		case rbCoopLoad:
			accesses = append(accesses, [2]uint32{in[2], in[4]})
		case rbCoopStore:
			accesses = append(accesses, [2]uint32{in[0], in[3]})
		}
	})
	var got []string
	for _, a := range accesses {
		got = append(got, rb.offset(t, a[0])+" stride "+rb.describe(a[1]))
	}
	checkLines(t, "bounds", got, []string{
		"select(<=192) stride 8", // unknown offset, whole matrix from it within 256
		"192 stride 8",           // 192 + 64 = 256: in bounds
		"value stride 8",         // at most 120: proved
		"select stride select",   // a run-time stride
		"umin stride 8",          // runtime-sized array
		"select(<=80) stride 24", // column-major: 7 strides of 24 and 8 rows span 176
		"0 stride 8",
	})
	if val := os.Getenv(prereq.SpirvValNewEnv); val != "" {
		spirvValNew(t, val, "bounds.wgsl", m.SPIRV)
	}
}

// TestSubgroupMatrixNativeNarrowAndScalar reads back the native form of i8
// and u8 matrices and of the scalar builtins: 8-bit component types under
// capability Int8, loads and stores through the 32-bit array with offset and
// stride divided by 4 (constants where they were; an unknown offset selected
// against the array's length in elements: 64 - (7*2 + 2) = 48), fills and
// scalars clamped to the 8-bit range and converted, the layout-template
// form's offset and stride taken as array elements, undivided, the scalar operation of
// the component type on the matrix and a filled one, and the signedness
// operands of an i8 product.
func TestSubgroupMatrixNativeNarrowAndScalar(t *testing.T) {
	src := sgm("@group(0) @binding(3) var<storage, read_write> ib: array<i32>;\nvar<workgroup> wu: array<u32, 64>;", `
let l = subgroupMatrixLoad<subgroup_matrix_left<u8, 8, 8>>(&wu, 7u, false, 10u);
let s = subgroupMatrixScalarAdd(l, 300u);
subgroupMatrixStore(&wu, wid.x, s, false, 8u);
let il = subgroupMatrixLoad<subgroup_matrix_left<i8, 16, 8>>(&ib, 0u, true, 8u);
let ir = subgroup_matrix_right<i8, 8, 16>(-1);
subgroupMatrixStore(&ib, 64u, subgroupMatrixMultiply<i32>(il, ir), false, 8u);
subgroupMatrixStore<col_major>(&wu, 40u, subgroupMatrixLoad<subgroup_matrix_right<u8, 8, 8>, row_major>(&wu, 3u, 2u), 2u);
let f = subgroupMatrixScalarMultiply(subgroup_matrix_result<f32, 8, 8>(), 2.0);
subgroupMatrixStore(&o, 0u, subgroupMatrixScalarSubtract(f, 1.0), false, 8u);`)
	m, err := Compile("narrow.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	var types, accesses, ops []string
	rb := readNative(m.SPIRV, []uint32{rbExtInst, rbAccessChain, rbSelect, rbULE, rbUConvert, rbSConvert}, func(rb *readBack, op uint32, in []uint32) {
		switch op {
		case rbTypeCoop:
			types = append(types, rb.coop[in[0]])
		case rbComposite:
			if rb.coop[in[0]] == "" {
				break
			}
			from := "value"
			if d := rb.defs[in[2]]; d != nil && (d[0] == rbUConvert || d[0] == rbSConvert) {
				if c := rb.defs[d[1]]; c != nil && c[0] == rbExtInst && (c[2] == rbGLSLUClamp || c[2] == rbGLSLSClamp) {
					from = fmt.Sprintf("%s(clamp(%d..%d))", map[uint32]string{rbUConvert: "u8", rbSConvert: "i8"}[d[0]], int32(rb.consts[c[4]]), int32(rb.consts[c[5]]))
				}
			}
			ops = append(ops, "fill "+rb.coop[in[0]]+" with "+from)
		case rbIAdd, rbFSub, rbFMul:
			if rb.coop[in[0]] != "" {
				ops = append(ops, fmt.Sprintf("%s %s", map[uint32]string{rbIAdd: "iadd", rbFSub: "fsub", rbFMul: "fmul"}[op], rb.coop[in[0]]))
			}
		case rbCoopLoad:
			accesses = append(accesses, fmt.Sprintf("load %s at %s stride %s", rb.coop[in[0]], rb.offset(t, in[2]), rb.describe(in[4])))
		case rbCoopStore:
			accesses = append(accesses, fmt.Sprintf("store at %s stride %s", rb.offset(t, in[0]), rb.describe(in[3])))
		case rbCoopMulAdd:
			ops = append(ops, fmt.Sprintf("muladd %s operands=%#x", rb.coop[in[0]], in[5]))
		}
	})
	if !rb.caps[rbCapInt8] {
		t.Error("no capability Int8")
	}
	checkLines(t, "types", types, []string{"u8 scope=3 rows=8 cols=8 use=0", "i8 scope=3 rows=8 cols=16 use=0", "i8 scope=3 rows=16 cols=8 use=1", "i32 scope=3 rows=8 cols=8 use=2", "u8 scope=3 rows=8 cols=8 use=1", "f32 scope=3 rows=8 cols=8 use=2"})
	checkLines(t, "loads and stores", accesses, []string{
		"load u8 scope=3 rows=8 cols=8 use=0 at 1 stride 2", // the bool form counts components: 7/4, 10/4
		"store at select(<=48) stride 2",
		"load i8 scope=3 rows=8 cols=16 use=0 at 0 stride 2",
		"store at umin stride 8",                            // an i32 result, whole elements, in a runtime-sized array
		"load u8 scope=3 rows=8 cols=8 use=1 at 3 stride 2", // the layout-template form counts array elements
		"store at 40 stride 2",                              // 40 + 7*2 + 2 <= 64
		"store at 0 stride 8",
	})
	checkLines(t, "arithmetic", ops, []string{
		"fill u8 scope=3 rows=8 cols=8 use=0 with u8(clamp(0..255))", "iadd u8 scope=3 rows=8 cols=8 use=0",
		"fill i8 scope=3 rows=16 cols=8 use=1 with i8(clamp(-128..127))",
		"muladd i32 scope=3 rows=8 cols=8 use=2 operands=0xf", // A, B, C and the result signed
		"fill f32 scope=3 rows=8 cols=8 use=2 with value", "fmul f32 scope=3 rows=8 cols=8 use=2",
		"fill f32 scope=3 rows=8 cols=8 use=2 with value", "fsub f32 scope=3 rows=8 cols=8 use=2",
	})
	if val := os.Getenv(prereq.SpirvValNewEnv); val != "" {
		spirvValNew(t, val, "narrow.wgsl", m.SPIRV)
	}
}

// TestSubgroupMatrixNativeReinterpret reads back native loads and stores
// through arrays of other values than the matrix's components: the pointer
// is to the array's element at the offset, the stride passes as written
// (both count array elements), and a fixed-length array bounds a matrix by
// its bytes: in wv (16 vec4<u32>, 16 bytes each) an 8x8 f16 row of 16 bytes
// takes one element, so with stride 2 a matrix spans 7*2 + 1 = 15 and an
// unknown offset is selected against 1; a u8 column of 8 bytes takes half
// an element, so with stride 1 a 16-column matrix spans 15 + 1 = 16 (a
// constant offset 0 stays); in wh (64 vec2<f16>, 4 bytes) an 8-column f32
// row takes 8, so stride 8 spans 7*8 + 8 = 64, the whole array (an unknown
// offset is selected against 0).
func TestSubgroupMatrixNativeReinterpret(t *testing.T) {
	src := "enable f16;\n" + sgm("var<workgroup> wv: array<vec4<u32>, 16>;\nvar<workgroup> wh: array<vec2<f16>, 64>;", `
let h = subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>, row_major>(&wv, wid.x, 2u);
subgroupMatrixStore<col_major>(&wv, 0u, subgroup_matrix_right<u8, 16, 8>(7u), 1u);
let f = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>, row_major>(&wh, wid.x, 8u);
subgroupMatrixStore<row_major>(&o, 0u, f, 8u);
subgroupMatrixStore<row_major>(&wv, 1u, h, 2u);`)
	m, err := Compile("reinterpret.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	readNative(m.SPIRV, []uint32{rbExtInst, rbAccessChain, rbSelect, rbULE}, func(rb *readBack, op uint32, in []uint32) {
		switch op {
		case rbCoopLoad:
			got = append(got, "load "+rb.offset(t, in[2])+" stride "+rb.describe(in[4]))
		case rbCoopStore:
			got = append(got, "store "+rb.offset(t, in[0])+" stride "+rb.describe(in[3]))
		}
	})
	checkLines(t, "reinterpreting accesses", got, []string{
		"load select(<=1) stride 2",
		"store 0 stride 1",
		"load select(<=0) stride 8",
		"store 0 stride 8",
		"store 1 stride 2",
	})
	if val := os.Getenv(prereq.SpirvValNewEnv); val != "" {
		spirvValNew(t, val, "reinterpret.wgsl", m.SPIRV)
	}
}

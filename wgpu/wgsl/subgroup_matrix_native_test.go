package wgsl

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	const (
		opConstant   = 43
		opTypeFloat  = 22
		opTypeInt    = 21
		opTypeCoop   = 4456
		opCoopLoad   = 4457
		opCoopStore  = 4458
		opCoopMulAdd = 4459
		opExtension  = 10
		opCapability = 17
	)
	consts := map[uint32]uint32{}
	scalar := map[uint32]string{}
	coop := map[uint32]string{}
	var types, loads, stores, muls []string
	hasCap, hasExt := false, false
	w := m.SPIRV[5:]
	for len(w) > 0 {
		n, op := w[0]>>16, w[0]&0xffff
		in := w[1:n]
		switch op {
		case opCapability:
			hasCap = hasCap || in[0] == 6022
		case opExtension:
			hasExt = hasExt || len(in) > 0 && in[0] == 0x5f565053 // "SPV_"
		case opConstant:
			consts[in[1]] = in[2]
		case opTypeFloat:
			scalar[in[0]] = fmt.Sprintf("f%d", in[1])
		case opTypeInt:
			scalar[in[0]] = fmt.Sprintf("%s%d", map[uint32]string{0: "u", 1: "i"}[in[2]], in[1])
		case opTypeCoop:
			s := fmt.Sprintf("%s scope=%d rows=%d cols=%d use=%d", scalar[in[1]], consts[in[2]], consts[in[3]], consts[in[4]], consts[in[5]])
			coop[in[0]] = s
			types = append(types, s)
		case opCoopLoad:
			loads = append(loads, fmt.Sprintf("%s layout=%d stride=%d", coop[in[0]], consts[in[3]], consts[in[4]]))
		case opCoopStore:
			stores = append(stores, fmt.Sprintf("layout=%d stride=%d", consts[in[2]], consts[in[3]]))
		case opCoopMulAdd:
			mask := "none"
			if len(in) > 5 {
				mask = fmt.Sprintf("%#x", in[5])
			}
			muls = append(muls, coop[in[0]]+" operands="+mask)
		}
		w = w[n:]
	}
	if !hasCap || !hasExt {
		t.Errorf("capability CooperativeMatrixKHR %v, extension SPV_KHR_cooperative_matrix %v", hasCap, hasExt)
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
		}
	}
	// Subgroup scope is 3; uses A, B, Accumulator are 0, 1, 2; layouts
	// RowMajorKHR 0, ColumnMajorKHR 1 (SPIR-V 1.6 rev 4 grammar).
	check("types", types, []string{
		"f32 scope=3 rows=4 cols=8 use=0", "f32 scope=3 rows=8 cols=16 use=1", "f32 scope=3 rows=4 cols=16 use=2",
		"i32 scope=3 rows=8 cols=8 use=0", "i32 scope=3 rows=8 cols=8 use=1", "u32 scope=3 rows=8 cols=8 use=2",
	})
	check("loads", loads, []string{
		"f32 scope=3 rows=4 cols=8 use=0 layout=0 stride=10", "f32 scope=3 rows=8 cols=16 use=1 layout=1 stride=9",
		"i32 scope=3 rows=8 cols=8 use=0 layout=0 stride=8", "i32 scope=3 rows=8 cols=8 use=1 layout=0 stride=8",
	})
	check("stores", stores, []string{"layout=1 stride=4", "layout=0 stride=8"})
	// Signed A and B (i32), unsigned C and result (u32).
	check("multiplies", muls, []string{"f32 scope=3 rows=4 cols=16 use=2 operands=none", "u32 scope=3 rows=8 cols=8 use=2 operands=0x3"})
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
	const (
		opExtInst     = 12
		opConstant    = 43
		opAccessChain = 65
		opSelect      = 169
		opULE         = 178
		opCoopLoad    = 4457
		opCoopStore   = 4458
		glslUMin      = 38
	)
	defs := map[uint32][]uint32{} // result id -> opcode, operands
	consts := map[uint32]uint32{}
	var accesses [][2]uint32 // pointer, stride of each load and store
	w := m.SPIRV[5:]
	for len(w) > 0 {
		n, op := w[0]>>16, w[0]&0xffff
		in := w[1:n]
		switch op {
		case opConstant:
			consts[in[1]] = in[2]
		case opExtInst, opAccessChain, opSelect, opULE:
			defs[in[1]] = append([]uint32{op}, in[2:]...)
		case opCoopLoad:
			accesses = append(accesses, [2]uint32{in[2], in[4]})
		case opCoopStore:
			accesses = append(accesses, [2]uint32{in[0], in[3]})
		}
		w = w[n:]
	}
	// describe names how a value came to be: a constant, a select against
	// a constant limit, a clamp, or something else.
	describe := func(id uint32) string {
		if v, ok := consts[id]; ok {
			return fmt.Sprintf("%d", v)
		}
		d := defs[id]
		switch {
		case d == nil:
			return "value"
		case d[0] == opSelect:
			if cond := defs[d[1]]; cond != nil && cond[0] == opULE {
				if lim, ok := consts[cond[2]]; ok {
					return fmt.Sprintf("select(<=%d)", lim)
				}
			}
			return "select"
		case d[0] == opExtInst && d[2] == glslUMin:
			return "umin"
		}
		return "value"
	}
	var got []string
	for _, a := range accesses {
		ac := defs[a[0]]
		if ac == nil || ac[0] != opAccessChain {
			t.Fatalf("pointer %%%d is not an access chain", a[0])
		}
		got = append(got, describe(ac[len(ac)-1])+" stride "+describe(a[1]))
	}
	want := []string{
		"select(<=192) stride 8", // unknown offset, whole matrix from it within 256
		"192 stride 8",           // 192 + 64 = 256: in bounds
		"value stride 8",         // at most 120: proved
		"select stride select",   // a run-time stride
		"umin stride 8",          // runtime-sized array
		"select(<=80) stride 24", // column-major: 7 strides of 24 and 8 rows span 176
		"0 stride 8",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bounds:\ngot  %q\nwant %q", got, want)
	}
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
	const (
		opExtInst     = 12
		opCapability  = 17
		opTypeInt     = 21
		opTypeFloat   = 22
		opConstant    = 43
		opComposite   = 80
		opAccessChain = 65
		opUConvert    = 113
		opSConvert    = 114
		opIAdd        = 128
		opFSub        = 131
		opFMul        = 133
		opSelect      = 169
		opULE         = 178
		opTypeCoop    = 4456
		opCoopLoad    = 4457
		opCoopStore   = 4458
		opCoopMulAdd  = 4459
		capInt8       = 39
		glslUMin      = 38
		glslUClamp    = 44
		glslSClamp    = 45
	)
	consts := map[uint32]uint32{}
	scalar := map[uint32]string{}
	coop := map[uint32]string{}
	defs := map[uint32][]uint32{} // result id -> opcode, operands
	var types, accesses, ops []string
	int8Cap := false
	describe := func(id uint32) string {
		if v, ok := consts[id]; ok {
			return fmt.Sprint(v)
		}
		if d := defs[id]; d != nil && d[0] == opSelect {
			if c := defs[d[1]]; c != nil && c[0] == opULE {
				return fmt.Sprintf("select(<=%d)", consts[c[2]])
			}
		} else if d != nil && d[0] == opExtInst && d[2] == glslUMin {
			return "umin"
		}
		return "value"
	}
	offset := func(p uint32) string { // the last index of the access chain p
		d := defs[p]
		return describe(d[len(d)-1])
	}
	w := m.SPIRV[5:]
	for len(w) > 0 {
		n, op := w[0]>>16, w[0]&0xffff
		in := w[1:n]
		switch op {
		case opCapability:
			int8Cap = int8Cap || in[0] == capInt8
		case opConstant:
			consts[in[1]] = in[2]
		case opTypeFloat:
			scalar[in[0]] = fmt.Sprintf("f%d", in[1])
		case opTypeInt:
			scalar[in[0]] = fmt.Sprintf("%s%d", map[uint32]string{0: "u", 1: "i"}[in[2]], in[1])
		case opTypeCoop:
			coop[in[0]] = fmt.Sprintf("%s %dx%d use=%d", scalar[in[1]], consts[in[3]], consts[in[4]], consts[in[5]])
			types = append(types, coop[in[0]])
		case opExtInst, opAccessChain, opSelect, opULE, opUConvert, opSConvert, opComposite:
			defs[in[1]] = append([]uint32{op}, in[2:]...)
			if op == opComposite && coop[in[0]] != "" {
				from := "value"
				if d := defs[in[2]]; d != nil && (d[0] == opUConvert || d[0] == opSConvert) {
					if c := defs[d[1]]; c != nil && c[0] == opExtInst && (c[2] == glslUClamp || c[2] == glslSClamp) {
						from = fmt.Sprintf("%s(clamp(%d..%d))", map[uint32]string{opUConvert: "u8", opSConvert: "i8"}[d[0]], int32(consts[c[4]]), int32(consts[c[5]]))
					}
				}
				ops = append(ops, "fill "+coop[in[0]]+" with "+from)
			}
		case opIAdd, opFSub, opFMul:
			if coop[in[0]] != "" {
				ops = append(ops, fmt.Sprintf("%s %s", map[uint32]string{opIAdd: "iadd", opFSub: "fsub", opFMul: "fmul"}[op], coop[in[0]]))
			}
		case opCoopLoad:
			accesses = append(accesses, fmt.Sprintf("load %s at %s stride %s", coop[in[0]], offset(in[2]), describe(in[4])))
		case opCoopStore:
			accesses = append(accesses, fmt.Sprintf("store at %s stride %s", offset(in[0]), describe(in[3])))
		case opCoopMulAdd:
			ops = append(ops, fmt.Sprintf("muladd %s operands=%#x", coop[in[0]], in[5]))
		}
		w = w[n:]
	}
	if !int8Cap {
		t.Error("no capability Int8")
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
		}
	}
	check("types", types, []string{"u8 8x8 use=0", "i8 8x16 use=0", "i8 16x8 use=1", "i32 8x8 use=2", "u8 8x8 use=1", "f32 8x8 use=2"})
	check("loads and stores", accesses, []string{
		"load u8 8x8 use=0 at 1 stride 2", // the bool form counts components: 7/4, 10/4
		"store at select(<=48) stride 2",
		"load i8 8x16 use=0 at 0 stride 2",
		"store at umin stride 8",          // an i32 result, whole elements, in a runtime-sized array
		"load u8 8x8 use=1 at 3 stride 2", // the layout-template form counts array elements
		"store at 40 stride 2",            // 40 + 7*2 + 2 <= 64
		"store at 0 stride 8",
	})
	check("arithmetic", ops, []string{
		"fill u8 8x8 use=0 with u8(clamp(0..255))", "iadd u8 8x8 use=0",
		"fill i8 16x8 use=1 with i8(clamp(-128..127))",
		"muladd i32 8x8 use=2 operands=0xf", // A, B, C and the result signed
		"fill f32 8x8 use=2 with value", "fmul f32 8x8 use=2",
		"fill f32 8x8 use=2 with value", "fsub f32 8x8 use=2",
	})
	if val := os.Getenv(prereq.SpirvValNewEnv); val != "" {
		spirvValNew(t, val, "narrow.wgsl", m.SPIRV)
	}
}

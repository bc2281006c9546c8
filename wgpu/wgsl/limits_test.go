package wgsl

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// Size limits (limits.go): array and struct byte sizes, the element count
// of arrays outside storage buffers, and @workgroup_size. The init below
// adds the programs to the shared corpora, so TestTintOracle checks them
// against Tint too.

var limitsValid = []struct{ name, src string }{
	// The count limit is on declarations: a const-expression value that is
	// indexed away may be larger (and is never built element by element:
	// TestHugeZeroValueCheap).
	{"huge_array_value_indexed", kernel("", `var x = array<i32, 300000000>()[0]; oi[0] = x;
		const y = array<array<vec4<f32>, 1000>, 10000>()[9999][999].w; fo[0] = y;
		oi[1] = array<i32, 70000>()[oi[2]];`)},
	{"huge_array_private_init", kernel("var<private> p = array<u32, 70000>()[5];", "ou[0] = p;")},
	{"const_array_65535", kernel("const c = array<i32, 65535>(); const d = array<array<i32, 30000>, 30000>();",
		"oi[0] = c[65534] + d[29999][3]; let i = ou[0] % 4u; oi[1] = c[i];")},
	{"storage_array_near_4g", kernel(`struct S { a: array<i32, 1073741822>, b: i32 }
		@group(1) @binding(0) var<storage, read_write> big: array<i32, 1073741823>;
		@group(1) @binding(1) var<storage, read_write> s: S;`, "big[1073741822] = s.b; s.a[0] = 1;")},
	{"struct_large_size_align", kernel(`struct S { @size(2000000000) a: i32, @align(1073741824) b: i32 }
		@group(1) @binding(0) var<storage, read_write> s: S;`, "s.b = s.a;")},
	{"workgroup_size_u32", "@compute @workgroup_size(4294967295u) fn main() {}"},
	{"workgroup_size_abstract_as_u32", "@compute @workgroup_size(4294967295, 1u) fn main() {}"},
	{"workgroup_size_product_u32", "@compute @workgroup_size(65536, 32768, 1) fn main() {}"},
}

var limitsInvalid = []struct{ name, src, want string }{
	{"array_count_abstract_i32", body("var x = array<i32, 4294967295>()[0];"), "2:20: value 4294967295 cannot be represented as 'i32'"},
	{"array_byte_size_overflow", "@group(0) @binding(0) var<storage> a: array<vec4f, 0xffffffffu>;" + ep,
		"1:52: array byte size (0xffffffff0) must not exceed 0xffffffff bytes"},
	{"array_byte_size_4g", "@group(0) @binding(0) var<storage> a: array<i32, 1073741824>;" + ep,
		"1:50: array byte size (0x100000000) must not exceed 0xffffffff bytes"},
	{"array_nested_byte_size", body("var x = array<array<i32, 100000>, 100000>()[1][2];"),
		"2:35: array byte size (0x9502f9000) must not exceed 0xffffffff bytes"},
	{"struct_size_4g", "struct S { a: array<i32, 1073741823>, b: i32 }" + ep, "1:1: struct size (0x100000000) must not exceed 0xffffffff bytes"},
	{"struct_offset_4g", "struct S { a: array<i32, 1073741823>, b: vec4<f32> }" + ep, "1:39: struct member offset (0x100000000) must not exceed"},
	{"struct_size_attr_i32", "struct S { @size(4294967295) a: i32 }" + ep, "1:18: value 4294967295 cannot be represented as 'i32'"},
	{"private_array_count", "var<private> a: array<i32, 70000>;" + ep, "1:14: variable 'a' holds an array of 70000 elements"},
	{"uniform_array_count", "struct U { a: array<vec4f, 70000> }\n@group(0) @binding(0) var<uniform> u: U;" + ep,
		"2:36: variable 'u' holds an array of 70000 elements"},
	{"workgroup_array_count", "var<workgroup> a: array<atomic<u32>, 65536>;" + ep, "1:16: variable 'a' holds an array of 65536"},
	{"function_array_count", body("var a: array<array<i32, 70000>, 2>;"), "2:5: variable 'a' holds an array of 70000"},
	{"let_array_count", body("let a = array<i32, 70000>();"), "2:5: let 'a' holds an array of 70000"},
	{"const_array_count", "const a = array<i32, 300000000>();" + ep, "1:7: const 'a' holds an array of 300000000"},
	{"param_array_count", "fn f(p: ptr<function, array<i32, 70000>>) {}" + ep, "1:9: parameter 'p' holds an array of 70000"},
	{"result_array_count", "fn f() -> array<i32, 70000> { return array<i32, 70000>(); }" + ep, "1:11: the result of 'f' holds an array of 70000"},
	{"phony_array_count", "@group(0) @binding(0) var<storage> s: array<i32, 70000>;\n" + body("_ = s;"),
		"3:5: the value assigned to '_' holds an array of 70000"},
	{"workgroup_size_abstract_i32", "@compute @workgroup_size(4294967295, 1, 1) fn main() {}", "1:26: value 4294967295 cannot be represented as 'i32'"},
	{"workgroup_size_product", "@compute @workgroup_size(65536u, 65536u, 1u) fn main() {}", "1:34: @workgroup_size gives more than 4294967295 invocations"},
	{"workgroup_size_product_3", "@compute @workgroup_size(4294967295u, 2u) fn main() {}", "1:39: @workgroup_size gives more than 4294967295"},
	{"workgroup_size_product_override", "override x: u32;\n@compute @workgroup_size(x, 65536, 65536) fn main() {}", "2:36: @workgroup_size gives more than"},
	{"workgroup_size_mixed_negative", "@compute @workgroup_size(-1, 1u) fn main() {}", "1:26: value -1 cannot be represented as 'u32'"},
}

func init() {
	validPrograms = append(validPrograms, limitsValid...)
	invalidPrograms = append(invalidPrograms, limitsInvalid...)
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeZeroValueCheap checks that zero values of arrays sized in the
// source cost memory by their size in the source, not by their element
// count: array<i32, 300000000>() is not built element by element.
func TestHugeZeroValueCheap(t *testing.T) {
	for _, src := range []string{
		body("var x = array<i32, 300000000>()[0];"),
		body("var x = array<array<array<i32, 1000>, 1000>, 1000>()[1][2][3];"),
		"const d = array<array<i32, 30000>, 30000>();\n" + kernel("", "oi[0] = d[ou[0] % 30000u][ou[1] % 30000u];"),
	} {
		var err error
		n := allocated(func() { _, err = Compile("zero.wgsl", src, Options{}) })
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		t.Logf("%d KiB", n>>10)
		if n > 8<<20 {
			t.Errorf("compiling allocated %d MiB, want at most 8\n%s", n>>20, src)
		}
	}
}

// TestSharedConstantsLinear checks that constants made of shared parts
// (each level ten copies of the one before: 10^7 scalars in all) are
// converted and emitted once per distinct part: the work does not grow with
// the expanded value.
func TestSharedConstantsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("const a0 = array(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);\n")
	for i := 1; i <= 6; i++ {
		p := fmt.Sprintf("a%d", i-1)
		fmt.Fprintf(&b, "const a%d = array(%s);\n", i, strings.TrimSuffix(strings.Repeat(p+", ", 10), ", "))
	}
	src := kernel(b.String(), "let i = ou[0] % 10u; oi[0] = a6[i][i][0][1][i][2][i];")
	var m *Module
	n := allocated(func() { m = compileOK(t, "shared.wgsl", src) })
	t.Logf("%d KiB, %d SPIR-V words", n>>10, len(m.SPIRV))
	if n > 32<<20 {
		t.Errorf("compiling allocated %d MiB, want at most 32", n>>20)
	}
	if len(m.SPIRV) > 4000 {
		t.Errorf("%d SPIR-V words, want the shared parts once (at most 4000)", len(m.SPIRV))
	}
}

// TestWorkgroupSizeSpecialize checks the @workgroup_size product once the
// overrides have their pipeline values: a pipeline-creation error.
func TestWorkgroupSizeSpecialize(t *testing.T) {
	m := compileOK(t, "wg.wgsl", "override x: u32 = 64u;\n@compute @workgroup_size(x, 65536u) fn main() {}")
	if _, err := m.Specialize("main", map[string]float64{"x": 65536}); err == nil || !strings.Contains(err.Error(), "more than 4294967295 invocations") {
		t.Errorf("Specialize with x = 65536: %v, want the product refused", err)
	}
	sp, err := m.Specialize("main", map[string]float64{"x": 65535})
	if err != nil || sp.WorkgroupSize != [3]uint32{65535, 65536, 1} {
		t.Errorf("Specialize with x = 65535: %v, %v", sp, err)
	}
}

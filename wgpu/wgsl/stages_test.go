package wgsl

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStagesOneByOne drives parse, checkDefault, emitDefault and reflectModule
// separately, as a test inspecting intermediate results would.
func TestStagesOneByOne(t *testing.T) {
	src := "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n" +
		"@compute @workgroup_size(2) fn main(@builtin(local_invocation_index) i: u32) { o[i] = i * 2u; }\n"
	f, err := parse("s.wgsl", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Decls) != 2 {
		t.Fatalf("%d declarations", len(f.Decls))
	}
	fn := f.Decls[1].(*fnDecl)
	if fn.Name != "main" || src[fn.NamePos:fn.NamePos+4] != "main" {
		t.Errorf("function %q at offset %d", fn.Name, fn.NamePos)
	}
	m, err := checkDefault(f)
	if err != nil {
		t.Fatal(err)
	}
	if ep := m.EntryPoints(); len(ep) != 1 || ep[0] != "main" || m.File() != f {
		t.Fatalf("entry points %q, file %p (want %p)", ep, m.File(), f)
	}
	words, err := emitDefault(m)
	if err != nil {
		t.Fatal(err)
	}
	spirvVal(t, "stages", words)
	if r := reflectModule(m); r.EntryPoints[0].WorkgroupSize != [3]uint32{2, 1, 1} || r.Bindings[0].ElementStride != 4 {
		t.Errorf("reflection %+v", r)
	}
	words2, err := CompileSPIRV("s.wgsl", src)
	if err != nil || len(words2) != len(words) {
		t.Errorf("CompileSPIRV: %d words, %v", len(words2), err)
	}
}

func TestStageMisuse(t *testing.T) {
	var ie *InternalError
	if _, err := emitDefault(nil); !errors.As(err, &ie) {
		t.Errorf("emitDefault(nil): %v", err)
	}
	if _, err := emitDefault(&checked{}); !errors.As(err, &ie) {
		t.Errorf("emitDefault of a module not made by check: %v", err)
	}
	if r := reflectModule(&checked{}); len(r.Bindings)+len(r.EntryPoints)+len(r.Overrides) != 0 {
		t.Errorf("reflectModule of a module not made by check: %+v", r)
	}
	if _, err := checkDefault(nil); !errors.As(err, &ie) {
		t.Errorf("checkDefault(nil): %v", err)
	}
	// A syntax error: parse still returns the declarations it could read.
	f, err := parse("p.wgsl", "fn a( {}\nconst b = 1;\n")
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Line != 1 {
		t.Errorf("parse error: %v", err)
	}
	if len(f.Decls) != 1 {
		t.Errorf("recovered %d declarations, want 1", len(f.Decls))
	}
}

func BenchmarkCompileKernels(b *testing.B) {
	files, _ := filepath.Glob("testdata/kernels/*.wgsl")
	var srcs []string
	for _, f := range files {
		s, _ := os.ReadFile(f)
		srcs = append(srcs, string(s))
	}
	b.ResetTimer()
	for range b.N {
		for i, s := range srcs {
			if _, err := Compile(files[i], s, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

package shaders

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, text := range files {
		m[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return m
}

func TestExpand(t *testing.T) {
	fsys := mapFS(map[string]string{
		"k.wgsl":          "// k\n//#include \"inc/a.wgsl\"\n\t //#include \"inc/b.wgsl\"  \nfn main() {}\n",
		"inc/a.wgsl":      "// a\n//#include \"inc/common.wgsl\"\nfn a() {}\n",
		"inc/b.wgsl":      "//#include \"inc/common.wgsl\"\nfn b() {}", // no final newline
		"inc/common.wgsl": "const X: u32 = 1u;\n",
		"plain.wgsl":      "fn main() {}\n// //#include \"not/a/directive.wgsl\"\n",
	})
	x, err := expand(fsys, "k.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	// common.wgsl once, at a's include; b's include of it is an empty line.
	want := "// k\n// a\nconst X: u32 = 1u;\nfn a() {}\n\nfn b() {}\nfn main() {}\n"
	if x.text != want {
		t.Errorf("text:\n%q\nwant\n%q", x.text, want)
	}
	wantLines := []lineOrigin{{"k.wgsl", 1}, {"inc/a.wgsl", 1}, {"inc/common.wgsl", 1}, {"inc/a.wgsl", 3},
		{"inc/b.wgsl", 1}, {"inc/b.wgsl", 2}, {"k.wgsl", 4}}
	if len(x.lines) != len(wantLines) {
		t.Fatalf("lines %v, want %v", x.lines, wantLines)
	}
	for i, o := range wantLines {
		if x.lines[i] != o {
			t.Errorf("line %d from %v, want %v", i+1, x.lines[i], o)
		}
	}
	if got := strings.Count(x.text, "\n"); got != len(x.lines) {
		t.Errorf("%d lines of text, %d origins", got, len(x.lines))
	}

	// A file without directives comes back as it is (a directive must start its line).
	p, err := expand(fsys, "plain.wgsl")
	if err != nil || p.text != "fn main() {}\n// //#include \"not/a/directive.wgsl\"\n" {
		t.Errorf("plain: %q, %v", p.text, err)
	}
}

func TestExpandErrors(t *testing.T) {
	fsys := mapFS(map[string]string{
		"missing.wgsl":     "// m\n//#include \"inc/nope.wgsl\"\n",
		"deep.wgsl":        "//#include \"inc/missing.wgsl\"\n",
		"inc/missing.wgsl": "\n\n//#include \"inc/gone.wgsl\"\n",
		"self.wgsl":        "//#include \"self.wgsl\"\n",
		"a.wgsl":           "// a\n//#include \"b.wgsl\"\n",
		"b.wgsl":           "//#include \"c.wgsl\"\n",
		"c.wgsl":           "\n//#include \"b.wgsl\"\n",
		"unquoted.wgsl":    "//#include inc/x.wgsl\n",
		"glued.wgsl":       "//#include\"inc/x.wgsl\"\n",
		"trailing.wgsl":    "//#include \"inc/x.wgsl\" // why\n",
		"bare.wgsl":        "//#include\n",
		"escape.wgsl":      "//#include \"../x.wgsl\"\n",
		"abs.wgsl":         "//#include \"/x.wgsl\"\n",
	})
	cases := []struct {
		name string
		want string
		is   error
	}{
		{"missing.wgsl", `missing.wgsl:2: include "inc/nope.wgsl": `, fs.ErrNotExist},
		{"deep.wgsl", `inc/missing.wgsl:3: include "inc/gone.wgsl": `, fs.ErrNotExist},
		{"nokernel.wgsl", "kernel nokernel.wgsl: ", fs.ErrNotExist},
		{"self.wgsl", "self.wgsl:1: include cycle: self.wgsl:1 -> self.wgsl", nil},
		{"a.wgsl", "c.wgsl:2: include cycle: b.wgsl:1 -> c.wgsl:2 -> b.wgsl", nil},
		{"unquoted.wgsl", `unquoted.wgsl:1: malformed include "//#include inc/x.wgsl": want //#include "file.wgsl"`, nil},
		{"glued.wgsl", "glued.wgsl:1: malformed include", nil},
		{"trailing.wgsl", "trailing.wgsl:1: malformed include", nil},
		{"bare.wgsl", "bare.wgsl:1: malformed include", nil},
		{"escape.wgsl", `escape.wgsl:1: include "../x.wgsl": not a path inside the package's folder`, nil},
		{"abs.wgsl", `abs.wgsl:1: include "/x.wgsl": not a path`, nil},
	}
	for _, c := range cases {
		_, err := expand(fsys, c.name)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to start %q", c.name, err, c.want)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v is not %v", c.name, err, c.is)
		}
	}
}

// TestExpandDiagnostics checks that a compiler error in an included file
// names that file and its line, and one in the kernel the kernel's line.
func TestExpandDiagnostics(t *testing.T) {
	fsys := mapFS(map[string]string{
		"k.wgsl":     "// k\n//#include \"inc/h.wgsl\"\n@compute @workgroup_size(1) fn main() {\n\tlet y: u32 = helper();\n\tlet z: f32 = 1u;\n}\n",
		"inc/h.wgsl": "// helper\nfn helper() -> u32 {\n\treturn undefinedName;\n}\n",
	})
	x, err := expand(fsys, "k.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := wgsl.Compile("k.wgsl", x.text, wgsl.Options{})
	if cerr == nil {
		t.Fatal("the kernel compiled")
	}
	err = x.mapErrors("k.wgsl", cerr)
	var list wgsl.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("%v: not a wgsl.ErrorList", err)
	}
	got := map[string]bool{}
	for _, e := range list {
		got[e.File+":"+strconv.Itoa(e.Line)] = true
		if !strings.Contains(e.Pretty(), e.Source) {
			t.Errorf("%s: no source line", e)
		}
	}
	if !got["inc/h.wgsl:3"] || !got["k.wgsl:5"] || len(got) != 2 {
		t.Errorf("errors at %v, want inc/h.wgsl:3 (the undefined name) and k.wgsl:5 (the mistyped let)", got)
	}
	if strings.Contains(err.Error(), "k.wgsl:6:") || strings.Contains(err.Error(), "k.wgsl:3:") {
		t.Errorf("%v: names a line of the expanded text", err)
	}
	// A non-diagnostic error is wrapped unchanged.
	plain := errors.New("device lost")
	if err := x.mapErrors("k.wgsl", plain); !errors.Is(err, plain) || err.Error() != "kernel k.wgsl: device lost" {
		t.Errorf("mapErrors(plain) = %v", err)
	}
}

// TestKernelIncludes checks the package's own files: every kernel expands
// (no directive left), every file of include/ is included by some kernel
// and is no kernel of its own (the SPIR-V goldens compile *.wgsl only), and
// the f16 variant keeps every line where it was.
func TestKernelIncludes(t *testing.T) {
	kernels, err := fs.Glob(sources, "*.wgsl")
	if err != nil || len(kernels) == 0 {
		t.Fatalf("no kernels: %v", err)
	}
	incs, err := fs.Glob(sources, "include/*.wgsl")
	if err != nil || len(incs) == 0 {
		t.Fatalf("no includes: %v", err)
	}
	used := map[string]bool{}
	for _, k := range kernels {
		for _, f16 := range []bool{false, true} {
			x, err := load(k, f16)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			if strings.Contains(x.text, includeDirective) {
				t.Errorf("%s: a directive is left", k)
			}
			lines := strings.Split(strings.TrimSuffix(x.text, "\n"), "\n")
			if len(lines) != len(x.lines) {
				t.Fatalf("%s (f16 %v): %d lines, %d origins", k, f16, len(lines), len(x.lines))
			}
			for i, o := range x.lines {
				used[o.file] = true
				b, _ := sources.ReadFile(o.file)
				src := strings.Split(string(b), "\n")[o.line-1]
				if got := lines[i]; got != src && !(f16 && i == 0) && !strings.Contains(src, weightAlias) {
					t.Errorf("%s line %d is %q, its origin %s:%d is %q", k, i+1, got, o.file, o.line, src)
				}
			}
		}
	}
	for _, inc := range incs {
		if !used[inc] {
			t.Errorf("%s: no kernel includes it", inc)
		}
		if filepath.Dir(inc) != "include" {
			t.Errorf("%s: includes live in include/", inc)
		}
	}
}

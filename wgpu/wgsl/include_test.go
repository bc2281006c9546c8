package wgsl

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
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
	x, err := Expand(fsys, "k.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	// common.wgsl once, at a's include; b's include of it is an empty line.
	want := "// k\n// a\nconst X: u32 = 1u;\nfn a() {}\n\nfn b() {}\nfn main() {}\n"
	if x.Text != want {
		t.Errorf("text:\n%q\nwant\n%q", x.Text, want)
	}
	wantLines := []Origin{{"k.wgsl", 1}, {"inc/a.wgsl", 1}, {"inc/common.wgsl", 1}, {"inc/a.wgsl", 3},
		{"inc/b.wgsl", 1}, {"inc/b.wgsl", 2}, {"k.wgsl", 4}}
	if len(x.lines) != len(wantLines) {
		t.Fatalf("lines %v, want %v", x.lines, wantLines)
	}
	for i, o := range wantLines {
		if x.lines[i] != o {
			t.Errorf("line %d from %v, want %v", i+1, x.lines[i], o)
		}
	}
	if got := strings.Count(x.Text, "\n"); got != len(x.lines) {
		t.Errorf("%d lines of text, %d origins", got, len(x.lines))
	}

	// A file without directives comes back as it is (a directive must start its line).
	p, err := Expand(fsys, "plain.wgsl")
	if err != nil || p.Text != "fn main() {}\n// //#include \"not/a/directive.wgsl\"\n" {
		t.Errorf("plain: %q, %v", p.Text, err)
	}
}

// TestExpandReplacing: an include of a replaced file splices in its
// stand-in, wherever it is included, whose lines name the stand-in; other
// includes and a missing stand-in behave as in Expand.
func TestExpandReplacing(t *testing.T) {
	fsys := mapFS(map[string]string{
		"k.wgsl":        "//#include \"inc/a.wgsl\"\n//#include \"inc/kv.wgsl\"\nfn main() {}\n",
		"inc/a.wgsl":    "//#include \"inc/kv.wgsl\"\nfn a() {}\n",
		"inc/kv.wgsl":   "var<private> kv: u32;\nfn kvStore() { kv = 1u; }\n",
		"inc/nokv.wgsl": "fn kvStore() {}\n",
	})
	x, err := ExpandReplacing(fsys, "k.wgsl", map[string]string{"inc/kv.wgsl": "inc/nokv.wgsl"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "fn kvStore() {}\nfn a() {}\n\nfn main() {}\n"; x.Text != want {
		t.Errorf("text:\n%q\nwant\n%q", x.Text, want)
	}
	if o := x.Origin(1); o != (Origin{"inc/nokv.wgsl", 1}) {
		t.Errorf("line 1 from %v, want inc/nokv.wgsl:1", o)
	}
	if !x.Spliced("inc/nokv.wgsl") || !x.Spliced("k.wgsl") || x.Spliced("inc/kv.wgsl") {
		t.Errorf("Spliced: nokv %v, k %v, kv %v; want true, true, false", x.Spliced("inc/nokv.wgsl"), x.Spliced("k.wgsl"), x.Spliced("inc/kv.wgsl"))
	}
	plain, err := ExpandReplacing(fsys, "k.wgsl", nil)
	if err != nil || !strings.Contains(plain.Text, "var<private> kv") {
		t.Errorf("no replacements: %q, %v", plain.Text, err)
	}
	_, err = ExpandReplacing(fsys, "k.wgsl", map[string]string{"inc/kv.wgsl": "inc/gone.wgsl"})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "inc/a.wgsl:1") {
		t.Errorf("missing stand-in: %v, want fs.ErrNotExist at inc/a.wgsl:1", err)
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
		{"nokernel.wgsl", "nokernel.wgsl: ", fs.ErrNotExist},
		{"self.wgsl", "self.wgsl:1: include cycle: self.wgsl:1 -> self.wgsl", nil},
		{"a.wgsl", "c.wgsl:2: include cycle: b.wgsl:1 -> c.wgsl:2 -> b.wgsl", nil},
		{"unquoted.wgsl", `unquoted.wgsl:1: malformed include "//#include inc/x.wgsl": want //#include "file.wgsl"`, nil},
		{"glued.wgsl", "glued.wgsl:1: malformed include", nil},
		{"trailing.wgsl", "trailing.wgsl:1: malformed include", nil},
		{"bare.wgsl", "bare.wgsl:1: malformed include", nil},
		{"escape.wgsl", `escape.wgsl:1: include "../x.wgsl": not a path inside the folder`, nil},
		{"abs.wgsl", `abs.wgsl:1: include "/x.wgsl": not a path`, nil},
	}
	for _, c := range cases {
		_, err := Expand(fsys, c.name)
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
	x, err := Expand(fsys, "k.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := Compile("k.wgsl", x.Text, Options{})
	if cerr == nil {
		t.Fatal("the kernel compiled")
	}
	err = x.MapErrors(cerr)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("%v: not an ErrorList", err)
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
	// A non-diagnostic error comes back unchanged.
	plain := errors.New("device lost")
	if err := x.MapErrors(plain); err != plain {
		t.Errorf("MapErrors(plain) = %v", err)
	}
}

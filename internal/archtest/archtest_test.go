package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wgpu-eval/wgpu-eval"

// allowed maps a package folder (relative to the module root) to the folders of
// this module its non-test files may import. A rule for "a" also covers "a/..."
// unless a longer rule matches. "*" allows everything.
var allowed = map[string][]string{
	".":                     {"pipeline", "corpus", "model", "wgpu"}, // the library API (package wgpueval)
	"cmd":                   {"*"},
	"pipeline":              {"corpus", "model", "shaders", "wgpu", "internal/atomicfile", "internal/msgpackbound"},
	"corpus":                {"internal/download", "internal/atomicfile", "internal/msgpackbound"},
	"shaders":               {"wgpu", "wgpu/wgsl", "model"},
	"model":                 {"internal/download"},
	"wgpu":                  {"wgpu/wgsl", "wgpu/internal/vk"},
	"wgpu/wgsl":             {},
	"wgpu/internal/vk":      {},
	"internal/download":     {},
	"internal/atomicfile":   {},
	"internal/msgpackbound": {},
	"internal/testmodel":    {"model"},
	"internal/refops":       {},
	"internal/backendtest":  {"pipeline", "corpus", "model", "internal/testmodel"},
	"internal/archtest":     {},
	"internal/prereq":       {},
}

// rule returns the most specific rule for dir.
func rule(dir string) (string, []string, bool) {
	best := ""
	for k := range allowed {
		if (dir == k || strings.HasPrefix(dir, k+"/")) && len(k) > len(best) {
			best = k
		}
	}
	r, ok := allowed[best]
	return best, r, ok
}

// permits reports whether a package under the rule named root, with allowed
// imports r, may import the module folder imp. Packages within one rule's folder
// (a component such as wgpu/internal/vk and its subpackages) may import each other.
func permits(root string, r []string, imp string) bool {
	if imp == root || strings.HasPrefix(imp, root+"/") {
		return true
	}
	for _, a := range r {
		if a == "*" || imp == a || strings.HasPrefix(imp, a+"/") {
			return true
		}
	}
	return false
}

func TestImportGraph(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" && !strings.HasPrefix(rel, "cmd") {
			return nil // generators (go run) are tools, not part of the library graph
		}
		name, r, ok := rule(rel)
		if !ok {
			t.Errorf("%s: folder %q has no rule in the import table; add one", path, rel)
			return nil
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			imp = strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			checked++
			if !permits(name, r, imp) {
				t.Errorf("%s imports %s: rule %q allows only %v", path, imp, name, r)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d imports of this module", checked)
}

func TestPermits(t *testing.T) {
	// The rule table itself: a few facts DESIGN.md states.
	for _, c := range []struct {
		dir, imp string
		want     bool
	}{
		{"model", "wgpu", false},
		{"model", "shaders", false},
		{"model/tokenizer", "internal/download", true},
		{"wgpu/wgsl", "wgpu", false},
		{"wgpu", "wgpu/wgsl", true},
		{"pipeline", "model/tokenizer", true},
		{"shaders", "pipeline", false},
		{"cmd/wgpu-eval", "pipeline", true},
		{"wgpu/internal/vk/vklayout", "wgpu/internal/vk", true},
		{"wgpu/internal/vk", "wgpu", false},
	} {
		name, r, ok := rule(c.dir)
		if !ok {
			t.Fatalf("no rule for %s", c.dir)
		}
		if got := permits(name, r, c.imp); got != c.want {
			t.Errorf("%s -> %s: permitted %v, want %v", c.dir, c.imp, got, c.want)
		}
	}
	if _, err := os.Stat("../../go.mod"); err != nil {
		t.Fatalf("test must run from internal/archtest: %v", err)
	}
}

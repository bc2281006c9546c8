package wgsl

import (
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports enforces the house rule: wgpu/wgsl imports nothing of this
// module except its own internal packages. The test-only exectest package,
// which executes kernels through wgpu, is exempt, and tests may use
// internal/prereq (standard library only) to decide skip or fail.
func TestImports(t *testing.T) {
	const module = "github.com/wgpu-eval/wgpu-eval/"
	const self = module + "wgpu/wgsl"
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == "exectest" {
			return filepath.SkipDir // test-only package above wgpu, see its doc
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := goparser.ParseFile(gotoken.NewFileSet(), path, nil, goparser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasSuffix(path, "_test.go") && p == module+"internal/prereq" {
				continue
			}
			if strings.HasPrefix(p, module) && p != self && !strings.HasPrefix(p, self+"/") {
				t.Errorf("%s imports %s; wgpu/wgsl may import nothing else of this module", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

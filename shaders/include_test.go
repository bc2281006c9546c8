package shaders

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// TestKernelIncludes checks the package's own files: every kernel expands
// (no directive left), every file of include/ is included by some kernel
// (or spliced in for another by kvFreeIncludes) and is no kernel of its own
// (the SPIR-V goldens compile *.wgsl only), and the f16 variant keeps every
// line where it was.
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
		for _, v := range []struct {
			f16     bool
			replace map[string]string
		}{{false, nil}, {true, nil}, {false, kvFreeIncludes}, {true, kvFreeIncludes}} {
			f16 := v.f16
			x, err := loadReplacing(k, f16, v.replace)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			if strings.Contains(x.Text, wgsl.IncludeDirective) {
				t.Errorf("%s: a directive is left", k)
			}
			lines := strings.Split(strings.TrimSuffix(x.Text, "\n"), "\n")
			for i, got := range lines {
				o := x.Origin(i + 1)
				used[o.File] = true
				b, _ := sources.ReadFile(o.File)
				src := strings.Split(string(b), "\n")[o.Line-1]
				if got != src && !(f16 && i == 0) && !strings.Contains(src, weightAlias) {
					t.Errorf("%s line %d is %q, its origin %s:%d is %q", k, i+1, got, o.File, o.Line, src)
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

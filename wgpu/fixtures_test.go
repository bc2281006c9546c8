package wgpu

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// TestSPIRVFixturesUpToDate: every committed testdata/*.spv is what
// testdata/build_spirv.sh (go generate) makes of its .comp source now.
func TestSPIRVFixturesUpToDate(t *testing.T) {
	glslang := prereq.Tool(t, "glslangValidator", "glslang-tools")
	srcs, err := filepath.Glob(filepath.Join("testdata", "*.comp"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, src := range srcs {
		spv := strings.TrimSuffix(src, ".comp") + ".spv"
		out := filepath.Join(t.TempDir(), filepath.Base(spv))
		if b, err := exec.Command(glslang, "-V", "--target-env", "vulkan1.1", "--quiet", "-o", out, src).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", src, err, b)
		}
		want, err1 := os.ReadFile(out)
		have, err2 := os.ReadFile(spv)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", spv, err1, err2)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s is stale: run go generate ./wgpu (testdata/build_spirv.sh)", spv)
		}
	}
}

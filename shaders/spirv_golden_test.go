package shaders

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

var updateSPIRV = flag.Bool("update-spirv", false, "rewrite testdata/spirv/*.spvasm from the current compiler")

// TestSPIRVGoldens compares the SPIR-V the compiler emits for every kernel
// the product ships, f32 and f16 variants, as spirv-dis text, with
// testdata/spirv: an emitter change shows as a diff there. After a
// deliberate change: go test ./shaders -run TestSPIRVGoldens -update-spirv
// and review the diff.
func TestSPIRVGoldens(t *testing.T) {
	dis := prereq.Tool(t, "spirv-dis", "spirv-tools")
	names, err := filepath.Glob("*.wgsl")
	if err != nil || len(names) == 0 {
		t.Fatalf("no kernels: %v", err)
	}
	dir := filepath.Join("testdata", "spirv")
	want := map[string]bool{}
	for _, name := range names {
		f32src, err := Source(name, false)
		if err != nil {
			t.Fatal(err)
		}
		variants := map[string]string{"f32": f32src}
		if f16src, _ := Source(name, true); f16src != f32src {
			variants["f16"] = f16src
		}
		for ty, src := range variants {
			golden := filepath.Join(dir, strings.TrimSuffix(name, ".wgsl")+"."+ty+".spvasm")
			want[golden] = true
			m, err := wgsl.Compile(name, src, wgsl.Options{})
			if err != nil {
				t.Fatalf("%s (%s): %v", name, ty, err)
			}
			text := disassemble(t, dis, m.SPIRV)
			if *updateSPIRV {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, text, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			old, err := os.ReadFile(golden)
			if err != nil {
				t.Errorf("%s: %v (run with -update-spirv)", golden, err)
				continue
			}
			if !bytes.Equal(old, text) {
				t.Errorf("%s (%s): SPIR-V differs from %s (run go test ./shaders -run TestSPIRVGoldens -update-spirv and review the diff)", name, ty, golden)
			}
		}
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "*.spvasm"))
	for _, f := range stale {
		if !want[f] {
			if *updateSPIRV {
				os.Remove(f)
			} else {
				t.Errorf("%s: no kernel variant makes it (run with -update-spirv)", f)
			}
		}
	}
}

func disassemble(t *testing.T, dis string, words []uint32) []byte {
	t.Helper()
	buf := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	file := filepath.Join(t.TempDir(), "m.spv")
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(dis, "--no-color", file).Output()
	if err != nil {
		t.Fatalf("spirv-dis: %v", err)
	}
	return out
}

package wgpueval

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestDeviceCheckScript rehearses scripts/device-check.sh, the script a lent GPU runs for a few minutes with no
// room for a step that fails for want of upkeep, as its usage says to on a CPU driver (ALLOW_SOFTWARE=1, the tiny
// model): its build, its choice of adapter, the smoke check (a peaked model on the CPU and on the GPU under the
// validation layer) and a bench with the matrix units off and auto must all pass and leave their files.
func TestDeviceCheckScript(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: -short")
	}
	if runtime.GOOS != "linux" {
		t.Skipf("the script is for Linux machines, not %s", runtime.GOOS)
	}
	for tool, pkg := range map[string]string{"bash": "bash", "timeout": "coreutils", "git": "git"} {
		prereq.Tool(t, tool, pkg)
	}
	if _, err := backend.Devices(); err != nil {
		if wgpu.Unavailable(err) {
			prereq.Missing(t, "vulkan", err)
		}
		t.Fatal(err)
	}
	corpus := prereq.TinyShakespeare(t)
	bin, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	build := exec.Command("bash", "scripts/device-check.sh", "--build", bin)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("device-check.sh --build: %v\n%s", err, b)
	}
	cmd := exec.Command("bash", "scripts/device-check.sh")
	cmd.Env = append(os.Environ(), "OUT="+out, "BIN_DIR="+bin, "EVAL_DATA="+corpus, "ALLOW_SOFTWARE=1", "MODEL=tiny", "CTX=64",
		"BATCHES=1,2", "RUNS=1", "SHAPE=", "TESTS=none", "PRECISIONS=f16", "MATRIX_UNITS=off auto", "ABLATE=0", "EVAL=0",
		"BUDGET_S=600", "WGPU_ADAPTER=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("device-check.sh: %v\n%s", err, b)
	}
	summary, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nok    smoke: mean NLL cpu ", "\nok    bench tiny f16 matrix units off", "\nok    bench tiny f16 matrix units auto", "all steps ok"} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, summary)
		}
	}
	for _, f := range []string{"smoke-cpu.json", "smoke-gpu.json", "bench-tiny-f16-mu-off.json", "bench-tiny-f16-mu-auto.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	t.Logf("summary.txt:\n%s", summary)
}

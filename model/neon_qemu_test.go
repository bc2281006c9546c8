//go:build !arm64

package model

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// neonTests are the tests of the arm64 test binary that check the NEON set:
// its kernels against the FMA-chain model, its forward against the Go model
// of its panels and gemmNN, the amd64 sets' goldens (panels and gemmNN;
// gemmNT and the row kernels of the softmax, the loss and the
// activations), the portable set's bits (the norms', rotary embedding's
// and epilogue's row kernels), the float64 reference, and 16-bit weights
// against float32 ones.
var neonTests = []string{
	"TestNEONIsDefault", "TestNEONPanelKernels", "TestNEONGemmNNIsFMAChain", "TestGemmNN", "TestNEONForwardMatchesGoPanels", "TestGemmPanelIsFMAChain", "TestGemmPanelTiling",
	"TestPanelGolden", "TestFMA32IsOneRounding", "TestCPULossKernelSets", "TestLoadCPU16BitMatchesWidened",
	"TestPanelsWhereTheKernelsHaveThem",
	"TestRowGolden", "TestExpRows", "TestGeluRow", "TestGeluErfRow", "TestSwigluRow", "TestDivMaxMulRow",
	"TestGemmNT", "TestGemmNTVecMatchesGeneric", "TestGemmNT16MatchesWidened", "TestRowSums", "TestRowSumOrder", "TestNormRows", "TestRotateRows", "TestBiasRows",
}

// The NEON kernel set passes its tests on arm64, run here by qemu's user-mode
// emulator: this package's test binary built for GOARCH=arm64, run with
// neonTests selected. qemu-user-static is a prerequisite (skipped without it,
// a failure under CI).
func TestNEONUnderQEMU(t *testing.T) {
	qemu := prereq.Tool(t, "qemu-aarch64-static", "qemu-user-static")
	bin := filepath.Join(t.TempDir(), "model.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c for linux/arm64: %v\n%s", err, out)
	}
	run := exec.Command(qemu, bin, "-test.run", "^("+strings.Join(neonTests, "|")+")$", "-test.short", "-test.v")
	run.Env = append(os.Environ(), "WGPU_EVAL_CPU_KERNELS=")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the arm64 tests under %s: %v\n%s", qemu, err, out)
	}
	for _, name := range neonTests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass under qemu:\n%s", name, out)
		}
	}
}

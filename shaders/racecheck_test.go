package shaders

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// raceCheckEnv, set to anything, makes every test device check the kernels for data races on workgroup memory
// (wgpu.DeviceDescriptor.RaceCheck) and fails the test on any: code that a CPU's Vulkan driver runs right, in its
// fixed order of invocations, and a GPU may not.
const raceCheckEnv = "WGPU_TEST_RACE_CHECK"

// checkRaces fails t with every race the device's pipelines met, at the file and line of the kernel's source (or of
// the include) where the access is.
func checkRaces(t testing.TB, dev *wgpu.Device) {
	t.Helper()
	races, err := dev.Races()
	if err != nil {
		t.Errorf("race check: %v", err)
	}
	for _, r := range races {
		// A kernel's pipelines are named "file[variant].wgsl{constants}"; its variants keep the file's lines.
		name, _, _ := strings.Cut(r.Pipeline, "{")
		if i, j := strings.Index(name, "["), strings.Index(name, "]"); i >= 0 && j > i {
			name = name[:i] + name[j+1:]
		}
		if x, err := wgsl.Expand(sources, name); err == nil && r.At != nil {
			at := *r.At
			o := x.Origin(at.Line)
			at.File, at.Line = o.File, o.Line
			r.At = &at
		}
		t.Errorf("%v", r)
	}
}

// raceCheckedTests are the tests TestKernelsRaceFree runs race-checked: every kernel with workgroup memory, in
// every tiling its tuner may pick, at small shapes (race checking is slow on a CPU driver).
const raceCheckedTests = "TestMatmul|TestAttention|TestLoss|TestLayerNorm|TestRMSNorm|TestTopK|TestNormRows|TestRope|TestGPT2TopLogprobs"

// TestKernelsRaceFree runs the kernel tests of raceCheckedTests again, in a child process with $WGPU_TEST_RACE_CHECK
// set, so that a data race on workgroup memory in any kernel fails the suite.
func TestKernelsRaceFree(t *testing.T) {
	if os.Getenv(raceCheckEnv) != "" {
		t.Skip("already race-checking")
	}
	if testing.Short() {
		t.Skip("slow: -short")
	}
	newTestDev(t) // skips (or fails in CI) without Vulkan, as the tests it runs would
	cmd := exec.Command(os.Args[0], "-test.run", raceCheckedTests, "-test.count", "1", "-test.timeout", "40m")
	cmd.Env = append(os.Environ(), raceCheckEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("race-checked kernel tests: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("race-checked kernel tests ran nothing:\n%s", out)
	}
	t.Logf("race-checked: %s", raceCheckedTests)
}

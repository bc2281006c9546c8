package shaders

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// raceCheckEnv, set to anything, makes every test device check the kernels for data races on workgroup memory and
// read_write storage buffers (wgpu.DeviceDescriptor.RaceCheck) and fails the test on any: code that a CPU's Vulkan
// driver runs right, in its fixed order of invocations, and a GPU may not.
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

// raceCheckedTests are the test patterns TestKernelsRaceFree runs race-checked: every kernel with workgroup memory
// (matmul_shared, matmul_coop, lmhead_loss_shared, lmhead_loss_coop, attention_shared and its subgroup form,
// attention_coop, rope_kv_write, topk_logits_shared, the norms' row sums), each in every tiling its tuner offers,
// at one ragged shape (where the accesses go depends on the shape and tiling, not on the values; race checking
// makes a CPU driver's compile about 2x slower and its run more), and the kernels without, whose storage buffers
// it checks (embed, to_f16, kv_write, matmul, attention, lmhead_loss, nll_combine, topk_logits, fill_random):
// about 8 minutes with a cold shader cache. WGPU_TEST_RACE_CHECK=1 go test ./shaders checks every test instead.
var raceCheckedTests = []string{
	"^TestMatmulShared$/f16=false/M=37,K=48,N=52",
	"^TestMatmulCoopTilings$",
	"^TestLossShared$/P=37/C=24/V=1000/split=0/f16=false",
	"^TestLossCoop$/P=37/C=24/V=1000/split=0",
	"^TestAttentionShared$//B=(3,L=29,hd=12,KV=4|2,L=10,hd=16,KV=3)", // the second for the QS 2 and 4 tilings
	"^TestAttentionCoopTuning$",
	"^TestRopeKVWrite$",
	"^(TestLayerNorm|TestLayerNormSubgroup|TestRMSNorm)$",
	"^TestGPT2TopLogprobsVariants$/k7-split/shared=true", // the whole forward pass, then the shared top-K
	"^(TestEmbed|TestToF16|TestKVWrite|TestMatmul|TestAttention|TestLoss|TestLossReduction|TestGPT2TopLogprobs)$",
	"^TestFillRandom$",
}

// TestKernelsRaceFree runs the kernel tests of raceCheckedTests again, each in a child process with
// $WGPU_TEST_RACE_CHECK set, so that a data race on workgroup memory or a storage buffer in any kernel fails the
// suite.
func TestKernelsRaceFree(t *testing.T) {
	if os.Getenv(raceCheckEnv) != "" {
		t.Skip("already race-checking")
	}
	if testing.Short() {
		t.Skip("slow: -short")
	}
	if im := prereq.VulkanChild(); im != "" { // what a race is does not depend on the driver: once is enough
		t.Skipf("the race check runs on the default implementation, not again on %s", im)
	}
	newTestDev(t) // skips (or fails in CI) without Vulkan, as the tests it runs would
	for _, pattern := range raceCheckedTests {
		t.Run(pattern, func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command(os.Args[0], "-test.run", pattern, "-test.count", "1", "-test.v", "-test.timeout", "20m")
			cmd.Env = append(os.Environ(), raceCheckEnv+"=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("race-checked: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "\n--- PASS") {
				t.Fatalf("race-checked: no test ran:\n%s", out)
			}
			t.Logf("race-checked in %.0f s", time.Since(start).Seconds())
		})
	}
}

package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// requireVulkan skips without a Vulkan adapter, unless CI or
// WGPU_REQUIRE_VULKAN is set: then it fails.
func requireVulkan(t *testing.T) []wgpu.AdapterInfo {
	t.Helper()
	as, err := wgpu.EnumerateAdapters()
	if err == nil && len(as) > 0 {
		return as
	}
	if err == nil {
		err = errors.New("no adapters")
	}
	prereq.Missing(t, "vulkan", err)
	return nil
}

// validateGPU runs the test's GPU commands under the Khronos validation layer
// ($WGPU_EVAL_VALIDATION=1) where it is installed (required in CI:
// prereq.Validation), and returns a check of a command's stderr that fails
// the test on any message of the layer or driver in it; where the layer is
// missing the check finds none.
func validateGPU(t *testing.T) func(args []string, stderr string) {
	t.Helper()
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	enabled := inst.ValidationEnabled()
	inst.Close()
	prereq.Validation(t, enabled)
	if enabled {
		t.Setenv(backend.ValidationEnv, "1")
	}
	return func(args []string, stderr string) {
		t.Helper()
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, backend.ValidationPrefix) {
				t.Errorf("%v: %s", args, line)
			}
		}
	}
}

// TestEvalOnGPU runs the CLI on the first Vulkan adapter (lavapipe in CI) with
// the peaked tiny model and checks the result against the CPU path's, in both
// precisions, and that the JSON names the adapter; its GPU commands run under
// the validation layer (validateGPU), whose notice a run without --quiet
// prints.
func TestEvalOnGPU(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	clean := validateGPU(t)
	m := synth.Peaked(synth.TinyConfig(), 11)
	dir := filepath.Join(t.TempDir(), "peaked")
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	text := "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" +
		"First Citizen:\nYou are all resolved rather to die than to famish?\n"
	data := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	result := func(args ...string) map[string]any {
		t.Helper()
		out, stderr, err := cli(t, "", append([]string{"--model", dir, "--data", data, "--ctx", "16", "--quiet", "--json", "-"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		clean(args, stderr)
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v: %v in %q", args, err, out)
		}
		return r
	}
	cpu := result("--device", "cpu")
	for _, c := range []struct {
		precision string
		tol       float64
	}{{"f32", 1e-5}, {"f16", 3e-4}} {
		if c.precision == "f16" && !as[0].Features.ShaderF16 {
			continue
		}
		gpu := result("--device", "GPU:0", "--precision", c.precision)
		if dev, _ := gpu["device"].(string); !strings.Contains(dev, as[0].Name) {
			t.Errorf("%s: device %q does not name the adapter %q", c.precision, dev, as[0].Name)
		}
		if gpu["tokens"] != cpu["tokens"] {
			t.Errorf("%s: %v tokens, cpu %v", c.precision, gpu["tokens"], cpu["tokens"])
		}
		g, w := gpu["mean_nll"].(float64), cpu["mean_nll"].(float64)
		if math.Abs(g-w) > c.tol {
			t.Errorf("%s: mean NLL %.7f on the GPU, %.7f on the CPU", c.precision, g, w)
		}
	}
	// --top-logprobs on the GPU against the CPU: compare's KL divergence is
	// tiny with f32 weights, small but not zero with f16.
	cpuPT := filepath.Join(t.TempDir(), "cpu.ptk")
	result("--device", "cpu", "--per-token", cpuPT, "--top-logprobs", "8")
	for _, c := range []struct {
		precision string
		lo, hi    float64
	}{{"f32", 0, 1e-10}, {"f16", 1e-11, 1e-3}} {
		if c.precision == "f16" && !as[0].Features.ShaderF16 {
			continue
		}
		gpuPT := filepath.Join(t.TempDir(), c.precision+".ptk")
		result("--device", "GPU:0", "--precision", c.precision, "--per-token", gpuPT, "--top-logprobs", "8")
		out, stderr, err := cli(t, "", "compare", "--json", "-", cpuPT, gpuPT)
		if err != nil {
			t.Fatalf("compare: %v\n%s", err, stderr)
		}
		var cmp runfile.Comparison
		if err := json.Unmarshal([]byte(out), &cmp); err != nil {
			t.Fatalf("%v in %q", err, out)
		}
		if cmp.KL == nil || cmp.KL.Mean < c.lo || cmp.KL.Mean > c.hi || cmp.KL.SameTopShare < 0.9 {
			t.Errorf("%s: KL against the CPU %+v, want a mean in [%g, %g] and the same top token almost everywhere", c.precision, cmp.KL, c.lo, c.hi)
		} else {
			t.Logf("%s: KL(CPU||GPU) mean %.3g, max %.3g, same top %.1f%%", c.precision, cmp.KL.Mean, cmp.KL.Max, 100*cmp.KL.SameTopShare)
		}
	}
	if os.Getenv(backend.ValidationEnv) == "1" {
		_, stderr, err := cli(t, "", "--model", dir, "--data", data, "--ctx", "16", "--device", "gpu:0", "--precision", "f32")
		if err != nil || !strings.Contains(stderr, "checked by the Khronos validation layer") {
			t.Errorf("a validated run without --quiet: %v, no notice of the validation layer in:\n%s", err, stderr)
		}
		clean(nil, stderr)
	}
	// auto never picks a software driver: where lavapipe is all there is, it is the CPU.
	hardware := false
	for _, a := range as {
		hardware = hardware || a.DeviceType != "cpu"
	}
	if auto := result("--device", "auto"); !hardware && auto["device"] != "cpu" {
		t.Errorf("--device auto with only software adapters ran on %v", auto["device"])
	}
}

// TestGenerateOnGPU: `generate --device gpu:0` (lavapipe in CI, f32 weights)
// samples the same tokens as the CPU path with the same seed, with
// log-probabilities within 1e-5, and names the adapter.
func TestGenerateOnGPU(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	clean := validateGPU(t)
	dir, _ := peakedModel(t, nil)
	gen := func(device string) map[string]any {
		t.Helper()
		out, stderr, err := cli(t, "", "generate", "--model", dir, "--prompt", "Good morrow, cousin", "-n", "20",
			"-t", "1.3", "--seed", "9", "--device", device, "--precision", "f32", "--quiet", "--json", "-")
		if err != nil {
			t.Fatalf("%s: %v\n%s", device, err, stderr)
		}
		clean([]string{device}, stderr)
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v in %q", device, err, out)
		}
		return r
	}
	cpu, gpu := gen("cpu"), gen("gpu:0")
	if dev, _ := gpu["device"].(string); !strings.Contains(dev, as[0].Name) {
		t.Errorf("device %q does not name %q", dev, as[0].Name)
	}
	ct, gt := cpu["tokens"].([]any), gpu["tokens"].([]any)
	cl, gl := cpu["logprobs"].([]any), gpu["logprobs"].([]any)
	if len(ct) == 0 || len(ct) != len(gt) || len(cl) != len(gl) {
		t.Fatalf("cpu %v, gpu %v", ct, gt)
	}
	for i := range ct {
		if ct[i] != gt[i] || math.Abs(cl[i].(float64)-gl[i].(float64)) > 1e-5 {
			t.Errorf("token %d: cpu %v (%v), gpu %v (%v)", i, ct[i], cl[i], gt[i], gl[i])
		}
	}
}

// TestGPUProvenanceKernels: the JSON provenance of a GPU run names the kernel
// set and, with the hardware kernels, the matmul tiles (the software kernels
// have none), and says whether the matrix units ran and why.
func TestGPUProvenanceKernels(t *testing.T) {
	isolate(t)
	requireVulkan(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 8)
	for _, set := range []string{"software", "hardware"} {
		t.Setenv("WGPU_EVAL_GPU_KERNELS", set)
		r := resultJSON(t, "--model", dir, "--data", data, "--ctx", "16", "--device", "gpu", "--precision", "f32")
		d := r.Provenance.Device
		if d.Kind != "gpu" || d.Kernels != set || (set == "hardware") != (d.MatmulTiles["default"] != "") {
			t.Errorf("%s: provenance device %+v", set, d)
		}
		// No CPU implementation of Vulkan has matrix units; f32 weights
		// could not use them anyway.
		if mu := d.MatrixUnits; mu == nil || mu.Used || mu.Mode != "auto" || mu.Reason == "" {
			t.Errorf("%s: matrix units %+v, want auto, not used, with a reason", set, mu)
		}
	}
	// --matrix-units on where they cannot be used fails, saying why; off is
	// recorded.
	if _, stderr, err := cli(t, "", "--model", dir, "--data", data, "--ctx", "16", "--device", "gpu", "--precision", "f16", "--matrix-units", "on", "--quiet"); err == nil ||
		!strings.Contains(err.Error()+stderr, "matrix units required") {
		t.Errorf("--matrix-units on without matrix units: %v\n%s", err, stderr)
	}
	r := resultJSON(t, "--model", dir, "--data", data, "--ctx", "16", "--device", "gpu", "--matrix-units", "off")
	if mu := r.Provenance.Device.MatrixUnits; mu == nil || mu.Used || mu.Mode != "off" {
		t.Errorf("--matrix-units off: %+v", mu)
	}
	t.Setenv("WGPU_EVAL_GPU_KERNELS", "fastest")
	if _, stderr, err := cli(t, "", "--model", dir, "--data", data, "--ctx", "16", "--device", "gpu", "--quiet"); err == nil ||
		!strings.Contains(err.Error()+stderr, "WGPU_EVAL_GPU_KERNELS") {
		t.Errorf("an unknown kernel set: %v\n%s", err, stderr)
	}
}

// TestMatrixUnitsOnNamesTheFlag: --matrix-units on with a device whose
// features show it has no matrix units (lavapipe: a CPU implementation) is a
// command-line mistake named by its flag, as on the cpu device (exit status
// 2), in eval and generate alike; it was the library's "MatrixUnits on: ..."
// with exit status 1.
func TestMatrixUnitsOnNamesTheFlag(t *testing.T) {
	isolate(t)
	requireVulkan(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 8)
	for _, args := range [][]string{
		{"--model", dir, "--data", data, "--ctx", "16", "--device", "gpu", "--matrix-units", "on", "--quiet"},
		{"generate", "--model", dir, "--prompt", "Hello", "--device", "gpu", "--matrix-units", "on", "--quiet"},
	} {
		_, _, err := cli(t, "", args...)
		if err == nil || !strings.HasPrefix(err.Error(), "--matrix-units on: matrix units required") || exitCode(err) != 2 {
			t.Errorf("%s: %v (exit status %d), want a usage error naming --matrix-units", strings.Join(args, " "), err, exitCode(err))
		}
	}
}

// TestValidationOnGPU: $WGPU_EVAL_VALIDATION other than 1 or 0 is refused by
// name before anything loads; with the layer's best-practices checks turned
// on (they warn of this run's debugging extension), the layer's messages
// reach stderr under --quiet; and with no layer to be found, a validated run
// is refused, saying what to install.
func TestValidationOnGPU(t *testing.T) {
	isolate(t)
	requireVulkan(t)
	dir, _ := peakedModel(t, nil)
	data := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(data, []byte("Good morrow, cousin. What news from the court?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--model", dir, "--data", data, "--ctx", "16", "--device", "gpu:0", "--precision", "f32", "--quiet"}

	t.Setenv(backend.ValidationEnv, "yes")
	loud := args[:len(args)-1] // without --quiet: the model's and data's lines would show they loaded
	if _, stderr, err := cli(t, "", loud...); err == nil || !strings.Contains(err.Error(), "$WGPU_EVAL_VALIDATION is \"yes\"") || strings.Contains(stderr, "data ") {
		t.Errorf("WGPU_EVAL_VALIDATION=yes: %v\n%s", err, stderr)
	}

	t.Setenv(backend.ValidationEnv, "1")
	if clean := validateGPU(t); os.Getenv(backend.ValidationEnv) == "1" {
		t.Setenv("VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT")
		_, stderr, err := cli(t, "", args...)
		if err != nil || !strings.Contains(stderr, backend.ValidationPrefix+"validation warning: ") {
			t.Errorf("best practices: %v, no message of the layer in:\n%s", err, stderr)
		}
		t.Setenv("VK_LAYER_ENABLES", "")
		_, stderr, err = cli(t, "", args...)
		if err != nil {
			t.Fatal(err)
		}
		clean(args, stderr)
	}

	t.Setenv("VK_LAYER_PATH", t.TempDir()) // the loader's only folder of explicit layers: none
	if _, stderr, err := cli(t, "", args...); err == nil || !strings.Contains(err.Error(), "validation layer (VK_LAYER_KHRONOS_validation) is not installed") {
		t.Errorf("no layer: %v\n%s", err, stderr)
	}
}

package backend_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/shaders"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// testAdapter is the first Vulkan adapter (WGPU_ADAPTER picks another), on an
// instance with the validation layer (unless $WGPU_NO_VALIDATION; required
// under CI, prereq.Validation); any message from the layer or the driver
// fails the test. Without Vulkan the test skips, unless CI or
// WGPU_REQUIRE_VULKAN is set: then it fails.
func testAdapter(t *testing.T) *wgpu.Adapter {
	t.Helper()
	var mu sync.Mutex
	var msgs []wgpu.Message
	validation := os.Getenv("WGPU_NO_VALIDATION") == ""
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{Validation: validation, OnMessage: func(m wgpu.Message) {
		mu.Lock()
		msgs = append(msgs, m)
		mu.Unlock()
	}})
	var ad *wgpu.Adapter
	if err == nil {
		if ad, err = inst.RequestAdapter(os.Getenv("WGPU_ADAPTER")); err != nil {
			inst.Close()
		}
	}
	if err != nil {
		if wgpu.Unavailable(err) {
			prereq.Missing(t, "vulkan", fmt.Errorf("%w (Debian: libvulkan1 mesa-vulkan-drivers)", err))
		}
		t.Fatalf("no Vulkan adapter: %v", err)
	}
	t.Cleanup(func() {
		inst.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			t.Errorf("Vulkan message: %v", m)
		}
	})
	if validation {
		prereq.Validation(t, inst.ValidationEnabled())
		if inst.ValidationEnabled() {
			prereq.SyncValidation(t, inst.SyncValidationEnabled())
		}
	}
	return ad
}

// openTestGPU opens a device on ad and puts m on it with f16 or f32 weights.
func openTestGPU(t *testing.T, ad *wgpu.Adapter, m *model.Model, f16 bool) *backend.GPU {
	t.Helper()
	return openTestGPUFrom(t, ad, m.Reader(), f16)
}

// openTestGPUFrom is openTestGPU for the model src holds (a checkpoint, say).
func openTestGPUFrom(t *testing.T, ad *wgpu.Adapter, src model.TensorReader, f16 bool) *backend.GPU {
	t.Helper()
	// The features Open asks for ($WGPU_EVAL_MATRIX_UNITS decides on the
	// matrix units, as it does for Open's default).
	mu, err := shaders.MatrixUnitsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: backend.DeviceFeatures(ad, f16, mu), PipelineCacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("device close: %v", err)
		}
	})
	g, err := backend.NewGPU(context.Background(), dev, src, f16, nil)
	if err != nil {
		t.Fatal(err)
	}
	if set := shaders.KernelSet(os.Getenv(shaders.KernelsEnv)); set != "" && set != shaders.KernelsAuto && g.Model().Kernels() != set {
		g.Close()
		t.Fatalf("$%s=%s, but %s runs the %s kernels", shaders.KernelsEnv, set, g.Name(), g.Model().Kernels())
	}
	return g
}

// TestGPUFeedByAdapter: the GPU backend sizes its batches by the adapter:
// on a software one (lavapipe, SwiftShader) batches far below the memory's
// budget and one in flight, so that a cancel is prompt; on a GPU two in
// flight.
func TestGPUFeedByAdapter(t *testing.T) {
	ad := testAdapter(t)
	g := openTestGPU(t, ad, synth.Peaked(synth.TinyConfig(), 12), false)
	defer g.Close()
	f, software := g.Feed(), shaders.Software(ad.Info())
	switch {
	case software && (f.InFlight != 1 || f.BatchTokens < 1 || f.BatchTokens > 4096):
		t.Errorf("%s (software): feed %d batch tokens, %d in flight; want a few windows, one in flight", ad.Info().Name, f.BatchTokens, f.InFlight)
	case !software && (f.InFlight != 2 || f.BatchTokens < synth.TinyConfig().NPositions):
		t.Errorf("%s: feed %d batch tokens, %d in flight; want the memory's budget, two in flight", ad.Info().Name, f.BatchTokens, f.InFlight)
	}
	t.Logf("%s: %d batch tokens, %d in flight", ad.Info().Name, f.BatchTokens, f.InFlight)
}

// TestGPUConformance runs the backend conformance suite on the GPU path (the
// first Vulkan adapter: lavapipe in CI), with f32 and, where the adapter has
// shader-f16, f16 weights. The goldens' tiny model is stored in F16, so both
// weight types hold its exact values: the bound is the f32 arithmetic's.
// Against the CPU path on the peaked model: 1e-5 with f32 weights, 3e-4 with
// f16 (the CPU uses the f32 weights); a batch's sum against its sequences
// scored alone: 1e-5 relative. Lavapipe is slow: one golden case per method.
//
// Both kernel sets run on whatever adapter this is (shaders.KernelSet): the
// software kernels CPU implementations get and the hardware kernels GPUs get,
// so that a CPU implementation in CI executes what real GPUs run.
func TestGPUConformance(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) { gpuConformance(t, testAdapter(t)) })
}

// forEachKernelSet runs test once with each GPU kernel set forced
// (shaders.KernelsEnv), as subtests named after the set; openTestGPU checks
// that the model runs the set forced.
func forEachKernelSet(t *testing.T, test func(*testing.T)) {
	for _, set := range []shaders.KernelSet{shaders.KernelsSoftware, shaders.KernelsHardware} {
		t.Run(string(set), func(t *testing.T) {
			t.Setenv(shaders.KernelsEnv, string(set))
			test(t)
		})
	}
}

// gpuChunked: every method on the peaked model with the GPU scoring each window
// in chunks of 7 positions against its KV cache (chunked prefill) equals the
// CPU within tol.
func gpuChunked(t *testing.T, ad *wgpu.Adapter, f16 bool, tol float64) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	cfg := m.Config
	toks := peakedTokens(cfg, 3*cfg.NPositions)
	g := openTestGPU(t, ad, m, f16)
	g.Model().SetChunk(7)
	for _, ec := range []pipeline.EvalConfig{
		{Mode: pipeline.ModeStream, Ctx: cfg.NPositions},
		{Mode: pipeline.ModeStrided, Ctx: cfg.NPositions, Stride: cfg.NPositions / 4},
		{Mode: pipeline.ModeDocuments, Ctx: cfg.NPositions, Stride: cfg.NPositions / 2},
	} {
		ec.Tokens, ec.EOT, ec.VocabSize, ec.BatchTokens = toks, backendtest.EOT, cfg.VocabSize, 3*cfg.NPositions
		want, err := pipeline.Evaluate(context.Background(), backend.NewCPU(m, 0), ec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pipeline.Evaluate(context.Background(), g, ec)
		if err != nil {
			t.Fatal(err)
		}
		diff := math.Abs(got.MeanNLL - want.MeanNLL)
		t.Logf("%s %s, chunks of 7: mean NLL %.9f, cpu %.9f, |diff| %.2e", g.Name(), ec.Mode, got.MeanNLL, want.MeanNLL, diff)
		if got.Tokens != want.Tokens || !(diff <= tol) {
			t.Errorf("%s in chunks of 7: %d tokens, mean NLL %.9f; cpu %d, %.9f", ec.Mode, got.Tokens, got.MeanNLL, want.Tokens, want.MeanNLL)
		}
	}
}

func gpuConformance(t *testing.T, ad *wgpu.Adapter) {
	for _, f16 := range []bool{false, true} {
		name, cpuTol := "f32", 1e-5
		if f16 {
			name, cpuTol = "f16", 3e-4
			if !ad.HasFeature(wgpu.FeatureShaderF16) {
				t.Logf("%s lacks shader-f16: f16 not tested", ad.Info().Name)
				continue
			}
		}
		t.Run(name, func(t *testing.T) {
			goldenTol := backendtest.GoldenTol
			if f16 && usesMatrixUnits(t, ad) {
				goldenTol = matrixUnitsGoldenTol
			}
			backendtest.Suite{
				Open:      func(t *testing.T, m *model.Model) pipeline.Backend { return openTestGPU(t, ad, m, f16) },
				GoldenDir: backendtest.GoldenDir(),
				GoldenTol: goldenTol,
				// One case per method: lavapipe spends seconds on each (the whole vocabulary).
				GoldenCases: []string{"stream_ctx37", "strided_ctx64_stride24", "documents_ctx64_stride32"},
				CPUTol:      cpuTol,
				BatchTol:    1e-5,
			}.Run(t)
			t.Run("chunked", func(t *testing.T) { gpuChunked(t, ad, f16, cpuTol) })
		})
	}
}

// matrixUnitsGoldenTol bounds the mean NLL's distance from the goldens'
// float64 reference where the matrix units run the f16 matmuls: their f16
// activations cost up to 4.1e-5 on the goldens' trained tiny GPT-2 (an
// H200, 2026-12-04), against the 1e-5 the f32 arithmetic keeps; the bound is
// shaders' coop forward budget (TestGPT2Coop), 2.4 times that.
const matrixUnitsGoldenTol = 1e-4

// usesMatrixUnits reports whether a GPT-2 with f16 weights on ad multiplies
// on the matrix units, as openTestGPU opens it ($WGPU_EVAL_MATRIX_UNITS).
func usesMatrixUnits(t *testing.T, ad *wgpu.Adapter) bool {
	t.Helper()
	g := openTestGPU(t, ad, synth.Peaked(synth.TinyConfig(), 1), true)
	defer g.Close()
	return g.Model().MatrixUnitsUsed()
}

// TestMultiGPUConformance runs the conformance suite on --device all's
// backend over two devices of the test adapter (all itself picks hardware
// GPUs only), with f16 weights where the adapter has shader-f16, and checks
// that it describes itself by its parts: their precision and both adapters.
// Lavapipe is slow: the adapter's own kernel set, one golden case per method.
func TestMultiGPUConformance(t *testing.T) {
	ad := testAdapter(t)
	f16, prec, cpuTol := ad.HasFeature(wgpu.FeatureShaderF16), "f16", 3e-4
	if !f16 {
		prec, cpuTol = "f32", 1e-5
	}
	open := func(t *testing.T, m *model.Model) pipeline.Backend {
		return pipeline.NewMulti([]pipeline.Backend{openTestGPU(t, ad, m, f16), openTestGPU(t, ad, m, f16)}, nil)
	}
	t.Run("describe", func(t *testing.T) {
		b := open(t, synth.Peaked(synth.TinyConfig(), 7))
		defer b.Close()
		got := b.Describe()
		name := ad.Info().Name
		if got.Precision != prec || got.Threads != 0 || got.Device.Kind != "gpu" || got.Device.Adapter != name || got.Device.Kernels == "" {
			t.Errorf("described as %q, %d threads, device %+v; want %s weights on %s", got.Precision, got.Threads, got.Device, prec, name)
		}
		if len(got.Device.Parts) != 2 {
			t.Fatalf("%d parts described, want 2: %+v", len(got.Device.Parts), got.Device.Parts)
		}
		for i, p := range got.Device.Parts {
			if p.Kind != "gpu" || p.Adapter != name || p.Driver == "" || p.Kernels != got.Device.Kernels {
				t.Errorf("part %d: %+v, want the adapter %s and the kernels %s", i, p, name, got.Device.Kernels)
			}
		}
	})
	backendtest.Suite{
		Open:        open,
		GoldenDir:   backendtest.GoldenDir(),
		GoldenTol:   backendtest.GoldenTol,
		GoldenCases: []string{"stream_ctx37", "strided_ctx64_stride24", "documents_ctx64_stride32"},
		CPUTol:      cpuTol,
		BatchTol:    1e-5,
	}.Run(t)
}

// TestGPUKernelsEnv: an unknown $WGPU_EVAL_GPU_KERNELS is an error from
// NewGPU naming the variable, never ignored; auto gives the adapter's own set.
func TestGPUKernelsEnv(t *testing.T) {
	ad := testAdapter(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{PipelineCacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	t.Setenv(shaders.KernelsEnv, "hardwar")
	if g, err := backend.NewGPU(context.Background(), dev, m.Reader(), false, nil); err == nil || !strings.Contains(err.Error(), shaders.KernelsEnv) {
		if g != nil {
			g.Close()
		}
		t.Fatalf("%s=hardwar: error %v, want one naming the variable", shaders.KernelsEnv, err)
	}
	t.Setenv(shaders.KernelsEnv, "auto")
	g, err := backend.NewGPU(context.Background(), dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want := shaders.KernelsHardware
	if shaders.Software(ad.Info()) {
		want = shaders.KernelsSoftware
	}
	if got := g.Model().Kernels(); got != want {
		t.Errorf("auto on %s (%s): the %s kernels, want %s", ad.Info().Name, ad.Info().DeviceType, got, want)
	}
}

// TestOpenF16RangeHint: a model with a weight beyond float16's range, opened
// on a GPU with f16 weights (the default where the device has shader-f16),
// is refused with the tensor named and the way out (--precision f32), and
// opens with f32 weights.
func TestOpenF16RangeHint(t *testing.T) {
	ad := testAdapter(t)
	if !ad.HasFeature(wgpu.FeatureShaderF16) {
		t.Skipf("%s has no shader-f16: the GPU runs f32 weights", ad.Info().Name)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m := synth.Peaked(synth.TinyConfig(), 12)
	m.Weights.Layers[1].FCB[3] = 1e6
	ctx := context.Background()
	b, err := backend.Open(ctx, backend.DeviceSpec{Kind: "gpu", Index: -1}, m.Reader(), backend.Options{})
	if err == nil {
		b.Close()
		t.Fatal("f16 weights of a model with a weight of 1e6 accepted")
	}
	if !errors.Is(err, model.ErrOutsideF16) || !strings.Contains(err.Error(), "h.1.mlp.c_fc.bias") || !strings.Contains(err.Error(), "--precision f32") {
		t.Errorf("error %v: want ErrOutsideF16 naming the tensor and --precision f32", err)
	}
	b, err = backend.Open(ctx, backend.DeviceSpec{Kind: "gpu", Index: -1}, m.Reader(), backend.Options{Precision: backend.PrecisionF32})
	if err != nil {
		t.Fatalf("f32 weights: %v", err)
	}
	b.Close()
}

// TestOpenWarnsOfDamagedPipelineCache: Open on a GPU whose pipeline cache
// file (in the user cache folder) was damaged warns once, naming the file
// and why, and scores as it does with a sound cache; the file it then
// writes is used again without a warning.
func TestOpenWarnsOfDamagedPipelineCache(t *testing.T) {
	testAdapter(t) // skips (or fails, under CI) without Vulkan
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(shaders.KernelsEnv, "hardware")
	m := synth.Peaked(synth.TinyConfig(), 11)
	seqs := []model.Sequence{{Tokens: []int32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, First: 1}}
	run := func() (model.LossSums, []string) {
		t.Helper()
		var warnings []string
		b, err := backend.Open(context.Background(), backend.DeviceSpec{Kind: "gpu", Index: -1}, m.Reader(),
			backend.Options{Warn: func(msg string) {
				if strings.Contains(msg, "pipeline cache") { // not the autotuner's notices, which a hardware GPU gives
					warnings = append(warnings, msg)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		p, err := b.Submit(context.Background(), pipeline.Batch{Seqs: seqs})
		if err != nil {
			t.Fatal(err)
		}
		sums, err := p.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return sums, warnings
	}
	want, warnings := run()
	if len(warnings) != 0 {
		t.Errorf("the first run: warnings %q", warnings)
	}
	files, err := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "wgpu-eval", "pipelines", "*.bin"))
	if err != nil || len(files) != 1 {
		t.Fatalf("pipeline cache files %q (%v), want one", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(files[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, warnings := run()
	if got != want {
		t.Errorf("with the damaged cache: sums %+v, want %+v", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], files[0]) || !strings.Contains(warnings[0], "checksum does not match") {
		t.Errorf("with the damaged cache: warnings %q, want one naming the file and its checksum", warnings)
	}
	if _, warnings = run(); len(warnings) != 0 {
		t.Errorf("with the rewritten cache: warnings %q", warnings)
	}
}

// TestCloseWarnsOfUnsavedPipelineCache: where the pipeline cache cannot be
// saved (its folder would be under a regular file), the GPU backend scores,
// and Close returns nil and warns once through Options.Warn that the file
// was not saved, naming it: the run's result stands.
func TestCloseWarnsOfUnsavedPipelineCache(t *testing.T) {
	testAdapter(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	m := synth.Peaked(synth.TinyConfig(), 11)
	b, err := backend.Open(context.Background(), backend.DeviceSpec{Kind: "gpu", Index: -1}, m.Reader(), backend.Options{
		PipelineCacheDir: filepath.Join(file, "pipelines"),
		Warn: func(msg string) {
			if strings.Contains(msg, "not saved") { // not Open's (the file cannot be read either), nor the autotuner's
				warnings = append(warnings, msg)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Submit(context.Background(), pipeline.Batch{Seqs: []model.Sequence{{Tokens: []int32{3, 1, 4, 1, 5}, First: 1}}})
	if err == nil {
		_, err = p.Wait(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("before Close: warnings %q", warnings)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v, want nil", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], filepath.Join(file, "pipelines")) || !strings.Contains(warnings[0], "not saved") {
		t.Errorf("after Close: warnings %q, want one naming the file", warnings)
	}
}

// TestGPUOnVulkanImpls runs the GPU conformance suite, the per-token and
// top-K checks, the Llama family's checks (both kernel sets each) and the multi-GPU conformance once
// more on every other Vulkan implementation $WGPU_TEST_VULKAN_IMPLS lists
// (CI: SwiftShader with
// Chromium's newer validation layer, and Mesa 25's lavapipe beside Debian's),
// each in a child process that sees that implementation only, with the
// validation layer required. Each kernel set's conformance run and the
// chunked prefill of f32 weights must pass there (f16 is left out, and
// logged, where the device lacks shader-f16, as on SwiftShader).
func TestGPUOnVulkanImpls(t *testing.T) {
	var want []string
	for _, set := range []shaders.KernelSet{shaders.KernelsSoftware, shaders.KernelsHardware} {
		for _, test := range []string{"TestGPUConformance/%s/f32/chunked", "TestGPUConformance/%s", "TestPerTokenGPU/%s", "TestTopLogprobsGPU/%s", "TestGPULlama/%s"} {
			want = append(want, "--- PASS: "+fmt.Sprintf(test, set)+" (")
		}
	}
	want = append(want, "--- PASS: TestMultiGPUConformance (")
	prereq.RunOnVulkanImpls(t, "^(TestGPUConformance|TestMultiGPUConformance|TestPerTokenGPU|TestTopLogprobsGPU|TestGPULlama)$", "", 15*time.Minute, want...)
}

// noMemoryEnv turns TestNoMemoryAdapter on: TestAdaptersWithoutMemory sets
// it in its children.
const noMemoryEnv = "WGPU_TEST_NO_MEMORY"

// TestAdaptersWithoutMemory runs TestNoMemoryAdapter once per compile-only
// driver $WGPU_TEST_VULKAN_COMPILERS lists (CI: Mesa 25's RADV on null
// hardware, an AMD GPU with no memory that crashes when a device on it is
// waited for), in a child process that sees that driver only.
func TestAdaptersWithoutMemory(t *testing.T) {
	prereq.RunOnVulkanCompilers(t, noMemoryEnv, "1", "^TestNoMemoryAdapter$", 2*time.Minute, "--- PASS: TestNoMemoryAdapter")
	// Beside Debian's lavapipe, listed after the stand-in: gpu takes lavapipe.
	lvp, _ := filepath.Glob("/usr/share/vulkan/icd.d/lvp_icd.*.json")
	if len(lvp) == 0 {
		return
	}
	impls := prereq.VulkanCompilers(t)
	for i := range impls {
		impls[i] = impls[i].With(noMemoryEnv, "lavapipe")
		impls[i].Name += "+lavapipe"
		impls[i].ICD += string(filepath.ListSeparator) + lvp[0]
	}
	prereq.RunOn(t, impls, "^TestNoMemoryAdapter$", "", 2*time.Minute, "--- PASS: TestNoMemoryAdapter")
}

// TestNoMemoryAdapter: an adapter without memory is refused by gpu:N with a
// clear error, before a device is made on it, and never picked by auto (the
// CPU runs) or all.
func TestNoMemoryAdapter(t *testing.T) {
	if os.Getenv(noMemoryEnv) == "" {
		t.Skipf("runs as its parent's child, with $%s set", noMemoryEnv)
	}
	ctx := context.Background()
	m := synth.Peaked(synth.TinyConfig(), 3)
	_, err := backend.Open(ctx, backend.DeviceSpec{Kind: "gpu", Index: 0}, m.Reader(), backend.Options{})
	if err == nil || !strings.Contains(err.Error(), "reports no memory") {
		t.Fatalf("gpu:0 without memory: %v, want a refusal", err)
	}
	t.Logf("gpu:0: %v", err) // names the adapter, which the parent looks for
	b, err := backend.Open(ctx, backend.DeviceSpec{Kind: "auto"}, m.Reader(), backend.Options{})
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	defer b.Close()
	if _, ok := b.(*backend.CPU); !ok {
		t.Errorf("auto picked %s, want the CPU", b.Name())
	}
	if _, err := backend.Open(ctx, backend.DeviceSpec{Kind: "all"}, m.Reader(), backend.Options{}); err == nil ||
		!strings.Contains(err.Error(), "no hardware GPU") {
		t.Errorf("all without a GPU that has memory: %v", err)
	}
	// gpu, "the best Vulkan adapter, software ones included", is the first
	// one that can run: lavapipe where it is listed after the stand-in (it
	// was refused, the stand-in being first), else the stand-in's refusal.
	g, err := backend.Open(ctx, backend.DeviceSpec{Kind: "gpu", Index: -1}, m.Reader(), backend.Options{})
	if os.Getenv(noMemoryEnv) != "lavapipe" {
		if err == nil || !strings.Contains(err.Error(), "reports no memory") {
			t.Errorf("gpu with only an adapter without memory: %v, want a refusal", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("gpu with lavapipe after an adapter without memory: %v", err)
	}
	defer g.Close()
	if !strings.Contains(g.Name(), "llvmpipe") {
		t.Errorf("gpu picked %s, want lavapipe", g.Name())
	}
}

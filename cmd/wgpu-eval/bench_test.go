package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// benchJSON is the part of bench's JSON the tests read.
type benchJSON struct {
	Device    string `json:"device"`
	Precision string `json:"precision"`
	Ctx       int    `json:"ctx"`
	Version   string `json:"version"`
	Date      string `json:"date"`
	Kernels   string `json:"kernels"`
	Adapter   *struct {
		Name string `json:"name"`
	} `json:"adapter"`
	Pipelines []wgpu.PipelineStatistics `json:"pipelines"`
	Model     struct {
		Config struct {
			NLayer int `json:"n_layer"`
		} `json:"config"`
	} `json:"model"`
	Batches []struct {
		Batch        int       `json:"batch"`
		Tokens       int       `json:"tokens"`
		Fits         bool      `json:"fits"`
		Error        string    `json:"error"`
		Seconds      []float64 `json:"seconds"`
		TokensPerSec float64   `json:"tokens_per_second"`
		PeakDevice   uint64    `json:"peak_device_bytes"`
		Kernels      []struct {
			Kernel     string  `json:"kernel"`
			Dispatches int     `json:"dispatches"`
			GPUSeconds float64 `json:"gpu_seconds"`
		} `json:"kernels"`
		KernelTotal *struct {
			GPUSeconds float64 `json:"gpu_seconds"`
		} `json:"kernel_total"`
	} `json:"batches"`
}

// benchModelDir writes the tiny random model as safetensors and returns its folder.
func benchModelDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := synth.WriteSafetensors(dir, synth.Random(synth.TinyConfig(), 3), "F32"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runBenchJSON(t *testing.T, args ...string) benchJSON {
	t.Helper()
	out, stderr, err := cli(t, "", append([]string{"bench", "--quiet", "--runs", "1", "--warmup", "0", "--json", "-"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	var r benchJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	if !strings.HasPrefix(out, "{\n  \"format\": \"wgpu-eval bench\",\n  \"format_version\": 1,\n  \"tool\": \"wgpu-eval\",") {
		t.Errorf("bench's JSON does not start with its mark: %.100s", out)
	}
	return r
}

// checkBatches checks one entry per size, each fitting, with batch*(ctx-1)
// scored tokens and a positive speed (never more than that: timings vary).
func checkBatches(t *testing.T, r benchJSON, sizes ...int) {
	t.Helper()
	if len(r.Batches) != len(sizes) {
		t.Fatalf("%d batch entries, want %d", len(r.Batches), len(sizes))
	}
	for i, b := range r.Batches {
		if b.Batch != sizes[i] || !b.Fits {
			t.Errorf("entry %d: batch %d fits %v, want batch %d that fits", i, b.Batch, b.Fits, sizes[i])
		}
		if want := b.Batch * (r.Ctx - 1); b.Tokens != want {
			t.Errorf("batch %d: %d tokens, want %d", b.Batch, b.Tokens, want)
		}
		if !(b.TokensPerSec > 0) || len(b.Seconds) != 1 {
			t.Errorf("batch %d: %v tokens/s from runs %v", b.Batch, b.TokensPerSec, b.Seconds)
		}
	}
}

// TestBenchCPU benchmarks the tiny model on the CPU and checks the JSON.
func TestBenchCPU(t *testing.T) {
	isolate(t)
	dir := benchModelDir(t)
	r := runBenchJSON(t, "--model", dir, "--device", "cpu", "--batch", "1,2")
	if r.Device != "cpu" || r.Adapter != nil || r.Precision != "f32" {
		t.Errorf("device %q adapter %v precision %q, want cpu, none, f32", r.Device, r.Adapter, r.Precision)
	}
	if r.Ctx != synth.TinyConfig().NPositions || r.Model.Config.NLayer != synth.TinyConfig().NLayer {
		t.Errorf("ctx %d, %d layers: want the tiny model's %d positions and %d layers", r.Ctx, r.Model.Config.NLayer, synth.TinyConfig().NPositions, synth.TinyConfig().NLayer)
	}
	if r.Version == "" || r.Date == "" {
		t.Errorf("version %q date %q: want both", r.Version, r.Date)
	}
	checkBatches(t, r, 1, 2)
	// The CPU's kernel set is in the JSON, as eval's provenance has it (it was there for GPUs only).
	if want := model.NewCPU(synth.Random(synth.TinyConfig(), 1), 1).Kernels(); r.Kernels != want {
		t.Errorf("kernels %q, want the CPU's %q", r.Kernels, want)
	}

	// A shape name needs no file; the human output names the device and every size.
	out, stderr, err := cli(t, "", "bench", "--quiet", "--model", "tiny", "--device", "cpu", "--ctx", "8", "--batch", "3", "--runs", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "device cpu") || !strings.Contains(out, "tiny shape, random weights") || !strings.Contains(out, "\n     3 ") {
		t.Errorf("human output lacks the device, the shape or the batch line:\n%s", out)
	}
}

// TestDefaultBenchBatches: without --batch, bench times 1, 4 and 8 windows
// (the CPU, a CPU implementation of Vulkan); on a hardware GPU 1, 8 and the
// batch eval runs there (its token budget over the width), never a size
// past that, and at least one window.
func TestDefaultBenchBatches(t *testing.T) {
	for _, c := range []struct {
		hw          bool
		tokens, ctx int
		want        []int
	}{
		{false, 65536, 1024, []int{1, 4, 8}},
		{false, 0, 64, []int{1, 4, 8}},
		{true, 65536, 1024, []int{1, 8, 64}},
		{true, 65536, 64, []int{1, 8, 1024}},
		{true, 65536, 16384, []int{1, 4}},    // a long context: eval's batches hold 4 windows
		{true, 20000, 1024, []int{1, 8, 19}}, // a small GPU: what its memory holds
		{true, 8192, 1024, []int{1, 8}},      // eval's batch is 8 windows: not twice
		{true, 1000, 1024, []int{1}},         // one window, even past the budget
	} {
		if got := defaultBenchBatches(c.hw, c.tokens, c.ctx); !slices.Equal(got, c.want) {
			t.Errorf("hardware GPU %v, batch tokens %d, width %d: %v, want %v", c.hw, c.tokens, c.ctx, got, c.want)
		}
	}
}

// TestBenchUsage checks that bad flags are usage errors (exit status 2).
func TestBenchUsage(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"--batch", "0"},
		{"--batch", "x"},
		{"--batch", "1,,2"},
		{"--runs", "0"},
		{"--warmup", "-1"},
		{"--device", "tpu"},
		{"--precision", "f8"},
		{"--ctx", "1"},
		{"--ctx", "65"},
		{"stray"},
	} {
		_, _, err := cli(t, "", append([]string{"bench", "--quiet", "--model", "tiny", "--device", "cpu"}, args...)...)
		if code := exitCode(err); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, code, err)
		}
	}
	if _, _, err := cli(t, "", "bench", "--help"); exitCode(err) != 0 {
		t.Errorf("--help: %v", err)
	}
}

// TestBenchGPU benchmarks the tiny model on the first Vulkan adapter (lavapipe
// in CI) in f32 and checks the kernel profile where the adapter has
// timestamps (lavapipe has).
func TestBenchGPU(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	dir := benchModelDir(t)
	r := runBenchJSON(t, "--model", dir, "--device", "gpu:0", "--precision", "f32", "--ctx", "16", "--batch", "1,2")
	if r.Adapter == nil || r.Adapter.Name != as[0].Name || !strings.Contains(r.Device, as[0].Name) || r.Precision != "f32" {
		t.Fatalf("device %q adapter %v precision %q: want %s in f32", r.Device, r.Adapter, r.Precision, as[0].Name)
	}
	checkBatches(t, r, 1, 2)
	for _, b := range r.Batches {
		if b.PeakDevice == 0 {
			t.Errorf("batch %d: no peak device memory", b.Batch)
		}
		if !as[0].Features.TimestampQuery {
			continue
		}
		got := map[string]bool{}
		for _, k := range b.Kernels {
			if k.Dispatches < 1 || !(k.GPUSeconds > 0) {
				t.Errorf("batch %d: kernel %s: %d dispatches, %v s", b.Batch, k.Kernel, k.Dispatches, k.GPUSeconds)
			}
			name := strings.Fields(k.Kernel)[0] // matmuls carry their shape: "matmul K16 N48"
			got[strings.SplitN(name, "_", 2)[0]] = true
			got[name] = true
		}
		for _, want := range []string{"embed", "layernorm", "matmul", "attention", "lmhead_loss", "nll_combine"} {
			if !got[want] {
				t.Errorf("batch %d: no kernel %s in the profile %+v", b.Batch, want, b.Kernels)
			}
		}
		if b.KernelTotal == nil || !(b.KernelTotal.GPUSeconds > 0) {
			t.Errorf("batch %d: kernel total %+v", b.Batch, b.KernelTotal)
		}
	}
}

// TestBenchPipelineStats: --pipeline-stats lists every pipeline the run
// compiled with the driver's statistics where the driver reports them
// (NVIDIA's), the forward pass's kernels among them; elsewhere (the CPU
// drivers) it warns, naming the extension, and the run goes on without them.
func TestBenchPipelineStats(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	dir := benchModelDir(t)
	args := []string{"bench", "--runs", "1", "--warmup", "0", "--json", "-", "--model", dir, "--device", "gpu:0",
		"--precision", "f32", "--ctx", "16", "--batch", "2", "--pipeline-stats"}
	out, stderr, err := cli(t, "", args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r benchJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	checkBatches(t, r, 2)
	// --warmup 0 on a GPU times the compiles: said (and not on the CPU, whose README example uses it).
	if !strings.Contains(stderr, "warning: --warmup 0: the first timed batch compiles the pipelines") {
		t.Errorf("no --warmup 0 warning on a GPU in %q", stderr)
	}
	if _, cpuErr, err := cli(t, "", "bench", "--runs", "1", "--warmup", "0", "--model", dir, "--device", "cpu", "--ctx", "16", "--batch", "1"); err != nil || strings.Contains(cpuErr, "--warmup 0") {
		t.Errorf("the CPU: %v, %q", err, cpuErr)
	}
	if !as[0].Features.PipelineStatistics {
		if !strings.Contains(stderr, "no pipeline statistics (no VK_KHR_pipeline_executable_properties)") || len(r.Pipelines) != 0 {
			t.Errorf("%s without the extension: pipelines %v, stderr %q", as[0].Name, r.Pipelines, stderr)
		}
		return
	}
	labels := map[string]bool{}
	for _, p := range r.Pipelines {
		labels[strings.SplitN(p.Label, "{", 2)[0]] = true
		if p.Err != "" || len(p.Executables) == 0 || len(p.Executables[0].Statistics) == 0 {
			t.Errorf("pipeline %+v", p)
		}
	}
	for _, want := range []string{"embed.wgsl", "lmhead_loss_shared.wgsl"} {
		if !labels[want] {
			t.Errorf("no pipeline %s among %v", want, labels)
		}
	}
	if !strings.Contains(stderr, "pipeline statistics (the driver's") {
		t.Errorf("the text lacks the statistics: %q", stderr)
	}
}

// TestPrintBenchPipelines: one line per pipeline, its label, then every
// statistic as name=value, and the reason where the driver gave none.
func TestPrintBenchPipelines(t *testing.T) {
	var b bytes.Buffer
	printBenchPipelines(&b, []wgpu.PipelineStatistics{
		{Label: "matmul_coop.wgsl{BK=32}", Executables: []wgpu.PipelineExecutable{{Name: "compute", Statistics: []wgpu.PipelineStatistic{
			{Name: "Register Count", Value: uint64(232)}, {Name: "Spills", Value: false}}}}},
		{Label: "embed.wgsl", Err: "vkGetPipelineExecutableStatisticsKHR: out of host memory"},
	})
	want := "\npipeline statistics (the driver's, 2 pipelines in the order compiled):\n" +
		"matmul_coop.wgsl{BK=32}: Register Count=232, Spills=false\n" +
		"embed.wgsl: error: vkGetPipelineExecutableStatisticsKHR: out of host memory\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBenchSaysWhatItWaitsFor: bench's model from a hub that does not answer
// is reported on stderr as eval reports it (waiting for the host to answer
// for config.json), while bench waits; --quiet says nothing.
func TestBenchSaysWhatItWaitsFor(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer s.Close()
	defer close(release)
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("TRANSFORMERS_OFFLINE", "")
	benchWaitInterval = 10 * time.Millisecond
	defer func() { benchWaitInterval = 0 }()
	host := strings.TrimPrefix(s.URL, "http://")
	for _, quiet := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		var stderr lockedBuffer
		args := []string{"--model", "org/model", "--device", "cpu", "--batch", "1"}
		if quiet {
			args = append(args, "--quiet")
		}
		errc := make(chan error, 1)
		go func() { errc <- runBench(ctx, args, io.Discard, &stderr) }()
		deadline := time.Now().Add(20 * time.Second)
		for !quiet && !strings.Contains(stderr.String(), "to answer") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if quiet {
			time.Sleep(200 * time.Millisecond) // twenty wait intervals
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("quiet %v: err = %v, want context.Canceled", quiet, err)
		}
		out := stderr.String()
		if quiet && strings.Contains(out, "waiting") {
			t.Errorf("--quiet: stderr %q", out)
		}
		if !quiet && (!strings.Contains(out, "waiting") || !strings.Contains(out, host+" to answer for config.json")) {
			t.Errorf("stderr %q, want a report of waiting for %s and config.json", out, host)
		}
	}
}

// cancelAt is a stderr that cancels a run when a line containing mark is written.
type cancelAt struct {
	mark   string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelAt) Write(p []byte) (int, error) {
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.mark) {
		c.cancel()
	}
	return len(p), nil
}

// TestBenchJSONKeepsWhatItMeasured: --json FILE is rewritten after every batch
// size, so a run stopped during the second size leaves the first in the file.
func TestBenchJSONKeepsWhatItMeasured(t *testing.T) {
	isolate(t)
	path := filepath.Join(t.TempDir(), "bench.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelAt{mark: "batch 2:", cancel: cancel}
	var out bytes.Buffer
	err := run(ctx, []string{"bench", "--model", "tiny", "--device", "cpu", "--ctx", "8", "--batch", "1,2", "--runs", "1", "--warmup", "0", "--json", path}, strings.NewReader(""), &out, stderr)
	if err == nil {
		t.Fatalf("the run was cancelled during batch 2 but succeeded:\n%s", stderr.buf.String())
	}
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatalf("after %v: %v", err, rerr)
	}
	var r benchJSON
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	checkBatches(t, r, 1)
}

// TestPeakOf: known GPUs are found by their Vulkan names (the H200's as its
// driver reported it on 2026-12-04), the most specific entry first; CPU
// implementations and unknown GPUs have no peak.
func TestPeakOf(t *testing.T) {
	for _, c := range []struct {
		name, typ, want string
	}{
		{"NVIDIA H200", "discrete-gpu", "NVIDIA H200 SXM"},
		{"NVIDIA H100 PCIe", "discrete-gpu", "NVIDIA H100 PCIe"},
		{"NVIDIA H100 80GB HBM3", "discrete-gpu", "NVIDIA H100 SXM"},
		{"NVIDIA GeForce RTX 2080 Ti", "discrete-gpu", "NVIDIA GeForce RTX 2080 Ti"},
		{"llvmpipe (LLVM 15.0.6, 256 bits)", "cpu", ""},
		{"SwiftShader Device (Subzero)", "cpu", ""},
		{"Intel(R) Arc(tm) A770 Graphics (DG2)", "discrete-gpu", ""},
		// Matched by whole words, and a variant of a listed part is not that part
		// (they were: the L40 as the L4, a third of its rates; the RTX A1000 as the A100).
		{"NVIDIA L40", "discrete-gpu", ""},
		{"NVIDIA L40S", "discrete-gpu", "NVIDIA L40S"},
		{"NVIDIA L4", "discrete-gpu", "NVIDIA L4"},
		{"NVIDIA RTX A1000 Laptop GPU", "discrete-gpu", ""},
		{"NVIDIA A100-SXM4-80GB", "discrete-gpu", "NVIDIA A100 80GB SXM"},
		{"NVIDIA A100-PCIE-40GB", "discrete-gpu", ""},
		{"NVIDIA A10", "discrete-gpu", "NVIDIA A10"},
		{"NVIDIA H100 NVL", "discrete-gpu", ""},
		{"NVIDIA H200 NVL", "discrete-gpu", ""},
		{"NVIDIA GeForce RTX 4090 Laptop GPU", "discrete-gpu", ""},
		{"NVIDIA GeForce RTX 3090 Ti", "discrete-gpu", ""},
		{"NVIDIA GeForce RTX 3090", "discrete-gpu", "NVIDIA GeForce RTX 3090"},
		{"Tesla T4", "discrete-gpu", "NVIDIA T4"},
		{"AMD Radeon RX 7900 XTX (RADV NAVI31)", "discrete-gpu", "AMD Radeon RX 7900 XTX"},
		{"AMD Instinct MI300X (RADV GFX942)", "discrete-gpu", "AMD Instinct MI300X"},
	} {
		p, ok := peakOf(&wgpu.AdapterInfo{Name: c.name, DeviceType: c.typ})
		if ok != (c.want != "") || p.Name != c.want {
			t.Errorf("%q: %+v, %v; want %q", c.name, p, ok, c.want)
		}
		if ok && (p.TFlops <= 0 || p.GBps <= 0) {
			t.Errorf("%q: peak %+v", c.name, p)
		}
	}
}

// TestPrintBenchKernelsPeaks: in the kernel table, an ordinary kernel's
// rate is set against the f32 FMA peak and a matrix-unit kernel's against
// the f16 matrix peak, or shown as "-" on a GPU whose matrix peak is not
// known; the total's is the time the kernels' FLOPs need at their own peaks
// over the GPU time (before, all FLOPs against the f32 peak: 149%); every
// known GPU with a matrix peak has it above its f32 peak.
func TestPrintBenchKernelsPeaks(t *testing.T) {
	total := benchKernel{Kernel: "total", Dispatches: 2, GPUSeconds: 2e-3, Share: 1, GFlops: 100000}
	b := benchBatch{Batch: 64, Kernels: []benchKernel{
		{Kernel: "layernorm_rows", Dispatches: 1, GPUSeconds: 1e-3, Share: 0.3, GFlops: 6700, GBps: 2400},
		{Kernel: "matmul_coop[16x16x16 2x2] 4x4/BK32/EC1 K768 N2304", Dispatches: 1, GPUSeconds: 1e-3, Share: 0.7, GFlops: 400000, GBps: 100},
	}, KernelTotal: &total}
	for _, c := range []struct {
		peak              devicePeak
		ln, matmul, total string
	}{
		// total: (6.7 GFLOP / 67 TFLOP/s + 400 GFLOP / 989.5 TFLOP/s) / 2 ms = 25.2%
		{devicePeak{Name: "H", TFlops: 67, TensorTFlops: 989.5, GBps: 4800}, " 10.0% ", " 40.4% ", " 25.2% "}, // 597.0% of the f32 peak
		{devicePeak{Name: "L", TFlops: 67, GBps: 4800}, " 10.0% ", "      - ", "      - "},
	} {
		var out strings.Builder
		printBenchKernels(&out, &benchResult{Peak: &c.peak, Batches: []benchBatch{b}})
		found := 0
		for _, l := range strings.Split(out.String(), "\n") {
			switch {
			case strings.HasPrefix(l, "layernorm_rows "):
				found++
				if !strings.Contains(l, c.ln) {
					t.Errorf("peak %+v: %q, want %q", c.peak, l, c.ln)
				}
			case strings.HasPrefix(l, "matmul_coop"):
				found++
				if !strings.Contains(l, c.matmul) {
					t.Errorf("peak %+v: %q, want %q", c.peak, l, c.matmul)
				}
			case strings.HasPrefix(l, "total "):
				found++
				if !strings.Contains(l, c.total) {
					t.Errorf("peak %+v: %q, want %q", c.peak, l, c.total)
				}
			}
		}
		if found != 3 {
			t.Errorf("peak %+v: %d of the 3 lines in\n%s", c.peak, found, out.String())
		}
	}
	for _, k := range knownPeaks {
		if k.peak.TensorTFlops != 0 && k.peak.TensorTFlops <= k.peak.TFlops {
			t.Errorf("%s: matrix peak %v not above the f32 peak %v", k.peak.Name, k.peak.TensorTFlops, k.peak.TFlops)
		}
	}
}

// TestBenchTune: --tune with the hardware kernels times every matmul tile
// candidate for the model's four weight-matmul shapes and reports the choice
// of each in the JSON, the fastest of its candidates.
func TestBenchTune(t *testing.T) {
	isolate(t)
	requireVulkan(t)
	t.Setenv("WGPU_EVAL_GPU_KERNELS", "hardware")
	var r struct {
		Kernels string `json:"kernels"`
		Tuning  []struct {
			Shape      string             `json:"shape"`
			Tiles      map[string]float64 `json:"tiles"`
			Nanos      uint64             `json:"nanos"`
			Candidates []struct {
				Nanos uint64 `json:"nanos"`
				Err   string `json:"error"`
			} `json:"candidates"`
		} `json:"tuning"`
	}
	out, stderr, err := cli(t, "", "bench", "--quiet", "--model", "tiny", "--device", "gpu", "--precision", "f32", "--ctx", "16",
		"--batch", "2", "--runs", "1", "--tune", "--json", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Kernels != "hardware" || len(r.Tuning) != 4 {
		t.Fatalf("kernels %q, %d shapes tuned: %s", r.Kernels, len(r.Tuning), out)
	}
	for _, c := range r.Tuning {
		if c.Tiles["BM"] == 0 || c.Nanos == 0 || len(c.Candidates) < 2 {
			t.Errorf("%s: %+v", c.Shape, c)
		}
		for _, x := range c.Candidates {
			if x.Err == "" && x.Nanos < c.Nanos {
				t.Errorf("%s: chose %d ns, a candidate took %d", c.Shape, c.Nanos, x.Nanos)
			}
		}
	}
}

// TestBenchTuneSoftwareKernelsSays: --tune where the software kernel set runs
// (its matmuls have no tiles to time) says so on stderr instead of doing
// nothing silently, and names the way to tune there.
func TestBenchTuneSoftwareKernelsSays(t *testing.T) {
	isolate(t)
	requireVulkan(t)
	t.Setenv("WGPU_EVAL_GPU_KERNELS", "software")
	_, stderr, err := cli(t, "", "bench", "--model", "tiny", "--device", "gpu", "--precision", "f32", "--ctx", "16",
		"--batch", "1", "--runs", "1", "--warmup", "0", "--tune")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "warning: --tune") || !strings.Contains(stderr, "WGPU_EVAL_GPU_KERNELS=hardware") {
		t.Errorf("no warning that --tune tunes nothing with the software kernels; stderr:\n%s", stderr)
	}
}

// A --batch whose windows' token ids alone exceed the memory available is a
// size that does not fit, said in its row and the JSON, before anything is
// allocated for it; the sizes that fit are timed.
func TestBenchBatchOverHostMemory(t *testing.T) {
	dir := benchModelDir(t)
	t.Setenv("WGPU_EVAL_MEMORY_AVAILABLE", "200000000") // 200 MB: batch 1,000,000 at ctx 64 needs 256 MB of ids
	r := runBenchJSON(t, "--device", "cpu", "--model", dir, "--ctx", "64", "--batch", "1,1000000")
	if len(r.Batches) != 2 {
		t.Fatalf("%d batch entries, want 2", len(r.Batches))
	}
	if b := r.Batches[0]; !b.Fits || !(b.TokensPerSec > 0) {
		t.Errorf("batch 1: fits %v, %v tokens/s", b.Fits, b.TokensPerSec)
	}
	b := r.Batches[1]
	if b.Fits || !strings.Contains(b.Error, "token ids of 1000000 windows of 64") || !strings.Contains(b.Error, "256.0 MB") {
		t.Errorf("batch 1000000: fits %v, error %q", b.Fits, b.Error)
	}
}

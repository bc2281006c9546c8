package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// benchProfileJSON is the part of bench's JSON the profile tests read.
type benchProfileJSON struct {
	Batches []struct {
		Batch   int `json:"batch"`
		Kernels []struct {
			Kernel     string  `json:"kernel"`
			Dispatches int     `json:"dispatches"`
			Flops      float64 `json:"flops"`
		} `json:"kernels"`
		KernelTotal *struct {
			Dispatches int `json:"dispatches"`
		} `json:"kernel_total"`
	} `json:"batches"`
}

// TestBenchProfilesManyDispatches: a profiled batch of more dispatches than
// one query set holds (2048: 4096 timestamps) is profiled whole. A GPT-2 of
// 12 layers scored in chunks of 2 positions over a 64-token window is 32
// chunks of 98 dispatches (the embedding, 8 a layer with the software
// kernels, the final LayerNorm), then the LM head and the loss: 3,138, where
// bench used to fail after timing the batch ("query set count 6280 not in
// 1..4096"), as GPT-2 124M at --ctx 1024 --chunk 32 does. The work is
// counted by hand from the shape: chunked attention does the causal half of
// the whole window's, 4*C*T(T+1)/2 a layer.
func TestBenchProfilesManyDispatches(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	if !as[0].Features.TimestampQuery {
		t.Skipf("%s has no timestamp queries", as[0].Name)
	}
	t.Setenv("WGPU_EVAL_GPU_KERNELS", "software") // kv_write is a dispatch of its own: 8 a layer
	const layers, C, T, chunk, vocab = 12, 16, 64, 2, 512
	cfg := model.Config{NLayer: layers, NHead: 2, NEmbd: C, NPositions: T, VocabSize: vocab, LayerNormEps: 1e-5}
	dir := filepath.Join(t.TempDir(), "deep")
	if err := synth.WriteSafetensors(dir, synth.Random(cfg, 1), "F32"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := cli(t, "", "bench", "--quiet", "--runs", "1", "--warmup", "0", "--json", "-", "--model", dir,
		"--device", "gpu:0", "--precision", "f32", "--ctx", "64", "--chunk", "2", "--batch", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r benchProfileJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if len(r.Batches) != 1 || r.Batches[0].KernelTotal == nil {
		t.Fatalf("no profile: %s", out)
	}
	b := r.Batches[0]
	chunks := T / chunk
	if want := chunks*(1+8*layers+1) + 2; b.KernelTotal.Dispatches != want {
		t.Errorf("%d dispatches profiled, want %d", b.KernelTotal.Dispatches, want)
	}
	want := map[string]struct {
		dispatches int
		flops      float64
	}{
		"attention":      {layers * chunks, layers * 4 * C * T * (T + 1) / 2},
		"matmul K16 N48": {layers * chunks, layers * 2 * T * 3 * C * C},
		"lmhead_loss":    {1, 2 * (T - 1) * vocab * C},
	}
	for _, k := range b.Kernels {
		w, ok := want[k.Kernel]
		if !ok {
			continue
		}
		delete(want, k.Kernel)
		if k.Dispatches != w.dispatches || k.Flops != w.flops {
			t.Errorf("%s: %d dispatches, %v flops; want %d, %v", k.Kernel, k.Dispatches, k.Flops, w.dispatches, w.flops)
		}
	}
	for name := range want {
		t.Errorf("no kernel %q in the profile %+v", name, b.Kernels)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestBenchJSONToAPipeOnce: --json naming a pipe (/dev/fd/N, what
// --json >(jq .) passes) or a FIFO gets one JSON document with every size,
// at the end. Before, the JSON was written after every size as to a file:
// the reader got three documents in a row for two sizes (not JSON to a
// parser that reads one), and a FIFO whose reader stopped at the first
// document's end (cat) left bench blocked in the second write.
func TestBenchJSONToAPipeOnce(t *testing.T) {
	isolate(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	_, stderr, err := cli(t, "", "bench", "--quiet", "--model", "tiny", "--device", "cpu", "--ctx", "8", "--batch", "1,2",
		"--runs", "1", "--warmup", "0", "--json", fmt.Sprintf("/dev/fd/%d", w.Fd()))
	w.Close()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b := <-got
	dec := json.NewDecoder(bytes.NewReader(b))
	var docs []benchJSON
	for dec.More() {
		var d benchJSON
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("%v in %s", err, b)
		}
		docs = append(docs, d)
	}
	if len(docs) != 1 {
		t.Fatalf("%d JSON documents through the pipe, want 1:\n%s", len(docs), b)
	}
	checkBatches(t, docs[0], 1, 2)
}

// TestBenchChecksJSONFirst: a --json path that cannot be written (its folder
// missing, a folder) is a usage error before the model is loaded or any
// size timed; it was found only when the first size's JSON was written,
// after the loading, the autotuning and the timing.
func TestBenchChecksJSONFirst(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "missing", "b.json"), dir} {
		out, stderr, err := cli(t, "", "bench", "--model", "tiny", "--device", "cpu", "--ctx", "8", "--batch", "1",
			"--runs", "1", "--json", path)
		if code := exitCode(err); code != 2 || !strings.Contains(fmt.Sprint(err), "--json") || strings.Contains(out, "batch") || stderr != "" {
			t.Errorf("--json %s: exit %d (%v); stdout %q, stderr %q: want a usage error naming --json before any timing", path, code, err, out, stderr)
		}
	}
}

// TestBenchInterruptedJSONToStdout: with --json -, a run stopped during its
// second size writes the first size's figures to stdout (before, nothing: the
// figures of a stopped run went only to a --json file).
func TestBenchInterruptedJSONToStdout(t *testing.T) {
	isolate(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelAt{mark: "batch 2:", cancel: cancel}
	var out bytes.Buffer
	err := run(ctx, []string{"bench", "--model", "tiny", "--device", "cpu", "--ctx", "8", "--batch", "1,2", "--runs", "1", "--warmup", "0", "--json", "-"}, strings.NewReader(""), &out, stderr)
	if err == nil {
		t.Fatalf("the run was cancelled during batch 2 but succeeded:\n%s", stderr.buf.String())
	}
	var r benchJSON
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("stdout after %v: %v in %q", err, err, out.String())
	}
	checkBatches(t, r, 1)
}

// TestBenchPeakIsEachSizes: a size's peak device memory is its own, whatever
// sizes came before it: one window timed after four windows peaks where one
// window timed alone does. Before, the four windows' activation memory,
// which the GPU model keeps and only grows, was counted in the one window's
// peak (on lavapipe 2.7 MiB instead of 1.8 for the tiny shape at ctx 64).
func TestBenchPeakIsEachSizes(t *testing.T) {
	isolate(t)
	requireVulkan(t)
	peaks := func(sizes string) map[int]uint64 {
		r := runBenchJSON(t, "--model", "tiny", "--device", "gpu:0", "--precision", "f32", "--ctx", "64", "--batch", sizes, "--profile=false")
		m := map[int]uint64{}
		for _, b := range r.Batches {
			m[b.Batch] = b.PeakDevice
		}
		return m
	}
	after, alone := peaks("4,1"), peaks("1")
	if after[1] == 0 || after[1] != alone[1] || after[4] <= alone[1] {
		t.Errorf("peak device bytes: one window after four %d (four: %d), one window alone %d: want the one window's the same both ways, under the four's",
			after[1], after[4], alone[1])
	}
}

// TestBenchProvenance: bench's JSON names the build (its commit, as
// wgpueval.Version has it, and the Go release), the WGPU_EVAL_* variables
// that change what runs, and on the CPU the processor; before, it had only
// "version": "devel" (the H200 figures of 2026-12-04 say no more), and a
// run with WGPU_EVAL_WORKGROUP_INIT=zero could not be told from one without.
func TestBenchProvenance(t *testing.T) {
	isolate(t)
	t.Setenv("WGPU_EVAL_WORKGROUP_INIT", "zero")
	out, stderr, err := cli(t, "", "bench", "--quiet", "--model", "tiny", "--device", "cpu", "--ctx", "8", "--batch", "1",
		"--runs", "1", "--warmup", "0", "--json", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r struct {
		Commit      *string           `json:"commit"`
		GoVersion   string            `json:"go_version"`
		Environment map[string]string `json:"environment"`
		CPUModel    string            `json:"cpu_model"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if _, commit := wgpueval.Version(); r.Commit == nil || *r.Commit != commit {
		t.Errorf("commit %v, want %q", r.Commit, commit)
	}
	if r.GoVersion != runtime.Version() {
		t.Errorf("go_version %q, want %q", r.GoVersion, runtime.Version())
	}
	if r.Environment["WGPU_EVAL_WORKGROUP_INIT"] != "zero" {
		t.Errorf("environment %v, want WGPU_EVAL_WORKGROUP_INIT=zero in it", r.Environment)
	}
	if _, err := os.Stat("/proc/cpuinfo"); err == nil && r.CPUModel == "" {
		t.Errorf("no cpu_model on a machine with /proc/cpuinfo")
	}
}

// TestBenchInterruptedPrintsKernels: a GPU run stopped during its second size
// prints the first size's kernel table after its row, as a whole run does
// (before, the table came only at the end of a whole run).
func TestBenchInterruptedPrintsKernels(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	if !as[0].Features.TimestampQuery {
		t.Skipf("%s has no timestamps: no kernel table", as[0].Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelAt{mark: "batch 2:", cancel: cancel}
	var out bytes.Buffer
	err := run(ctx, []string{"bench", "--model", "tiny", "--device", "gpu:0", "--precision", "f32", "--ctx", "8", "--batch", "1,2", "--runs", "1"},
		strings.NewReader(""), &out, stderr)
	if err == nil {
		t.Fatalf("the run was cancelled during batch 2 but succeeded:\n%s", stderr.buf.String())
	}
	if got := out.String(); !strings.Contains(got, "GPU time per kernel, batch 1 ") || !strings.Contains(got, "lmhead_loss") {
		t.Errorf("stdout of the stopped run has no kernel table of batch 1:\n%s", got)
	}
}

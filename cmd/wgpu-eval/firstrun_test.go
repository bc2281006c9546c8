package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestHelpGoesToStdout: every command's --help prints to stdout and exits 0;
// with no command named the subcommands are listed; booleans read --quiet.
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"eval", "--help"}, {"devices", "--help"}, {"bench", "--help"},
		{"version", "--help"}, {"help", "eval"}, {"generate", "--help"}, {"merge", "--help"}, {"compare", "--help"},
		{"export", "--help"}, {"tokenize", "--help"}, {"help", "merge"}, {"help", "compare"}} {
		stdout, stderr, err := cli(t, "", args...)
		if exitCode(err) != 0 || stderr != "" || !strings.Contains(stdout, "Usage: wgpu-eval") {
			t.Errorf("%q: exit %d (%v), stdout %q, stderr %q", args, exitCode(err), err, stdout, stderr)
		}
		if strings.Contains(stdout, "[=true|false]") {
			t.Errorf("%q: a boolean flag reads [=true|false]:\n%s", args, stdout)
		}
	}
	stdout, _, _ := cli(t, "", "--help")
	for _, cmd := range []string{"devices", "bench", "merge", "version"} {
		if !strings.Contains(stdout, "wgpu-eval "+cmd) {
			t.Errorf("top-level --help does not list %s:\n%s", cmd, stdout)
		}
	}
	if !strings.Contains(stdout, "  -q, --quiet ") {
		t.Errorf("--quiet not listed plainly:\n%s", stdout)
	}
	if stdout, _, _ := cli(t, "", "version", "--help"); strings.HasPrefix(stdout, "wgpu-eval devel") {
		t.Errorf("version --help printed the version: %q", stdout)
	}
}

// TestOutputFolderCheckedFirst: --json or --checkpoint into a folder that does
// not exist fails before the evaluation (nothing on stdout), as a usage error.
func TestOutputFolderCheckedFirst(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	missing := filepath.Join(t.TempDir(), "no-such-folder", "r.json")
	for _, flag := range []string{"--json", "--checkpoint"} {
		stdout, _, err := cli(t, "some text to score, twice over", "--model", dir, "--data", "-", flag, missing, "--quiet")
		if err == nil || !strings.Contains(err.Error(), "no-such-folder") || exitCode(err) != 2 || stdout != "" {
			t.Errorf("%s into a missing folder: err %v (exit %d), stdout %q", flag, err, exitCode(err), stdout)
		}
	}
}

// TestWarningsAndSummaryWording: --threads above the cores is warned about;
// the summary says "1 token", names stdin, and gives the stride of strided
// runs.
func TestWarningsAndSummaryWording(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	threads := strconv.Itoa(runtime.NumCPU() + 1)
	stdout, stderr, err := cli(t, "a b", "--model", dir, "--data", "-", "--threads", threads, "--no-token-cache")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "--threads "+threads+" is more than") {
		t.Errorf("warnings missing:\n%s", stderr)
	}
	if !strings.Contains(stdout, " on stdin ") || !strings.Contains(stdout, "  1 token  ") {
		t.Errorf("summary %q: want stdin named and \"1 token\"", stdout)
	}

	text := strings.Repeat("To be, or not to be, that is the question. ", 8)
	stdout, stderr, err = cli(t, text, "--model", dir, "--data", "-", "--mode", "strided", "--ctx", "32", "--stride", "16", "--quiet", "--no-token-cache")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "(strided, ctx 32, stride 16)") || !strings.Contains(stdout, " tokens ") {
		t.Errorf("strided summary %q", stdout)
	}
	if stderr != "" {
		t.Errorf("--quiet run wrote %q", stderr)
	}
}

// The CPU's summary names the bf16 mode, and only it.
func TestFormatSummaryNamesBF16(t *testing.T) {
	for prec, want := range map[string]string{"bf16": "cpu x2 (bf16)", "f32": "cpu x2"} {
		r := &pipeline.Result{Model: "m", Data: "x.txt", Mode: "stream", Tokens: 2, Device: "cpu", Config: &pipeline.RunConfig{Precision: prec, Threads: 2}}
		if got := formatSummary(r, 1); !strings.HasSuffix(got, "  "+want) {
			t.Errorf("%s: %q, want it to end in %q", prec, got, want)
		}
	}
}

// TestFormatSummaryStrideOfShard: a strided shard's summary names its stride
// and its shard, as the whole run's names its stride.
func TestFormatSummaryStrideOfShard(t *testing.T) {
	r := &pipeline.Result{Model: "m", Data: "x.txt", Mode: "strided", Ctx: 16, Tokens: 2, Device: "cpu",
		Config: &pipeline.RunConfig{Stride: 5}, Shard: &pipeline.Shard{Index: 1, Count: 3}}
	if got := formatSummary(r, 1); !strings.Contains(got, "(strided, ctx 16, stride 5, shard 1/3)") {
		t.Errorf("%q: want the stride and the shard", got)
	}
}

// TestFormatSummaryNamesStdin covers the data names the summary rewrites.
func TestFormatSummaryNamesStdin(t *testing.T) {
	for data, want := range map[string]string{"-": "stdin", "-:val": "stdin:val", "x.txt": "x.txt"} {
		got := formatSummary(&pipeline.Result{Model: "m", Data: data, Mode: "stream", Tokens: 2, Device: "cpu"}, 1)
		if !strings.Contains(got, " on "+want+" ") {
			t.Errorf("%s: %q", data, got)
		}
	}
}

// TestOptionsNotIgnored: options that would not do what they say are refused
// with a usage error (status 2) naming them, before anything is loaded:
// --stride in stream mode, f16 on the CPU, an unknown kernel set in
// $WGPU_EVAL_CPU_KERNELS or $WGPU_EVAL_GPU_KERNELS; a corpus of documents in
// stream mode says that the documents are joined by scored <|endoftext|>.
func TestOptionsNotIgnored(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	for _, c := range []struct {
		args []string
		env  [2]string
		want string
		code int
	}{
		{[]string{"--stride", "8"}, [2]string{}, "--stride 8: stream windows do not overlap", 2},
		{[]string{"--device", "cpu", "--precision", "f16"}, [2]string{}, "--precision f16: is for GPUs", 2},
		{[]string{"--device", "cpu"}, [2]string{"WGPU_EVAL_CPU_KERNELS", "bogus"}, `WGPU_EVAL_CPU_KERNELS="bogus"`, 1},
		{[]string{"--device", "cpu"}, [2]string{"WGPU_EVAL_GPU_KERNELS", "fast"}, `WGPU_EVAL_GPU_KERNELS: GPU kernel set "fast"`, 1},
	} {
		if c.env[0] != "" {
			t.Setenv(c.env[0], c.env[1])
		}
		_, _, err := cli(t, "some text", append([]string{"--model", dir, "--data", "-"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != c.code {
			t.Errorf("%v %v: err = %v (status %d), want %q with status %d", c.args, c.env, err, exitCode(err), c.want, c.code)
		}
		if c.env[0] != "" {
			t.Setenv(c.env[0], "")
		}
	}
	jsonl := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(jsonl, []byte("{\"text\": \"one document\"}\n{\"text\": \"and another one\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := cli(t, "", "--model", dir, "--data", jsonl, "--device", "cpu")
	if err != nil || !strings.Contains(stderr, "2 documents joined into one stream with <|endoftext|> before each") {
		t.Errorf("documents in stream mode: %v, stderr:\n%s", err, stderr)
	}
}

// TestLMEvalMetrics: in documents mode (every token a target, as
// lm-evaluation-harness's rolling loglikelihood scores a document), the
// JSON's byte_perplexity, bits_per_byte and word_perplexity are lm-eval's:
// exp(nll_sum / bytes), nll_sum / bytes / ln 2 and exp(nll_sum / words),
// with the documents' bytes and re.split(r"\s+", doc) word counts worked
// out by hand here; ppl_stderr is ppl * stderr, and the summary prints
// "PPL X ± Y".
func TestLMEvalMetrics(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	docs := []string{"First Citizen:\nBefore we proceed any further, hear me speak.", " All: Speak, speak. "}
	const bytes = 60 + 20 // 14 + 1 + 45; 20
	const words = 10 + 5  // 10; " All: Speak, speak. " splits into "", "All:", "Speak,", "speak.", ""
	var b strings.Builder
	for _, d := range docs {
		j, _ := json.Marshal(map[string]string{"text": d})
		b.Write(append(j, '\n'))
	}
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := len(docs[0]) + len(docs[1]); n != bytes {
		t.Fatalf("the documents hold %d bytes, not %d", n, bytes)
	}
	r := resultJSON(t, "--model", dir, "--data", path, "--mode", "documents", "--device", "cpu")
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Abs(want) }
	if r.ScoredBytes != bytes || r.Words != words {
		t.Fatalf("scored_bytes %d, words %d; want %d and %d", r.ScoredBytes, r.Words, bytes, words)
	}
	if !close(r.BytePerplexity, math.Exp(r.NLLSum/bytes)) || !close(r.BitsPerByte, r.NLLSum/bytes/math.Ln2) ||
		!close(r.WordPerplexity, math.Exp(r.NLLSum/words)) || !close(r.PPLStdErr, r.PPL*r.StdErr) {
		t.Errorf("byte_perplexity %v, bits_per_byte %v, word_perplexity %v, ppl_stderr %v; from nll_sum %v: %v, %v, %v, %v",
			r.BytePerplexity, r.BitsPerByte, r.WordPerplexity, r.PPLStdErr, r.NLLSum,
			math.Exp(r.NLLSum/bytes), r.NLLSum/bytes/math.Ln2, math.Exp(r.NLLSum/words), r.PPL*r.StdErr)
	}
	stdout, _, err := cli(t, "", "--model", dir, "--data", path, "--mode", "documents", "--device", "cpu", "--quiet")
	if want := fmt.Sprintf("PPL %.3f ± %.3f", r.PPL, r.PPLStdErr); err != nil || !strings.Contains(stdout, want) {
		t.Errorf("summary %q (%v): want %q", stdout, err, want)
	}
}

// TestJoinedDocumentsBytes: in the stream and strided modes, documents
// joined with <|endoftext|> before each have that token scored, but it is no
// byte of the text: bits per byte divide by the documents' bytes (every text
// token is a target in one window here), as in documents mode, not by them
// plus 13 per "<|endoftext|>".
func TestJoinedDocumentsBytes(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	docs := []string{"First Citizen:\nBefore we proceed any further, hear me speak.", " All: Speak, speak. ", "Resolved."}
	var b strings.Builder
	bytes := 0
	for _, d := range docs {
		j, _ := json.Marshal(map[string]string{"text": d})
		b.Write(append(j, '\n'))
		bytes += len(d)
	}
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"stream", "strided", "documents"} {
		r := resultJSON(t, "--model", dir, "--data", path, "--mode", mode, "--ctx", "64", "--device", "cpu")
		if r.ScoredBytes != bytes || math.Abs(r.BitsPerByte-r.NLLSum/math.Ln2/float64(bytes)) > 1e-12*r.BitsPerByte {
			t.Errorf("%s: scored_bytes %d, bits_per_byte %v; want the documents' %d bytes, %v", mode, r.ScoredBytes, r.BitsPerByte,
				bytes, r.NLLSum/math.Ln2/float64(bytes))
		}
	}
}

// TestPerDocument: --per-document writes one JSON line per document whose
// targets and NLL sums are those of the per-token records of that document
// (added independently here), and whose sums add up to the run's; each
// line's doc is the document's number in the file, an empty document
// (scoring nothing, so without a line) counted; it is refused outside
// documents mode.
func TestPerDocument(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	var b strings.Builder
	for _, d := range []string{"First Citizen:\nBefore we proceed any further, hear me speak.", "", "All: Speak, speak.", "You are all resolved rather to die than to famish?"} {
		j, _ := json.Marshal(map[string]string{"text": d})
		b.Write(append(j, '\n'))
	}
	tmp := t.TempDir()
	data, docsOut, ptk := filepath.Join(tmp, "docs.jsonl"), filepath.Join(tmp, "docs.scores.jsonl"), filepath.Join(tmp, "run.ptk")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := resultJSON(t, "--model", dir, "--data", data, "--mode", "documents", "--device", "cpu", "--per-document", docsOut, "--per-token", ptk)
	raw, err := os.ReadFile(docsOut)
	if err != nil {
		t.Fatal(err)
	}
	f, err := runfile.ReadPerToken(ptk)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][2]float64{} // doc -> targets, float64 sum in record order
	for _, rec := range f.Tokens {
		w := want[rec.Doc]
		want[rec.Doc] = [2]float64{w[0] + 1, w[1] + float64(rec.NLL)}
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines for 3 documents that score:\n%s", len(lines), raw)
	}
	total, targets := 0.0, 0
	for i, l := range lines {
		var d runfile.DocumentScore
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		doc := []int{0, 2, 3}[i] // the file's documents, the empty one (1) counted
		w := want[doc]
		if d.Doc != doc || float64(d.Targets) != w[0] || math.Abs(d.NLLSum-w[1]) > 1e-9*w[1] || math.Abs(d.MeanNLL-d.NLLSum/w[0]) > 1e-12 || d.Bytes == 0 {
			t.Errorf("line %d: %+v; want document %d, %v targets, NLL sum %v", i, d, doc, w[0], w[1])
		}
		total += d.NLLSum
		targets += d.Targets
	}
	if targets != r.Tokens || math.Abs(total-r.NLLSum) > 1e-9*r.NLLSum {
		t.Errorf("documents add up to %d targets, %v; the run has %d, %v", targets, total, r.Tokens, r.NLLSum)
	}
	if _, _, err := cli(t, "", "--model", dir, "--data", data, "--per-document", docsOut); err == nil || exitCode(err) != 2 {
		t.Errorf("--per-document in stream mode: err = %v, want a usage error", err)
	}
}

package wgpueval

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model/hub"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

func tinyModel(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := synth.WriteSafetensors(dir, synth.Peaked(synth.TinyConfig(), 7), "F32"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOpenErrors: bad options are refused by Open as an *OptionError naming
// the field and the value, and a missing model with its path.
func TestOpenErrors(t *testing.T) {
	t.Setenv("HF_HUB_OFFLINE", "1")
	dir := tinyModel(t)
	for _, c := range []struct {
		name, model string
		opt         Options
		option      string // the OptionError's field, "" for another error
		want        string
	}{
		{"device", dir, Options{Device: "tpu"}, "Device", "Device tpu: want auto, cpu, gpu, gpu:N"},
		{"precision", dir, Options{Precision: "f8"}, "Precision", "Precision f8: want auto, f16, f32 or bf16"},
		{"threads", dir, Options{Threads: -1}, "Threads", "Threads -1: must not be negative"},
		{"f16 on the cpu", dir, Options{Device: DeviceCPU, Precision: PrecisionF16}, "Precision", "Precision f16: is for GPUs"},
		{"bf16 on a gpu", dir, Options{Device: GPU(1), Precision: PrecisionBF16}, "Precision", "runs on the cpu device only (device gpu:1)"},
		{"matrix units", dir, Options{MatrixUnits: "maybe"}, "MatrixUnits", "MatrixUnits maybe: want auto, off or on"},
		{"matrix units on the cpu", dir, Options{Device: DeviceCPU, MatrixUnits: MatrixUnitsOn}, "MatrixUnits", "MatrixUnits on: needs a GPU with f16 weights (device cpu"},
		{"matrix units with f32 weights", dir, Options{Device: DeviceGPU, Precision: PrecisionF32, MatrixUnits: MatrixUnitsOn}, "MatrixUnits", "the matrix units multiply f16"},
		{"missing model", filepath.Join(dir, "nope"), Options{}, "", "nope"},
	} {
		if err := c.opt.Check(); (err != nil) != (c.option != "") {
			t.Errorf("%s: Check() = %v", c.name, err)
		}
		ev, err := Open(context.Background(), c.model, c.opt)
		if err == nil {
			ev.Close()
		}
		var oe *OptionError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &oe) != (c.option != "") || oe != nil && oe.Option != c.option {
			t.Errorf("%s: err = %v (%#v), want one containing %q of option %q", c.name, err, oe, c.want, c.option)
		}
	}
}

// EvalOptions.Check refuses each bad setting as an *OptionError of its
// field, and accepts the zero value and good ones.
func TestEvalOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		opt    EvalOptions
		option string // "" for none
	}{
		{EvalOptions{}, ""},
		{EvalOptions{Mode: ModeStrided, Ctx: 16, Stride: 8, TopLogprobs: 5, OnScored: func([]TokenNLL) error { return nil }}, ""},
		{EvalOptions{Mode: ModeDocuments, PerDocument: "d.jsonl"}, ""},
		{EvalOptions{Mode: ModeDocuments, Shard: Shard{Index: 1, Count: 2}}, ""},
		// A shard holds some windows of a long document, the others the rest.
		{EvalOptions{Mode: ModeDocuments, PerDocument: "d.jsonl", Shard: Shard{Index: 1, Count: 2}}, "PerDocument"},
		{EvalOptions{Mode: "sideways"}, "Mode"},
		{EvalOptions{Ctx: -1}, "Ctx"},
		{EvalOptions{Ctx: 1}, "Ctx"},
		{EvalOptions{MaxTokens: -5}, "MaxTokens"},
		{EvalOptions{BatchTokens: -5}, "BatchTokens"},
		{EvalOptions{Mode: ModeStrided, Ctx: 16, Stride: 17}, "Stride"},
		{EvalOptions{Stride: 4}, "Stride"}, // stream windows have none
		{EvalOptions{PerDocument: "d.jsonl"}, "PerDocument"},
		{EvalOptions{Shard: Shard{Index: 2, Count: 2}}, "Shard"},
		{EvalOptions{TopLogprobs: 5}, "TopLogprobs"}, // nowhere to put them
		{EvalOptions{TopLogprobs: 1000, PerToken: "p"}, "TopLogprobs"},
		{EvalOptions{Split: "validation"}, "Split"},
		{EvalOptions{Split: "val"}, ""},
	} {
		err := c.opt.Check()
		var oe *OptionError
		if errors.As(err, &oe) != (c.option != "") || oe != nil && oe.Option != c.option {
			t.Errorf("%+v: Check() = %v, want an error of option %q", c.opt, err, c.option)
		}
	}
}

// TestEvaluateChecksFirst: bad options and a missing corpus are reported
// before the weights go to the device; a good call then evaluates, the
// progress callback sees the load and the evaluation, and the device is
// opened once for several evaluations.
func TestEvaluateChecksFirst(t *testing.T) {
	dir := tinyModel(t)
	var stages []string
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true, Progress: func(p Progress) {
		if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
			stages = append(stages, p.Stage)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	text := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(text, []byte("Now is the winter of our discontent\nMade glorious summer by this sun of York;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, data string
		opt        EvalOptions
		want       string
	}{
		{"ctx", text, EvalOptions{Ctx: 1 << 20}, "Ctx 1048576: longer than the model's 64 positions"},
		{"mode", text, EvalOptions{Mode: "sliding"}, "sliding"},
		{"stride", text, EvalOptions{Mode: "strided", Ctx: 16, Stride: 17}, "Stride 17"},
		{"corpus", filepath.Join(t.TempDir(), "missing.txt"), EvalOptions{}, "missing.txt"},
	} {
		if _, err := ev.Evaluate(context.Background(), Named(c.data), c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
		if ev.backend != nil {
			t.Fatalf("%s: the weights were loaded before the error", c.name)
		}
	}
	r1, err := ev.Evaluate(context.Background(), Named(text), EvalOptions{Ctx: 16, NoTokenCache: true})
	if err != nil {
		t.Fatal(err)
	}
	b := ev.backend
	r2, err := ev.Evaluate(context.Background(), Named(text), EvalOptions{Ctx: 16, NoTokenCache: true, Mode: "documents", Separator: "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.backend != b || r1.Tokens == 0 || r2.Tokens == 0 || r1.Device != "cpu" {
		t.Errorf("results %+v, %+v; backend reopened: %v", r1, r2, ev.backend != b)
	}
	if strings.Join(stages, ",") != "load,eval" {
		t.Errorf("progress stages %v, want load then eval", stages)
	}
	if err := ev.Close(); err != nil {
		t.Error(err)
	}
	if _, err := ev.Evaluate(context.Background(), Named(text), EvalOptions{}); err == nil {
		t.Error("Evaluate after Close: no error")
	}
}

// TestOpenSaysWhatItWaitsFor: a hub that does not answer is reported through
// Options.Log, naming the host and the file, while Open waits.
func TestOpenSaysWhatItWaitsFor(t *testing.T) {
	url := silentHub(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := make(chan string, 100)
	hc := &hub.Client{Endpoint: url, CacheDir: t.TempDir(), WaitInterval: 10 * time.Millisecond}
	errc := make(chan error, 1)
	go func() {
		_, err := Open(ctx, "org/model", Options{Hub: hc, Log: func(msg string) { logs <- msg }})
		errc <- err
	}()
	select {
	case msg := <-logs:
		host := strings.TrimPrefix(url, "http://")
		if !strings.Contains(msg, host) || !strings.Contains(msg, "config.json") || !strings.Contains(msg, "to answer") {
			t.Errorf("log %q, want the host %s and config.json", msg, host)
		}
	case err := <-errc:
		t.Fatalf("Open returned %v before saying what it waits for", err)
	case <-time.After(20 * time.Second):
		t.Fatal("nothing logged while the hub was silent")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestEvaluateMatchesPyTorchGolden: the library, from the model folder and a
// token file to the Result, against the float64 PyTorch reference of
// testdata/golden (a tiny F16 GPT-2 trained on TinyShakespeare), in every method.
func TestEvaluateMatchesPyTorchGolden(t *testing.T) {
	const dir = "testdata/golden"
	g := backendtest.LoadGolden(t, dir)
	ev, err := Open(context.Background(), filepath.Join(dir, "tiny"), Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for _, c := range g.Cases {
		data := filepath.Join(t.TempDir(), c.Name+".bin")
		if err := os.WriteFile(data, g.TokenFile(c), 0o644); err != nil {
			t.Fatal(err)
		}
		opt := EvalOptions{Mode: Mode(c.Mode), Ctx: c.Ctx, NoTokenCache: true}
		if c.Mode != "stream" {
			opt.Stride = c.Stride
		}
		r, err := ev.Evaluate(context.Background(), Named(data), opt)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if r.Tokens != c.Count || math.Abs(r.MeanNLL-c.MeanNLL) > 1e-5 {
			t.Errorf("%s: %d targets, mean NLL %.9f; reference %d, %.9f", c.Name, r.Tokens, r.MeanNLL, c.Count, c.MeanNLL)
		}
	}
}

// TestOpenChecksDeviceFirst: a GPU device that is not there (an adapter
// index past the last, or no Vulkan at all) fails Open before the model is
// looked for, so a run never downloads or loads a model it cannot run.
func TestOpenChecksDeviceFirst(t *testing.T) {
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "no-such-model"), Options{Device: "gpu:99", Offline: true})
	if err == nil || !strings.Contains(err.Error(), "device gpu:99") {
		t.Fatalf("gpu:99 with a missing model: err = %v, want the device's error first", err)
	}
}

// openLogged opens the tiny model on the CPU with its log kept in the
// returned slice; the Evaluator is closed when the test ends.
func openLogged(t *testing.T) (*Evaluator, *[]string) {
	t.Helper()
	var logs []string
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: "cpu", Offline: true, Log: func(msg string) { logs = append(logs, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	return ev, &logs
}

// The data line says what --max-tokens kept: the head where tokenizing
// stopped early (a text longer than one piece), the head of a whole
// tokenization, or the whole corpus where it has fewer tokens than asked
// (a stopped tokenization was reported as that, with the count asked for).
func TestMaxTokensDataLine(t *testing.T) {
	ev, logs := openLogged(t)
	long := strings.Repeat("Now is the winter of our discontent\n", 2<<20/36) // over one piece of the head encoder
	short := "Now is the winter of our discontent\nMade glorious summer by this sun of York;\n"
	for _, c := range []struct {
		name, text string
		max        int
		want       string
	}{
		{"stopped", long, 40, "the first 40 tokens (tokenizing stopped there, before the end of the corpus)"},
		{"cut", short, 5, "the first 5 tokens (of the "},
		{"whole", short, 100000, "(the whole corpus: fewer than the 100000 asked for)"},
	} {
		*logs = nil
		if _, err := ev.Evaluate(context.Background(), Text("t", c.text), EvalOptions{Ctx: 16, MaxTokens: c.max, NoTokenCache: true}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		found := false
		for _, l := range *logs {
			found = found || strings.HasPrefix(l, "data ") && strings.Contains(l, c.want)
		}
		if !found {
			t.Errorf("%s: no data line containing %q in %q", c.name, c.want, *logs)
		}
	}
}

// TestDocumentsDataLine: in documents mode the data line counts the
// documents and says how many are empty (they keep their numbers but score
// nothing); in stream mode it does not.
func TestDocumentsDataLine(t *testing.T) {
	ev, logs := openLogged(t)
	data := Documents("d", []string{"Now is the winter of our discontent", "", "Made glorious summer by this sun of York"})
	for _, c := range []struct {
		mode Mode
		want string
	}{
		{ModeDocuments, " in 3 documents (1 empty: "},
		{ModeStream, ""},
	} {
		*logs = nil
		if _, err := ev.Evaluate(context.Background(), data, EvalOptions{Mode: c.mode, Ctx: 16, NoTokenCache: true}); err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		var line string
		for _, l := range *logs {
			if strings.HasPrefix(l, "data ") {
				line = l
			}
		}
		if c.want != "" && !strings.Contains(line, c.want) || c.want == "" && strings.Contains(line, "documents") {
			t.Errorf("%s: data line %q, want %q in it", c.mode, line, c.want)
		}
	}
}

// TestLoadTokenizerKeepsHubCallbacks: LoadTokenizer, as Open, tells the
// Waiting callback of Options.Hub (not only Options.Log) what it waits for.
func TestLoadTokenizerKeepsHubCallbacks(t *testing.T) {
	url := silentHub(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waits := make(chan hub.Wait, 100)
	hc := &hub.Client{Endpoint: url, CacheDir: t.TempDir(), WaitInterval: 10 * time.Millisecond,
		Waiting: func(w hub.Wait) { waits <- w }}
	errc := make(chan error, 1)
	go func() {
		_, _, err := LoadTokenizer(ctx, "org/model", Options{Hub: hc})
		errc <- err
	}()
	select {
	case w := <-waits:
		if w.File != "config.json" {
			t.Errorf("wait %v, want one for config.json", w)
		}
	case err := <-errc:
		t.Fatalf("LoadTokenizer returned %v without calling Hub.Waiting", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Hub.Waiting not called while the hub was silent")
	}
	cancel()
	<-errc
}

// silentHub is the URL of a server that answers no request until the test
// ends (a hub out of reach that holds the connection).
func silentHub(t *testing.T) string {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return, then the server closes
	return s.URL
}

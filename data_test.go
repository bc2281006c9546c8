package wgpueval

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

const dataText = "Now is the winter of our discontent\nMade glorious summer by this sun of York;\n" +
	"And all the clouds that lour'd upon our house\nIn the deep bosom of the ocean buried.\n"

// Text, Documents and TokenIDs held in memory score exactly what the same
// content read from a text file, a JSONL file and an llm.c token file
// scores (a second path into the same engine: the files are the
// expectation), and are called by the names given.
func TestEvaluateInMemoryData(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	tmp := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	docs := strings.SplitAfter(strings.TrimSuffix(dataText, "\n"), "\n")
	var jsonl strings.Builder
	for _, d := range docs {
		line, _ := json.Marshal(map[string]string{"text": d})
		jsonl.Write(append(line, '\n'))
	}
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	ids := gpt2.Encode(dataText)
	tokFile := make([]byte, 1024, 1024+2*len(ids))
	for i, v := range []uint32{20240520, 1, uint32(len(ids))} {
		tokFile[4*i], tokFile[4*i+1], tokFile[4*i+2], tokFile[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	for _, id := range ids {
		tokFile = append(tokFile, byte(id), byte(id>>8))
	}
	for _, c := range []struct {
		name      string
		mem, file Data
		opt       EvalOptions
	}{
		{"text", Text("speech", dataText), Named(write("speech.txt", []byte(dataText))), EvalOptions{Ctx: 16}},
		{"text val split", Text("speech", dataText), Named(write("speech2.txt", []byte(dataText))), EvalOptions{Ctx: 16, Split: "val"}},
		{"documents", Documents("lines", docs), Named(write("lines.jsonl", []byte(jsonl.String()))), EvalOptions{Ctx: 16, Mode: ModeDocuments}},
		{"documents streamed", Documents("lines", docs), Named(write("lines2.jsonl", []byte(jsonl.String()))), EvalOptions{Ctx: 16, Mode: ModeStrided, Stride: 8}},
		{"token ids", TokenIDs("ids", ids), Named(write("ids.bin", tokFile)), EvalOptions{Ctx: 16, Mode: ModeStrided, Stride: 4}},
	} {
		opt := c.opt
		opt.NoTokenCache = true
		want, err := ev.Evaluate(context.Background(), c.file, opt)
		if err != nil {
			t.Fatalf("%s: file: %v", c.name, err)
		}
		got, err := ev.Evaluate(context.Background(), c.mem, opt)
		if err != nil {
			t.Fatalf("%s: memory: %v", c.name, err)
		}
		if got.Tokens != want.Tokens || got.NLLSum != want.NLLSum || got.Tokens == 0 ||
			got.Provenance.Corpus.SHA256 != want.Provenance.Corpus.SHA256 || !strings.HasPrefix(got.Data, c.mem.name) {
			t.Errorf("%s: memory %d targets, NLL sum %v, %s (%s); file %d, %v, %s", c.name, got.Tokens, got.NLLSum,
				got.Data, got.Provenance.Corpus.SHA256, want.Tokens, want.NLLSum, want.Provenance.Corpus.SHA256)
		}
	}
	// Bad data: refused before the weights are needed, naming it.
	for _, c := range []struct {
		data Data
		want string
	}{
		{Text("empty", ""), "corpus empty: empty text"},
		{Text("bytes", "a\xffb"), "not UTF-8"},
		{Documents("none", nil), "no documents"},
		{TokenIDs("big", []int32{1, 50257}), "id 50257 is not below the vocabulary size"},
		{Data{}, "no data"},
	} {
		if _, err := ev.Evaluate(context.Background(), c.data, EvalOptions{Ctx: 16}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.data.name, err, c.want)
		}
	}
}

// Documents and token ids held in memory have no split and are not cut at
// a separator, as .jsonl and token files are not: the options are refused
// for both. They were ignored for data in memory, and the whole corpus
// scored under the split's name ("lines:val").
func TestInMemoryDataHasNoSplit(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	tmp := t.TempDir()
	jsonl := filepath.Join(tmp, "lines.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"text": "Now is the winter"}`+"\n"+`{"text": "of our discontent"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tokFile := make([]byte, 1024, 1024+2*4)
	for i, v := range []uint32{20240520, 1, 4} {
		tokFile[4*i], tokFile[4*i+1], tokFile[4*i+2], tokFile[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	tokFile = append(tokFile, 1, 0, 2, 0, 3, 0, 4, 0)
	ids := filepath.Join(tmp, "ids.bin")
	if err := os.WriteFile(ids, tokFile, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		mem, file Data
	}{
		{"documents", Documents("lines", []string{"Now is the winter", "of our discontent"}), Named(jsonl)},
		{"token ids", TokenIDs("ids", []int32{1, 2, 3, 4}), Named(ids)},
	} {
		for _, opt := range []EvalOptions{{Split: "val"}, {Split: "train"}, {Separator: "\n"}} {
			opt.Ctx, opt.NoTokenCache = 16, true
			for _, data := range []Data{c.file, c.mem} {
				res, err := ev.Evaluate(context.Background(), data, opt)
				want := "split"
				if opt.Separator != "" {
					want = "separator"
				}
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), data.name) {
					t.Errorf("%s (%s), split %q, separator %q: err = %v (data %v); want it refused, naming it", c.name, data.name, opt.Split, opt.Separator, err, res != nil)
				}
			}
		}
	}
}

// OnScored sees every target once, with the NLL the result sums (the
// float64 sum of the records is the result's sum to rounding), and the top
// log-probabilities when asked; Result.PerToken holds the same records. An
// error from it stops the run with that error.
func TestEvaluateOnScored(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	seen := map[int]TokenNLL{}
	batches := 0
	res, err := ev.Evaluate(context.Background(), Text("speech", dataText), EvalOptions{
		Mode: ModeStrided, Ctx: 16, Stride: 8, BatchTokens: 32, TopLogprobs: 3,
		OnScored: func(batch []TokenNLL) error {
			batches++
			for _, r := range batch {
				if _, dup := seen[r.Pos]; dup {
					t.Errorf("position %d reported twice", r.Pos)
				}
				seen[r.Pos] = r
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, r := range seen {
		sum += float64(r.NLL)
		if len(r.Top) != 3 || r.Top[0].Logprob < r.Top[2].Logprob || -float64(r.NLL) > float64(r.Top[0].Logprob)+1e-5 {
			t.Fatalf("position %d: NLL %v, top %+v", r.Pos, r.NLL, r.Top)
		}
	}
	if len(seen) != res.Tokens || batches < 2 || math.Abs(sum-res.NLLSum) > 1e-9*math.Abs(res.NLLSum) || len(res.PerToken) != res.Tokens {
		t.Errorf("%d records in %d batches summing to %v; result %d targets, %v, %d per-token records",
			len(seen), batches, sum, res.Tokens, res.NLLSum, len(res.PerToken))
	}
	for _, r := range res.PerToken {
		if s := seen[r.Pos]; s.NLL != r.NLL || s.Token != r.Token {
			t.Fatalf("position %d: callback %+v, result %+v", r.Pos, s, r)
		}
	}
	stop := errors.New("enough")
	_, err = ev.Evaluate(context.Background(), Text("speech", dataText), EvalOptions{
		Ctx: 16, BatchTokens: 16, OnScored: func([]TokenNLL) error { return stop },
	})
	if !errors.Is(err, stop) {
		t.Errorf("a callback's error: Evaluate returned %v", err)
	}
}

// Close during Evaluate cancels it: Evaluate returns the partial result with
// context.Canceled, Close waits for that and releases the device, and the
// Evaluator refuses further work.
func TestCloseCancelsEvaluate(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	var closeErr error
	var closed sync.WaitGroup
	first := true
	res, err := ev.Evaluate(context.Background(), Text("speech", strings.Repeat(dataText, 8)), EvalOptions{
		Ctx: 16, BatchTokens: 16, NoTokenCache: true,
		OnScored: func([]TokenNLL) error {
			if !first {
				return nil
			}
			first = false
			closed.Go(func() { closeErr = ev.Close() })
			// Wait until Close has cancelled the run; the next batch must not start.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				ev.runMu.Lock()
				closing := ev.closing
				ev.runMu.Unlock()
				if closing {
					return nil
				}
			}
			t.Error("Close never began")
			return nil
		},
	})
	closed.Wait()
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted || res.Tokens == 0 || res.Tokens >= res.TotalTokens {
		t.Errorf("Evaluate during Close: %v, %+v", err, res)
	}
	if closeErr != nil {
		t.Errorf("Close: %v", closeErr)
	}
	if _, err := ev.Evaluate(context.Background(), Text("x", "more text"), EvalOptions{Ctx: 16}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Evaluate after Close: %v", err)
	}
}

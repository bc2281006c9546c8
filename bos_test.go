package wgpueval

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestEvaluateBOSEachWindow: with EvalOptions.BOSEachWindow a Llama 2-style
// model (whose tokenizer(text) starts with <s>) and a Qwen2 one (no BOS:
// <|endoftext|>'s place is taken by the file's end-of-text token) score the
// windows written out here by hand, each target's NLL bit-identical to the
// CPU forward on them; the Llama 2 stream's own <s> starts the first window
// (not doubled); the result, its config and the per-token file say so.
func TestEvaluateBOSEachWindow(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 6) + "\nAnd then: 12345 digits!\n"
	for _, c := range []struct{ modelType, tok string }{{"llama", "sp"}, {"qwen2", "bl-qwen"}} {
		t.Run(c.modelType, func(t *testing.T) {
			dir, ev, tok := openLlamaFolder(t, c.modelType, c.tok, "cpu")
			stream := tok.EncodeWithSpecials(text)
			sep := tok.DocSeparator()
			bos, hasBOS := tok.BOS()
			if hasBOS != (c.tok == "sp") || hasBOS && (sep != bos || stream[0] != bos) || !hasBOS && (sep < 0 || stream[0] == sep) {
				t.Fatalf("the test's premise: BOS %d (%v), separator %d, stream starts with %d", bos, hasBOS, sep, stream[0])
			}
			ck, err := model.OpenCheckpoint(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			cpu, err := model.LoadCPU(context.Background(), ck, 1, model.LoadOptions{})
			ck.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, opt := range []EvalOptions{{Ctx: 16}, {Mode: "strided", Ctx: 16, Stride: 6}} {
				// By hand: the separator, then 15 corpus tokens, windows every
				// 15 (stream) or 6 tokens, each scoring the tokens no earlier
				// window reached; a stream that starts with <s> has it as its
				// first window's.
				ids, lead := stream, 0
				if ids[0] == sep {
					ids, lead = ids[1:], 1
				}
				step := 15
				if opt.Mode == "strided" {
					step = 6
				}
				var windows []model.Sequence
				var positions []int
				reached := 0
				for begin := 0; begin < len(ids); begin += step {
					end := min(begin+15, len(ids))
					w := append([]int32{sep}, ids[begin:end]...)
					windows = append(windows, model.Sequence{Tokens: w, First: 1 + reached - begin})
					for p := reached; p < end; p++ {
						positions = append(positions, lead+p)
					}
					reached = end
					if end == len(ids) {
						break
					}
				}
				_, want, err := cpu.LossPerToken(context.Background(), windows)
				if err != nil {
					t.Fatal(err)
				}

				ptk := filepath.Join(t.TempDir(), "run.ptk")
				opt.Stdin, opt.NoTokenCache, opt.PerToken, opt.BOSEachWindow = strings.NewReader(text), true, ptk, true
				res, err := ev.Evaluate(context.Background(), Named("-"), opt)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.PerToken) != len(want) || len(want) != len(ids) {
					t.Fatalf("%s: %d targets, want %d (every one of the %d corpus tokens)", opt.Mode, len(res.PerToken), len(want), len(ids))
				}
				for i, r := range res.PerToken {
					if r.Pos != positions[i] || r.Token != stream[positions[i]] || math.Float32bits(r.NLL) != math.Float32bits(want[i]) {
						t.Fatalf("%s: target %d is token %d at %d with NLL %v; the hand-built windows have token %d at %d, NLL %v",
							opt.Mode, i, r.Token, r.Pos, r.NLL, stream[positions[i]], positions[i], want[i])
					}
				}
				wantStride := 15
				if opt.Mode == "strided" {
					wantStride = 6
				}
				if !res.BOSEachWindow || res.Config == nil || !res.Config.BOSEachWindow || res.Stride != wantStride || res.Config.Stride != wantStride {
					t.Errorf("%s: result BOS each window %v, stride %d, config %+v", opt.Mode, res.BOSEachWindow, res.Stride, res.Config)
				}
				f, err := runfile.ReadPerToken(ptk)
				if err != nil {
					t.Fatal(err)
				}
				if !f.Header.BOSEachWindow || f.Header.Config == nil || !f.Header.Config.BOSEachWindow {
					t.Errorf("%s: the per-token file's header does not say BOS each window: %+v", opt.Mode, f.Header)
				}
			}
		})
	}
}

// TestBOSEachWindowRefused: a tokenizer with neither a BOS nor an
// end-of-text token, and a stride that would skip tokens, are refused before
// the weights go to the device, the problem named.
func TestBOSEachWindowRefused(t *testing.T) {
	dir, _ := llamaFolder(t, "qwen2", "bl-qwen")
	// A tokenizer.json with no special tokens at all, and no tokenizer_config.json.
	data, err := os.ReadFile(filepath.Join("model", "tokenizer", "testdata", "hf", "bl-split-Isolated", tokenizer.TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tokenizer.TokenizerFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, tokenizer.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if sep := ev.tok.DocSeparator(); sep >= 0 {
		t.Fatalf("the test's premise: the tokenizer has a separator, %d", sep)
	}
	text := "Now is the winter of our discontent\n"
	for _, c := range []struct {
		name string
		opt  EvalOptions
		want string
	}{
		{"no BOS", EvalOptions{Ctx: 16}, "has neither"},
		{"no BOS, documents", EvalOptions{Ctx: 16, Mode: "documents"}, "has neither"},
		{"stride", EvalOptions{Ctx: 16, Mode: "strided", Stride: 16}, "between 1 and 15"},
	} {
		c.opt.BOSEachWindow, c.opt.Stdin, c.opt.NoTokenCache = true, strings.NewReader(text), true
		if _, err := ev.Evaluate(context.Background(), Named("-"), c.opt); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "BOS") {
			t.Errorf("%s: err = %v, want one naming the BOS and %q", c.name, err, c.want)
		}
		if ev.backend != nil {
			t.Fatalf("%s: the weights were loaded before the error", c.name)
		}
	}
	// Without the option the same text scores.
	if _, err := ev.Evaluate(context.Background(), Named("-"), EvalOptions{Ctx: 16, Stdin: strings.NewReader(text), NoTokenCache: true}); err != nil {
		t.Errorf("without BOS each window: %v", err)
	}
}

// TestBOSEachWindowResume: a checkpoint of an interrupted run is refused by
// the same run with BOSEachWindow switched, naming the setting, either way;
// the same run resumed gives the totals of an uninterrupted one, bit for
// bit.
func TestBOSEachWindowResume(t *testing.T) {
	ev, text, interrupted := checkpointFixture(t)
	for _, bos := range []bool{false, true} {
		opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true, BOSEachWindow: bos}
		whole, err := ev.Evaluate(context.Background(), Named(text), opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Checkpoint = filepath.Join(t.TempDir(), "run.ckpt")
		part, err := interrupted(opt)
		if !errors.Is(err, context.Canceled) || part == nil || part.Tokens == 0 || part.Tokens >= whole.Tokens {
			t.Fatalf("BOS each window %v: the interrupted run: %v, %+v", bos, err, part)
		}
		other := opt
		other.BOSEachWindow = !bos
		want := "BOS each window: false in the checkpoint, true now"
		if bos {
			want = "BOS each window: true in the checkpoint, false now"
		}
		if _, err := ev.Evaluate(context.Background(), Named(text), other); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resumed with BOS each window %v: err = %v, want one containing %q", !bos, err, want)
		}
		resumed, err := ev.Evaluate(context.Background(), Named(text), opt)
		if err != nil {
			t.Fatal(err)
		}
		if resumed.Sums() != whole.Sums() || resumed.ScoredBytes != whole.ScoredBytes {
			t.Errorf("BOS each window %v: resumed %v, uninterrupted %v", bos, resumed.Sums(), whole.Sums())
		}
		if _, err := os.Stat(opt.Checkpoint); !os.IsNotExist(err) {
			t.Errorf("BOS each window %v: the checkpoint of the completed run is still there (%v)", bos, err)
		}
	}
}

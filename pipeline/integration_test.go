package pipeline_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

// shakespearePath is the shared copy of TinyShakespeare (../shared/data/README.md),
// or $WGPU_EVAL_TINYSHAKESPEARE.
var shakespearePath = prereq.TinyShakespearePath()

// idsSHA256 is the digest ../shared/data/README.md gives: sha256 over the ids as
// little-endian uint32.
func idsSHA256(ids []int32) string {
	h := sha256.New()
	for _, id := range ids {
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(id)))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestShakespeareValTokens loads and tokenizes the val split as the CLI does and
// checks the README's facts, first fresh and then from the cache.
func TestShakespeareValTokens(t *testing.T) {
	if _, err := os.Stat(shakespearePath); err != nil {
		prereq.Missing(t, "tinyshakespeare", err)
	}
	ctx := context.Background()
	c, err := corpus.Load(ctx, corpus.TinyShakespeare, corpus.Options{
		TinyShakespeare: shakespearePath, Split: corpus.SplitVal})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	opt := corpus.TokenizeOptions{CacheDir: t.TempDir(), CacheError: func(err error) { t.Error(err) }}
	for _, pass := range []string{"fresh", "cached"} {
		tk, err := corpus.Tokenize(ctx, c, tok, opt)
		if err != nil {
			t.Fatal(err)
		}
		ids := tk.Stream(tok.EOT())
		if len(ids) != 36059 || idsSHA256(ids) != "7a0f95164147aed251e312b0af08991176d34ee1767785208c2bdc124880d6d5" {
			t.Errorf("%s: %d tokens, sha256 %s; want the README's 36,059 and 7a0f9516...", pass, len(ids), idsSHA256(ids))
		}
	}
}

// TestEvaluateCPUByHand evaluates a tiny GPT-2 far from uniform (synth.Peaked) on real GPT-2 token ids in
// every mode, and compares with scoring each target by hand: one sequence per
// target, holding exactly the context the Hugging Face definitions give it.
func TestEvaluateCPUByHand(t *testing.T) {
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	text := "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" +
		"First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n\n" +
		"First Citizen:\nFirst, you know Caius Marcius is chief enemy to the people.\n\nAll:\nWe know't, we know't.\n\n" +
		"First Citizen:\nLet us kill him, and we'll have corn at our own price.\nIs't a verdict?\n\n" +
		"All:\nNo more talking on't; let it be done: away, away!\n\nSecond Citizen:\nOne word, good citizens.\n\n" +
		"First Citizen:\nWe are accounted poor citizens, the patricians good.\nWhat authority surfeits on would relieve us: " +
		"if they would yield us but the superfluity, while it were wholesome, we might guess they relieved us humanely."
	ids := tok.Encode(text)
	var docs [][]int32
	for _, d := range strings.Split(text, "\n\n") {
		docs = append(docs, tok.Encode(d))
	}
	m := synth.Peaked(synth.TinyConfig(), 7)
	cpu := model.NewCPU(m, 0)
	ctx := context.Background()

	// hand is one sequence per target tokens[j], holding exactly tokens[from:j]
	// as its context; they are scored together, in one call.
	var hand []model.Sequence
	score := func(tokens []int32, from, j int) {
		hand = append(hand, model.Sequence{Tokens: tokens[from : j+1], First: j - from})
	}
	// stridedStart is where the window scoring index j starts: the first window
	// k*stride whose end k*stride+ctx passes j.
	stridedStart := func(j, ctxLen, stride int) int {
		if j < ctxLen {
			return 0
		}
		return ((j-ctxLen)/stride + 1) * stride
	}

	for _, c := range []struct {
		mode        pipeline.Mode
		ctx, stride int
	}{
		{pipeline.ModeStream, 64, 0},
		{pipeline.ModeStream, 20, 0},
		{pipeline.ModeStrided, 64, 24},
		{pipeline.ModeStrided, 16, 5},
		{pipeline.ModeDocuments, 16, 6},
	} {
		var wantBytes float64
		hand = hand[:0]
		add := func(tokens []int32, from, j int) {
			score(tokens, from, j)
			wantBytes += float64(len(tok.Decode(tokens[j : j+1])))
		}
		tokens := &corpus.Tokens{Docs: [][]int32{ids}}
		switch c.mode {
		case pipeline.ModeStream:
			for j := 1; j < len(ids); j++ {
				if j%c.ctx != 0 {
					add(ids, j/c.ctx*c.ctx, j)
				}
			}
		case pipeline.ModeStrided:
			for j := 1; j < len(ids); j++ {
				add(ids, stridedStart(j, c.ctx, c.stride), j)
			}
		case pipeline.ModeDocuments:
			tokens = &corpus.Tokens{Docs: docs, Separated: true}
			for _, d := range docs {
				buf := append([]int32{tok.EOT()}, d...)
				for j := 1; j < len(buf); j++ {
					from := 0
					if len(buf) > c.ctx {
						from = stridedStart(j, c.ctx, c.stride)
					}
					add(buf, from, j)
				}
			}
		}
		sums, err := cpu.Loss(ctx, hand)
		if err != nil {
			t.Fatal(err)
		}
		want, n := sums.Sum.Float64(), len(hand)
		if sums.Count != n {
			t.Fatalf("%d targets scored by hand, want %d", sums.Count, n)
		}
		r, err := pipeline.Evaluate(ctx, backend.NewCPU(m, 0), pipeline.EvalConfig{
			Tokens: tokens, EOT: tok.EOT(), Mode: c.mode, Ctx: c.ctx, Stride: c.stride,
			BatchTokens: 3 * c.ctx, VocabSize: m.Config.VocabSize, TokenLen: tok.TokenLen,
		})
		if err != nil {
			t.Fatalf("%s ctx %d: %v", c.mode, c.ctx, err)
		}
		wantMean := want / float64(n)
		t.Logf("%s ctx %d stride %d: %d targets, mean NLL %.7f (by hand %.7f), bpb %.4f",
			c.mode, c.ctx, c.stride, r.Tokens, r.MeanNLL, wantMean, r.BitsPerByte)
		if r.Tokens != n || math.Abs(r.MeanNLL-wantMean) > 1e-6 || r.Device != "cpu" {
			t.Errorf("%s ctx %d: %d targets, mean %.9f on %s; by hand %d, %.9f", c.mode, c.ctx, r.Tokens, r.MeanNLL, r.Device, n, wantMean)
		}
		if wantBPB := want / math.Ln2 / wantBytes; math.Abs(r.BitsPerByte-wantBPB) > 1e-6*wantBPB {
			t.Errorf("%s ctx %d: bits per byte %.9f, want %.9f", c.mode, c.ctx, r.BitsPerByte, wantBPB)
		}
	}
}

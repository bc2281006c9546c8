package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// encodeCut encodes text in pieces cut where Cut allows, a cut sought step
// bytes after the last; it returns the ids and the number of cuts made.
func encodeCut(t testing.TB, tok *Tokenizer, text string, step int) ([]int32, int) {
	t.Helper()
	var ids []int32
	cuts := 0
	for start := 0; start < len(text); {
		end := len(text)
		if start+step < len(text) {
			end = start + tok.Cut(text[start:], step)
		}
		piece, whole, err := tok.EncodePiece(context.Background(), text[start:end], start == 0, 0, nil)
		if err != nil || !whole {
			t.Fatalf("EncodePiece: %v, whole %v", err, whole)
		}
		ids = append(ids, piece...)
		if end < len(text) {
			cuts++
		}
		start = end
	}
	return ids, cuts
}

// cutWords are the fragments random cut texts are made of: words, digits,
// spaces and line breaks of all kinds, the test tokenizers' added tokens
// (raw, and with spaces that lstrip and rstrip take in), contractions,
// the replacement characters and strings the test files split on, marks
// that combine, text that is not UTF-8.
var cutWords = []string{"a", "b", "an", "the", "The", "x", "Zq", "7", "42", "2026", " ", " ", " ", "  ", "\n", "\r\n", "\t",
	"<|begin|>", "<|end|>", "<|end|>x", "<tool>", "<s>", "</s>", "<unk>", "<mask>", " <mask> ", "'s", "'ll", "'T",
	"▁", "#", ".", ",", "!?", "é", "e\u0301", "\u0301", "中文", "😀", "½", "²", "ﬁ", "\xff", "\xe2\x82", "ａ"}

// randomCutText is a random text of n fragments.
func randomCutText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(cutWords[r.IntN(len(cutWords))])
	}
	return b.String()
}

// cutTexts are the texts the cut tests encode whole and in pieces.
func cutTexts(t testing.TB, withShakespeare bool) []string {
	texts := []string{hostileText(t)}
	train, err := os.ReadFile(filepath.Join("testdata", "hf", "train.txt"))
	if err != nil {
		t.Fatal(err)
	}
	texts = append(texts, string(train))
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		texts = append(texts, randomCutText(r, 1+r.IntN(300)))
	}
	if withShakespeare {
		texts = append(texts, shakespeare(t)[:200_000])
	}
	return texts
}

// checkCuts checks that tok encodes each text in pieces as it encodes it
// whole, with cuts sought every 1, 2, 5, 16 and 300 bytes, and returns the
// number of cuts made.
func checkCuts(t *testing.T, tok *Tokenizer, texts []string) int {
	t.Helper()
	cuts := 0
	for i, text := range texts {
		want := tok.Encode(text)
		for _, step := range []int{1, 2, 5, 16, 300} {
			got, n := encodeCut(t, tok, text, step)
			cuts += n
			if !slices.Equal(got, want) {
				k := 0
				for k < min(len(got), len(want)) && got[k] == want[k] {
					k++
				}
				t.Fatalf("text %d (%d bytes), cuts every %d bytes: ids differ from the whole text's at %d of %d (%d cut)",
					i, len(text), step, k, len(want), len(got))
			}
		}
	}
	return cuts
}

// cuttable are the test tokenizer.json files whose steps allow cuts (see
// cut.go); the others are never cut: a Split on a pattern other than Llama
// 3's or Qwen's (bl-deepseek-llm, bl-split-*), a ByteLevel without its
// split before the byte-level model (bl-punctuation), a Regex Replace
// (sp-regex-replace), an added token matched in normalized text ("ADDED"
// of sp, ms-always, ms-first, ms-never and their -split forms).
var cuttable = []string{"bl-digits", "bl-digits-runs", "bl-falcon3", "bl-gpt2-split-nfkd", "bl-llama3", "bl-qwen",
	"ms-add-prefix-space", "ms-add-prefix-space-first", "ms-first-after-split", "ms-first-deleted-start",
	"ms-no-prefix-space", "sp-no-unk", "sp-unk", "sp-unk-fused"}

// TestCutEncodesAsWhole: the pieces of a text cut where Cut allows encode
// to the whole text's ids, for GPT-2's built-in tokenizer and every test
// tokenizer.json (Llama 2 SentencePiece style, Llama 3, Qwen, Mistral's
// Metaspace forms, every Split behaviour, added tokens with every flag),
// on the hostile text, the test files' training text and random texts of
// added tokens, spaces, digits, marks and invalid bytes; and that the
// tokenizers Cut should cut are cut, the others not.
func TestCutEncodesAsWhole(t *testing.T) {
	texts := cutTexts(t, false)
	t.Run("gpt2", func(t *testing.T) {
		tok, err := GPT2()
		if err != nil {
			t.Fatal(err)
		}
		if n := checkCuts(t, tok, append(texts, "a\nb c")); n == 0 {
			t.Error("no cuts")
		}
	})
	for _, name := range testdataTokenizers(t) {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(filepath.Join("testdata", "hf", name))
			if err != nil {
				t.Fatal(err)
			}
			n := checkCuts(t, tok, texts)
			if want := slices.Contains(cuttable, name); (n > 0) != want {
				t.Errorf("%d cuts; want cuts %v", n, want)
			}
		})
	}
}

// TestCutRealTokenizers is TestCutEncodesAsWhole with the real Llama 2
// (Mistral's vocabulary), Llama 2 Metaspace, Llama 3 and Qwen3 files
// ($WGPU_TEST_HF_TOKENIZERS), on TinyShakespeare's first 200 kB too: all
// of them are cut.
func TestCutRealTokenizers(t *testing.T) {
	_, modules := prereq.HFTokenizers(t)
	texts := cutTexts(t, true)
	for _, rt := range realTokenizers {
		t.Run(rt.name, func(t *testing.T) {
			tok, err := Load(realDir(t, modules, rt))
			if err != nil {
				t.Fatal(err)
			}
			if n := checkCuts(t, tok, texts); n == 0 {
				t.Error("no cuts")
			}
		})
	}
}

// TestCutNotAcrossAddedTokens: Cut never cuts next to an added token, whose
// lstrip or rstrip would take in the space, or over one.
func TestCutNotAcrossAddedTokens(t *testing.T) {
	tok, err := Load(filepath.Join("testdata", "hf", "bl-llama3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want int
	}{
		{"ab cd", 2},
		{"x<tool> cd ef", 10},
		{"ab <tool>x cd", 10},
		{"a<|end|>x b c", 11},
		{"x y<tool>", 1},
		{"ab c<|end|> d", 2},
	} {
		if got := tok.Cut(c.text, 1); got != c.want {
			t.Errorf("Cut(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// TestCutAroundStrippingTokens: texts with added tokens that end or start
// with a letter and take in the space beside them (rstrip, lstrip), or
// look at it (single_word), encode in pieces as whole: Cut leaves those
// spaces alone.
func TestCutAroundStrippingTokens(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "hf", "bl-llama3", TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	added := f["added_tokens"].([]any)
	for _, a := range added {
		if a := a.(map[string]any); a["content"] == "<|end|>x" {
			a["rstrip"], a["single_word"] = true, false
		}
	}
	f["added_tokens"] = append(added,
		map[string]any{"id": 437, "content": "qq", "lstrip": true, "rstrip": false, "single_word": false, "normalized": false, "special": false},
		map[string]any{"id": 438, "content": "zz", "lstrip": false, "rstrip": false, "single_word": true, "normalized": false, "special": false})
	if data, err = json.Marshal(f); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, TokenizerFile), data)
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"a", "b", "7", " ", " ", "<|end|>x", "qq", "zz", "q", "z"}
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"a<|end|>x b", "a qq", "zz b", "b zz"}
	for range 200 {
		var b strings.Builder
		for range 1 + r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))])
		}
		texts = append(texts, b.String())
	}
	if n := checkCuts(t, tok, texts); n == 0 {
		t.Error("no cuts")
	}
}

// TestEncodeHeadSentencePieceStops: a SentencePiece-style tokenizer, whose
// piece is the whole text between added tokens, stops at the head of a
// long text (after the word where the limit is reached), as cut pieces
// stop, instead of encoding all of it, and checks its context as it goes.
func TestEncodeHeadSentencePieceStops(t *testing.T) {
	tok, err := Load(filepath.Join("testdata", "hf", "sp-unk"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("the quick brown fox jumps over the lazy dog ", 50_000) // 2.2 MB
	all := tok.Encode(text)
	head, whole, err := tok.EncodeHead(context.Background(), text, 10, nil)
	if err != nil || whole || len(head) < 10 || len(head) > 40 || !slices.Equal(head, all[:len(head)]) {
		t.Errorf("EncodeHead(_, 10): %d of %d ids, whole %v, %v", len(head), len(all), whole, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tok.EncodeContext(ctx, text, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// testdataTokenizers is the folders of testdata/hf, each a tokenizer, sorted.
func testdataTokenizers(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", "hf"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

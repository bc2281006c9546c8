package tokenizer

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// memoryTexts are texts whose longest piece is known, and others.
var memoryTexts = append([]string{
	strings.Repeat("a", 5000), "x " + strings.Repeat("a", 5000) + " y", strings.Repeat("=", 3000) + "a",
	strings.Repeat(" ", 3000) + "x", strings.Repeat("\x00", 2000), "ab\xff" + strings.Repeat("b", 300) + "\xfe",
	strings.Repeat("日本語", 1000), strings.Repeat("é", 700) + " " + strings.Repeat("a", 900),
	strings.Repeat("▁", 500), "<s>" + strings.Repeat("a", 400) + "</s>" + strings.Repeat("b", 300),
	strings.Repeat("1", 2000), strings.Repeat(" \t\n", 400), " " + strings.Repeat("=", 500) + strings.Repeat("\r\n", 300) + "x",
	"x" + strings.Repeat("'ll'ſ", 100), strings.Repeat("\u00a0", 300) + "a",
}, edgeCases...)

// checkMergeMemory holds MergeMemory and PieceMemory of each text, as a
// whole text and as a part after a cut, to the longest sequence of symbols
// BPE merges in encoding it.
func checkMergeMemory(t *testing.T, tok *Tokenizer, texts []string) {
	t.Helper()
	longest := 0
	mergeSeen = func(n int) { longest = max(longest, n) }
	defer func() { mergeSeen = nil }()
	clearCaches(tok)
	for _, s := range texts {
		for _, first := range []bool{true, false} {
			longest = 0
			clearCaches(tok) // a cached piece is not merged
			if _, _, err := tok.EncodePiece(context.Background(), s, first, 0, nil); err != nil {
				t.Fatal(err)
			}
			got := tok.MergeMemory(s, first)
			if want := MergeBytesPerSymbol * uint64(longest); got < want {
				t.Errorf("%.30q (first %v): MergeMemory %d, below the %d of a merge of %d symbols", s, first, got, want, longest)
			}
			if p := tok.PieceMemory(len(s)); p < got && utf8.ValidString(s) {
				t.Errorf("%.30q: PieceMemory %d, below MergeMemory %d", s, p, got)
			}
		}
	}
}

func clearCaches(tok *Tokenizer) {
	if tok.hf == nil {
		tok.bpe.cache.reset()
		return
	}
	tok.hf.model.cache.reset()
	tok.hf.model.bpe.cache.reset()
}

// TestMergeMemory checks MergeMemory against the merges Encode makes with
// GPT-2's tokenizer and every golden tokenizer.json, and that it is exact on
// runs.
func TestMergeMemory(t *testing.T) {
	gpt2, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("gpt2", func(t *testing.T) { checkMergeMemory(t, gpt2, memoryTexts) })
	for text, want := range map[string]int{
		strings.Repeat("a", 5000):                    5000,
		"x " + strings.Repeat("a", 5000) + " y":      5001, // " aaa..."
		"ab\xff" + strings.Repeat("b", 300) + "\xfe": 300,
		strings.Repeat(" ", 3000) + "x":              2999, // the last space goes with "x"
		strings.Repeat("=", 100) + "\xff" + "==":     100,
		strings.Repeat("日本語", 1000) + " " + "abc":    9000,
	} {
		if got := gpt2.MergeMemory(text, true); got != MergeBytesPerSymbol*uint64(want) {
			t.Errorf("GPT-2, %.30q: MergeMemory %d, want %d (a piece of %d bytes)", text, got, MergeBytesPerSymbol*want, want)
		}
	}

	for _, name := range testdataTokenizers(t) {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(filepath.Join("testdata", "hf", name))
			if err != nil {
				t.Fatal(err)
			}
			checkMergeMemory(t, tok, memoryTexts)
		})
	}
}

// TestMergeMemoryReal is TestMergeMemory with the real Llama 2, Llama 3 and
// Qwen3 tokenizers ($WGPU_TEST_HF_TOKENIZERS).
func TestMergeMemoryReal(t *testing.T) {
	_, modules := prereq.HFTokenizers(t)
	for _, rt := range realTokenizers {
		t.Run(rt.name, func(t *testing.T) {
			tok, err := Load(realDir(t, modules, rt))
			if err != nil {
				t.Fatal(err)
			}
			checkMergeMemory(t, tok, memoryTexts)
		})
	}
}

// TestRunBound checks the bound runBounded pipelines take from runs of
// characters (pairRuns) against the longest piece their pre-tokenizers make,
// on random texts of letters, numbers, spaces, line breaks and others
// (with contractions and "ſ", which (?i) folds to "s"), with the golden
// byte-level tokenizers.
func TestRunBound(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	alphabet := []string{"a", "Z", "é", "日", "1", "٣", " ", "\n", "\r", "\t", "\u00a0", "=", "-", "'", "s", "ſ", "ll", "😀"}
	for name, bounded := range map[string]bool{"bl-llama3": true, "bl-qwen": true, "bl-gpt2-split-nfkd": true, "bl-digits": true,
		"bl-digits-runs": true, "bl-falcon3": true, "bl-punctuation": false, "bl-split-eol": false, "bl-deepseek-llm": false,
		"ms-always": false, "sp": false} {
		tok, err := Load(filepath.Join("testdata", "hf", name))
		if err != nil {
			t.Fatal(err)
		}
		p := tok.hf
		if _, ok := p.runBounded(); ok != bounded {
			t.Errorf("%s: runBounded %v, want %v", name, ok, bounded)
		}
		if !bounded {
			continue
		}
		for range 300 {
			var b strings.Builder
			for b.Len() < 3000 {
				c := alphabet[rnd.IntN(len(alphabet))]
				b.WriteString(strings.Repeat(c, 1+rnd.IntN(1+rnd.IntN(200))))
			}
			text := b.String()
			longest := 0
			p.walk(text, false, func(int32) error { return nil }, p.preTokenize, func(piece string, _ pieceAt) error {
				longest = max(longest, len(piece))
				return nil
			})
			if got := tok.MergeMemory(text, true); got < MergeBytesPerSymbol*uint64(longest) {
				t.Fatalf("%s: MergeMemory %d, below a piece of %d bytes, in %q", name, got, longest, text)
			}
		}
	}
}

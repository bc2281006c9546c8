package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/ucd"
)

// newerRunes are the characters whose classes Go's unicode package (15.0
// in Go 1.26) and Hugging Face's data (package ucd: Unicode 16.0, 17.0 for
// Rust's is_numeric) tell apart, in any class the tokenizers test: the
// characters of Unicode 15.1 and 16.0 (and 17.0's numbers), and the few
// whose class changed.
func newerRunes() []rune {
	var out []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		differs := unicode.Is(ucd.Numeric17, r) != unicode.IsNumber(r) || isWordRune(r) != unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
		for _, c := range []string{"L", "M", "N", "P", "S", "Z"} {
			differs = differs || unicode.Is(ucd.Categories[c], r) != unicode.Is(unicode.Categories[c], r)
		}
		if differs {
			out = append(out, r)
		}
	}
	return out
}

// newerTexts are texts of the newer runes (every one of them, at least
// once) mixed with ASCII: letters, digits, spaces, punctuation and
// contractions, which pattern alternatives group with a neighbour or not
// by its class.
func newerTexts(newer []rune) []string {
	glue := []string{"", "", "a", "x", "Z", "1", "42", " ", "  ", "\n", "'s", "'d", "'ll", "!", ".", "-", "$", "_", " the", "\t"}
	r := rand.New(rand.NewPCG(16, 0))
	var texts []string
	for i := 0; i < len(newer); {
		var b strings.Builder
		for n := 1 + r.IntN(12); n > 0 && i < len(newer); n-- {
			b.WriteString(glue[r.IntN(len(glue))])
			for k := 1 + r.IntN(3); k > 0 && i < len(newer); k-- {
				b.WriteRune(newer[i])
				i++
			}
			b.WriteString(glue[r.IntN(len(glue))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestUnicode16MatchesHF compares our ids with Hugging Face's tokenizers
// (the Rust library; its JavaScript implementation uses whatever Unicode
// data Node's ICU has) on texts of the characters that Go's Unicode data
// and Hugging Face's tell apart, mixed with ASCII: GPT-2's byte-level
// tokenizer (a tokenizer.json written from the built-in tables), the real
// Llama 2-style (and its Metaspace rewrites), Llama 3 and Qwen3 files, and
// the byte-level and SentencePiece-style golden files (Digits, Punctuation,
// DeepSeek LLM's Splits, every Split behavior, single_word added tokens).
func TestUnicode16MatchesHF(t *testing.T) {
	node, modules := prereq.HFTokenizers(t)
	newer := newerRunes()
	if len(newer) < 5000 && unicode.Version == "15.0.0" {
		t.Fatalf("only %d runes differ between Go's Unicode %s and Hugging Face's 16.0: ucd's tables look wrong", len(newer), unicode.Version)
	}
	texts := newerTexts(newer)
	texts = append(texts, "x\U0002EBF0's \U00010D4A's \U00010D40's \U00011DE0's \u1b4e's \u2ffc'd \U00010D50<|end|>x a<mask>\U00010D70")
	dirs := map[string]string{}
	gpt2 := t.TempDir()
	writeTokenizerJSON(t, gpt2, gpt2Files(t), true)
	dirs["gpt2"] = gpt2
	for _, rt := range realTokenizers {
		dirs[rt.name] = realDir(t, modules, rt)
	}
	small, err := filepath.Glob(filepath.Join("testdata", "hf", "*", TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range small {
		if name := filepath.Base(filepath.Dir(p)); strings.HasPrefix(name, "bl-") || name == "sp" || name == "ms-first" {
			dirs[name] = filepath.Dir(p)
		}
	}
	names := make([]string, 0, len(dirs))
	for name := range dirs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(dirs[name])
			if err != nil {
				t.Fatal(err)
			}
			want, _ := hfIDs(t, node, modules, "rust", dirs[name], texts)
			bad := 0
			for i, s := range texts {
				if got := tok.EncodeWithSpecials(s); !slices.Equal(got, want[i]) {
					if bad++; bad <= 5 {
						t.Errorf("text %d (%+.60q): %s", i, s, diffIDs(tok, got, want[i]))
					}
				}
			}
			if bad > 5 {
				t.Errorf("%d of %d texts differ", bad, len(texts))
			}
		})
	}
}

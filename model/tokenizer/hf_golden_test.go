package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// hfGolden is one variant of testdata/hf/goldens.json: small tokenizer
// files (vocabularies trained by gen.cjs on train.txt, components as Llama
// 2, Llama 3, Qwen and Mistral use them, every Split behavior, every
// Metaspace form, added tokens with every flag) and the ids Hugging Face's
// tokenizers 0.23.2 gives test strings with them, and the text it decodes
// them to where that is not the string (decoded); js holds
// @huggingface/tokenizers 0.2.0's ids where they differ.
type hfGolden struct {
	JSError string `json:"js_error"`
	Cases   []struct {
		Text    string  `json:"text"`
		IDs     []int32 `json:"ids"`
		Decoded *string `json:"decoded"`
		JS      []int32 `json:"js"`
		JSError string  `json:"js_error"`
	} `json:"cases"`
}

func readGoldens(t testing.TB) map[string]hfGolden {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hf", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]hfGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestHFGoldens checks every component against Hugging Face's own ids
// and decoded texts (recorded by testdata/hf/gen.cjs), without node. The
// decoded texts are compared with bytes that are not UTF-8 written as
// U+FFFD, as Hugging Face writes them.
func TestHFGoldens(t *testing.T) {
	g := readGoldens(t)
	names := make([]string, 0, len(g))
	for name := range g {
		names = append(names, name)
	}
	sort.Strings(names)
	jsDiffers := map[string]int{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(filepath.Join("testdata", "hf", name))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range g[name].Cases {
				if got := tok.EncodeWithSpecials(c.Text); !slices.Equal(got, c.IDs) {
					t.Errorf("%q: %s", c.Text, diffIDs(tok, got, c.IDs))
				}
				want := c.Text
				if c.Decoded != nil {
					want = *c.Decoded
				}
				if got := replaceInvalid(tok.Decode(c.IDs)); got != want {
					t.Errorf("Decode(ids of %q) = %q, want %q", c.Text, got, want)
				}
				if c.JS != nil || c.JSError != "" {
					jsDiffers[name]++
				}
			}
		})
	}
	t.Logf("@huggingface/tokenizers differs from the Rust library on: %v", jsDiffers)
}

// TestHFLongRuns encodes 1 MB runs of spaces, digits, line breaks, letters
// and mixed whitespace with the byte-level and SentencePiece-style golden
// files (Llama 2's normalizers, Mistral's unsplit Metaspace): linear work (a quadratic pre-tokenizer or merge loop would take
// minutes here), and the text back from the ids.
func TestHFLongRuns(t *testing.T) {
	const n = 1 << 20
	runs := map[string]string{
		"spaces":      strings.Repeat(" ", n) + "x",
		"digits":      strings.Repeat("7", n),
		"newlines":    strings.Repeat("\n", n),
		"letters":     strings.Repeat("ab", n/2),
		"whitespace":  strings.Repeat(" \t\n\r\u00a0", n/6),
		"punctuation": strings.Repeat("!?", n/2) + " x",
	}
	// back is the text Decode gives back: Metaspace puts no "▁" before a
	// text that starts with a space, so the decoder's Strip takes that one.
	for name, back := range map[string]func(string) string{
		"bl-llama3": nil, "bl-qwen": nil, "sp": nil,
		"ms-first": func(s string) string { return strings.TrimPrefix(s, " ") },
	} {
		tok, err := Load(filepath.Join("testdata", "hf", name))
		if err != nil {
			t.Fatal(err)
		}
		for what, s := range runs {
			start := time.Now()
			ids := tok.Encode(s)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("%s, %s: %v for %d bytes", name, what, d, len(s))
			}
			want := s
			if back != nil {
				want = back(s)
			}
			if tok.Decode(ids) != want {
				t.Errorf("%s, %s: Decode(Encode(run)) differs from the run", name, what)
			}
		}
	}
}

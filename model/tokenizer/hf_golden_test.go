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
// 2, Llama 3 and Qwen use them, every Split behavior, added tokens with every
// flag) and the ids Hugging Face's tokenizers 0.23.2 gives test strings with
// them; js holds @huggingface/tokenizers 0.2.0's ids where they differ.
type hfGolden struct {
	JSError string `json:"js_error"`
	Cases   []struct {
		Text    string  `json:"text"`
		IDs     []int32 `json:"ids"`
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
// (recorded by testdata/hf/gen.cjs), without node.
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
// files: linear work (a quadratic pre-tokenizer or merge loop would take
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
	for _, name := range []string{"bl-llama3", "bl-qwen", "sp"} {
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
			if back := tok.Decode(ids); back != s {
				t.Errorf("%s, %s: Decode(Encode(run)) differs from the run", name, what)
			}
		}
	}
}

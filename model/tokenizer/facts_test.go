package tokenizer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// shakespeare returns ../shared/data/tinyshakespeare.txt (or the file named by
// WGPU_EVAL_TINYSHAKESPEARE), skipping the test when it is absent (failing under CI).
func shakespeare(t testing.TB) string {
	t.Helper()
	path := os.Getenv("WGPU_EVAL_TINYSHAKESPEARE")
	if path == "" {
		path = filepath.Join("..", "..", "..", "shared", "data", "tinyshakespeare.txt")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		prereq.Missing(t, "tinyshakespeare", fmt.Errorf("%w: put it at ../shared/data/tinyshakespeare.txt or set WGPU_EVAL_TINYSHAKESPEARE", err))
	}
	if got := sha256Hex(data); got != "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed" {
		t.Fatalf("%s: sha256 %s, not TinyShakespeare's", path, got)
	}
	return string(data)
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// idsHash is sha256 over ids written as little-endian uint32.
func idsHash(ids []int32) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint32(b, uint32(id))
	}
	return sha256Hex(b)
}

// checkFacts checks the token facts of ../shared/data/README.md.
func checkFacts(t *testing.T, tok *Tokenizer) {
	t.Helper()
	text := shakespeare(t)
	const split = 1003854 // int(0.9 * 1115394)
	facts := []struct {
		part   string
		text   string
		tokens int
		sha    string
	}{
		{"all", text, 338025, "0c00ab83dc7f46665805762aa7688fb7852f03f28c4a5d84061871e85ea7c815"},
		{"train", text[:split], 301966, "5c9a86038d435ea2c0132c609e356fdc8251c5858a6d4eb98a702a4fe8706607"},
		{"val", text[split:], 36059, "7a0f95164147aed251e312b0af08991176d34ee1767785208c2bdc124880d6d5"},
	}
	for _, f := range facts {
		ids := tok.Encode(f.text)
		if len(ids) != f.tokens {
			t.Errorf("%s: %d tokens, want %d", f.part, len(ids), f.tokens)
		}
		if got := idsHash(ids); got != f.sha {
			t.Errorf("%s: token sha256 %s, want %s", f.part, got, f.sha)
		}
		n := 0
		for _, id := range ids {
			n += tok.TokenLen(id)
		}
		if n != len(f.text) {
			t.Errorf("%s: token lengths sum to %d bytes, want %d", f.part, n, len(f.text))
		}
		if f.part == "all" {
			want := []int32{5962, 22307, 25, 198, 8421, 356, 5120, 597, 2252, 11, 3285, 502}
			if got := ids[:min(12, len(ids))]; !slices.Equal(got, want) {
				t.Errorf("first ids %v, want %v", got, want)
			}
			if tok.Decode(ids) != f.text {
				t.Errorf("Decode(Encode(all)) differs from the text")
			}
		}
	}
}

func TestBuiltinFacts(t *testing.T) {
	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	checkFacts(t, tok)
}

func TestBuiltinBasics(t *testing.T) {
	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 50257 || tok.EOT() != 50256 || tok.ID() != BuiltinID {
		t.Errorf("VocabSize %d EOT %d ID %q, want 50257 50256 %q", tok.VocabSize(), tok.EOT(), tok.ID(), BuiltinID)
	}
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"Hello world", []int32{15496, 995}},
		// Special tokens are plain text.
		{"<|endoftext|>", []int32{27, 91, 437, 1659, 5239, 91, 29}},
		{"", []int32{}},
	} {
		if got := tok.Encode(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	if got := tok.Decode([]int32{50256, 15496, -1, 50257, 995}); got != "<|endoftext|>Hello world" {
		t.Errorf("Decode with EOT and bad ids = %q", got)
	}
	if tok.TokenLen(50256) != len("<|endoftext|>") || tok.TokenLen(50257) != 0 || tok.TokenLen(-1) != 0 || tok.TokenLen(995) != 6 {
		t.Errorf("TokenLen: EOT %d, 50257 %d, -1 %d, \" world\" %d", tok.TokenLen(50256), tok.TokenLen(50257), tok.TokenLen(-1), tok.TokenLen(995))
	}
	if again, _ := GPT2(); again != tok {
		t.Errorf("GPT2() built a second tokenizer")
	}
}

func TestEncodeContext(t *testing.T) {
	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Hello world. ", 250000) + "\xff end" // 3.25 MB
	var done []int
	ids, err := tok.EncodeContext(context.Background(), text, func(n int) { done = append(done, n) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, tok.Encode(text)) {
		t.Errorf("EncodeContext and Encode differ")
	}
	if len(done) < 3 || done[len(done)-1] != len(text) || !slices.IsSorted(done) {
		t.Errorf("progress %v: want at least 3 increasing calls ending at %d", done, len(text))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ids, err := tok.EncodeContext(ctx, text, nil); !errors.Is(err, context.Canceled) || ids != nil {
		t.Errorf("cancelled: %d ids, error %v; want none and context.Canceled", len(ids), err)
	}
}

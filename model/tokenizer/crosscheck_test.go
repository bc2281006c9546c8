package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// edgeCases is a corpus of texts where GPT-2's pre-tokenizer and BPE are easy
// to get wrong.
var edgeCases = []string{
	"", " ", "  ", "\n", "\n\n", " \n", "\n ", "a", " a", "  a", "   a", "a ", "a  ", "a\n", "a \n",
	"Hello world", "Hello, world!", "hello   world", "trailing spaces   ", "trailing newlines\n\n\n",
	"I'm you're we've they'll he'd it's don't", "I'M YOU'RE", "'s 't 're 've 'm 'll 'd", "''s", "'", "' s", "x'sup",
	"rock'n'roll", "O'Neil's", "'tis the season", " 's", "?'s",
	"123 4567 89012345 3.14159 1,000,000 -42 +7 1e10", "a1b2c3", "x² ½ ¼ Ⅷ ٣",
	"tabs\tand\t\ttabs\t", "\t\tx", "\t x", " \tx", "crlf\r\nline\r\n", "\r\n\r\n", "\r", "form\ffeed\vvt",
	"café naïve résumé", "e\u0301", "Ünïcödé", "日本語のテキスト", "中文 文本", "한국어 텍스트", "Здравствуй, мир",
	"مرحبا بالعالم", "שלום עולם", "ελληνικά", "emoji 😀🎉👍🏽 👨‍👩‍👧‍👦", "🇫🇷🇩🇪", "\u00a0nbsp\u00a0 x", "\u2003em\u3000ideographic",
	"\u200bzero\u200dwidth", "\x00\x01\x1f\x7f", "\x1c\x1d x", "<|endoftext|>", "a<|endoftext|>b", " <|endoftext|>\n",
	"!!!???...", " !!!", "--- ---", "@#$%^&*()_+", "http://example.com/a?b=c&d=e", "foo.bar(baz)", "{\"k\": [1, 2]}",
	"    def f(x):\n        return x\n", strings.Repeat(" ", 300) + "x", strings.Repeat("\n", 100),
	strings.Repeat("a", 500), strings.Repeat("ab", 200), strings.Repeat("😀", 50), strings.Repeat("1", 200),
	strings.Repeat("!?", 150) + " end",
	"ＦＵＬＬ ｗｉｄｔｈ", "\ufeffBOM", "\U0010ffff\uFFFD",
}

// TestLoadVocabMerges checks our BPE, loaded from GPT-2 files derived from
// tiktoken-go's rank table, against the token facts and, on the edge cases,
// against tiktoken-go's own encoder.
func TestLoadVocabMerges(t *testing.T) {
	d := gpt2Files(t)
	dir := t.TempDir()
	writeVocabMerges(t, dir, d)
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, tok)
	checkFacts(t, tok)
}

func TestLoadTokenizerJSON(t *testing.T) {
	d := gpt2Files(t)
	for _, pairs := range []bool{true, false} {
		dir := t.TempDir()
		writeTokenizerJSON(t, dir, d, pairs)
		tok, err := Load(dir)
		if err != nil {
			t.Fatalf("pairs=%v: %v", pairs, err)
		}
		checkLoaded(t, tok)
		if pairs {
			checkFacts(t, tok)
		}
	}
}

// checkLoaded compares a tokenizer loaded from GPT-2 files with the built-in
// one (token table) and with tiktoken-go's encoder (edge cases).
func checkLoaded(t *testing.T, tok *Tokenizer) {
	t.Helper()
	ref, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 50257 || tok.EOT() != 50256 {
		t.Errorf("VocabSize %d EOT %d, want 50257 50256", tok.VocabSize(), tok.EOT())
	}
	if !strings.HasPrefix(tok.ID(), "sha256:") || len(tok.ID()) != len("sha256:")+64 {
		t.Errorf("ID %q, want sha256:<hex>", tok.ID())
	}
	for id := range int32(50257) {
		if a, b := tok.Decode([]int32{id}), ref.Decode([]int32{id}); a != b {
			t.Fatalf("token %d decodes to %q, built-in %q", id, a, b)
		}
	}
	checkEdgeCases(t, tok)
}

// checkEdgeCases encodes edgeCases and compares with tiktoken-go's r50k_base
// encoder, and checks the round trip.
func checkEdgeCases(t *testing.T, tok *Tokenizer) {
	t.Helper()
	for _, s := range edgeCases {
		got := tok.Encode(s)
		if want, ok := tiktokenIDs(t, s); ok && !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, tiktoken-go r50k_base %v", s, got, want)
		}
		if back := tok.Decode(got); back != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, back)
		}
	}
}

// tiktokenIDs encodes s with tiktoken-go's own r50k_base encoder, an
// independent implementation; ok is false where it cannot serve as a reference:
// text that is not valid UTF-8, or holds U+007F, which its generated regexp
// drops in v0.10.0.
func tiktokenIDs(t testing.TB, s string) (ids []int32, ok bool) {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0x7f) {
		return nil, false
	}
	codec, err := tiktoken.Get(tiktoken.R50kBase)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := codec.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	ids = make([]int32, len(u))
	for i, id := range u {
		ids[i] = int32(id)
	}
	return ids, true
}

func TestBuiltinEdgeCases(t *testing.T) {
	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	checkEdgeCases(t, tok)
	// Where tiktoken-go cannot serve: DEL is an "other" character joining its
	// neighbours' run, and invalid bytes are byte tokens of their own. A byte's
	// id is its place in bytes_to_unicode: '!'..'~' are 0..93, 0xA1..0xAC
	// 94..105, 0xAE..0xFF 106..187, then 0x00..0x20 188..220, 0x7F..0xA0
	// 221..254, 0xAD 255.
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"\x00\x01\x1f\x7f", []int32{188, 189, 219, 221}},
		{"a\x7f", []int32{64, 221}},
		{"a  \x7f", []int32{64, 220, 220, 221}},
		{"a\xffb", []int32{64, 187, 65}},
		{"\xe2\x82", []int32{158, 224}},
		{"Hello\xc0 world", []int32{15496, 124, 995}},
	} {
		if got := tok.Encode(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestBuiltinMatchesTiktoken compares with tiktoken-go's encoder on the whole
// of TinyShakespeare, beyond the recorded facts.
func TestBuiltinMatchesTiktoken(t *testing.T) {
	text := shakespeare(t)
	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := tiktokenIDs(t, text)
	if got := tok.Encode(text); !slices.Equal(got, want) {
		t.Errorf("TinyShakespeare: %d ids differ from tiktoken-go's %d", len(got), len(want))
	}
}

func TestDerivedAnchors(t *testing.T) {
	d := gpt2Files(t)
	// GPT-2's merges.txt begins "Ġ t", "Ġ a", "h e", "i n", "r e", "o n", "Ġt he".
	want := [][2]string{{"Ġ", "t"}, {"Ġ", "a"}, {"h", "e"}, {"i", "n"}, {"r", "e"}, {"o", "n"}, {"Ġt", "he"}}
	if got := d.merges[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("first merges %q, want %q", got, want)
	}
	if len(d.merges) != 50000 || d.vocab["Ġthe"] != 262 || d.vocab["ĊĊ"] != 628 {
		t.Errorf("%d merges, Ġthe %d, ĊĊ %d; want 50000, 262, 628", len(d.merges), d.vocab["Ġthe"], d.vocab["ĊĊ"])
	}
}

// TestMergeHeapMatchesScan runs both merge loops on the same pieces.
func TestMergeHeapMatchesScan(t *testing.T) {
	d := gpt2Files(t)
	dir := t.TempDir()
	writeVocabMerges(t, dir, d)
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := tok.bpe
	pieces := []string{"ab", "aaa", "aaaa", " the", "Ġthe", " antidisestablishmentarianism",
		strings.Repeat(" ", 130), strings.Repeat("a", 97), strings.Repeat("ab", 70), strings.Repeat("😀", 30),
		" " + strings.Repeat("xyzzy", 20), strings.Repeat("!?.", 40)}
	for _, p := range pieces {
		a, b := e.mergeScan(p), e.mergeHeap(p)
		if !slices.Equal(a, b) {
			t.Errorf("piece %q: scan %v, heap %v", p, a, b)
		}
	}
}

// TestConcurrentEncode encodes from several goroutines at once (run it with
// -race) and checks the results equal sequential ones.
func TestConcurrentEncode(t *testing.T) {
	dir := t.TempDir()
	writeVocabMerges(t, dir, gpt2Files(t))
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]int32, len(edgeCases))
	for i, s := range edgeCases {
		want[i] = tok.Encode(s)
	}
	tok.bpe.cache.reset() // make the goroutines fill it together
	var wg sync.WaitGroup
	got := make([][][]int32, 4)
	for g := range got {
		wg.Go(func() {
			for i := range edgeCases {
				got[g] = append(got[g], tok.Encode(edgeCases[(i+g)%len(edgeCases)]))
			}
		})
	}
	wg.Wait()
	for g := range got {
		for i, ids := range got[g] {
			if s := (i + g) % len(edgeCases); !slices.Equal(ids, want[s]) {
				t.Errorf("goroutine %d: Encode(%q) = %v, want %v", g, edgeCases[s], ids, want[s])
			}
		}
	}
}

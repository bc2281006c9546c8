package corpus

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Text in memory is the corpus a file of the same bytes is: the same
// documents after the split and separator, and the same digest.
func TestFromTextIsTheFile(t *testing.T) {
	text := "First line.\n\nÉtude, 二 — and more\nsep\nlast part of it\n"
	path := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Split: SplitTrain}, {Split: SplitVal}, {Separator: "sep\n"}} {
		file, err := Load(context.Background(), path, opt)
		if err != nil {
			t.Fatal(err)
		}
		mem, err := FromText("notes", text, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(mem.Docs, file.Docs) || mem.SHA256 != file.SHA256 || mem.Separated != file.Separated ||
			mem.Format != FormatText || mem.Name != "notes" || mem.Split != file.Split {
			t.Errorf("%+v: memory %+v, file %+v", opt, mem, file)
		}
	}
}

// Documents in memory are the corpus a JSONL file of them is.
func TestFromDocumentsIsTheJSONL(t *testing.T) {
	docs := []string{"one document", "", "a second\nwith two lines", "ü"}
	var b strings.Builder
	for _, d := range docs {
		line, _ := json.Marshal(map[string]string{"text": d})
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := Load(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem, err := FromDocuments("docs", docs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mem.Docs, file.Docs) || mem.SHA256 != file.SHA256 || !mem.Separated || mem.Format != FormatJSONL {
		t.Errorf("memory %+v, file %+v", mem, file)
	}
}

// Token ids in memory are the corpus an llm.c token file of them is
// (GPT-2's while every id fits 16 bits, else Llama 3's).
func TestFromTokensIsTheFile(t *testing.T) {
	for _, ids := range [][]int32{{5, 0, 50256, 7}, {5, 0, 128000, 7}} {
		magic, version, width := uint32(20240520), uint32(1), 2
		if ids[2] > 65535 {
			magic, version, width = 20240801, 7, 4
		}
		file := make([]byte, tokenHeaderSize)
		binary.LittleEndian.PutUint32(file[0:], magic)
		binary.LittleEndian.PutUint32(file[4:], version)
		binary.LittleEndian.PutUint32(file[8:], uint32(len(ids)))
		for _, id := range ids {
			file = binary.LittleEndian.AppendUint32(file, uint32(id))[:len(file)+width]
		}
		path := filepath.Join(t.TempDir(), "ids.bin")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		want, err := Load(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := FromTokens("ids", ids)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.Tokens, want.Tokens) || c.Format != FormatTokens || c.SHA256 != want.SHA256 {
			t.Errorf("%v: memory %+v, file %+v", ids, c, want)
		}
	}
}

// Bad in-memory corpora are refused with the reason and the name.
func TestFromMemoryErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		load func() (*Corpus, error)
		want string
	}{
		{"empty text", func() (*Corpus, error) { return FromText("x", "", Options{}) }, "empty text"},
		{"not UTF-8", func() (*Corpus, error) { return FromText("x", "ab\xffc", Options{}) }, "invalid byte 0xff at byte offset 2"},
		{"bad split", func() (*Corpus, error) { return FromText("x", "abc", Options{Split: "test"}) }, `unknown split "test"`},
		{"only separators", func() (*Corpus, error) { return FromText("x", "--", Options{Separator: "-"}) }, "no text between the separators"},
		{"no documents", func() (*Corpus, error) { return FromDocuments("x", nil) }, "no documents"},
		{"empty documents", func() (*Corpus, error) { return FromDocuments("x", []string{"", ""}) }, "all 2 documents are empty"},
		{"document not UTF-8", func() (*Corpus, error) { return FromDocuments("x", []string{"ok", "\xc3"}) }, "document 1: not UTF-8"},
		{"no ids", func() (*Corpus, error) { return FromTokens("x", nil) }, "no token ids"},
		{"negative id", func() (*Corpus, error) { return FromTokens("x", []int32{1, -2}) }, "token 1: negative id -2"},
	} {
		_, err := c.load()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "corpus x") {
			t.Errorf("%s: %v, want an error with %q naming the corpus", c.name, err, c.want)
		}
	}
}

// TestDocsHashAllocatesOnce: digesting documents (every JSONL corpus, and
// every text cut at --separator, is digested so as it loads) allocates
// nothing per document (once 32 KiB each: 350,000 documents took 6 s).
func TestDocsHashAllocatesOnce(t *testing.T) {
	docs := make([]string, 1000)
	for i := range docs {
		docs[i] = strings.Repeat("x", i%50)
	}
	if n := testing.AllocsPerRun(3, func() { docsHash(docs) }); n > 10 {
		t.Errorf("docsHash of %d documents: %.0f allocations", len(docs), n)
	}
}

// CheckWhole refuses a split or a separator for documents and token ids,
// in the words Load uses for .jsonl and token files; a text passes.
func TestCheckWhole(t *testing.T) {
	text, err := FromText("t", "some text", Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := FromDocuments("d", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := FromTokens("i", []int32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Corpus{text, docs, ids} {
		if err := c.CheckWhole("", ""); err != nil {
			t.Errorf("%s with no split or separator: %v", c.Name, err)
		}
		if err := c.CheckWhole(SplitAll, ""); err != nil {
			t.Errorf("%s, split all: %v", c.Name, err)
		}
	}
	if err := text.CheckWhole(SplitVal, "\n"); err != nil {
		t.Errorf("text: %v", err)
	}
	wantErr(t, docs.CheckWhole(SplitVal, ""), "corpus d", `split "val"`, "only text corpora")
	wantErr(t, ids.CheckWhole(SplitTrain, ""), "corpus i", `split "train"`, "only text corpora")
	wantErr(t, docs.CheckWhole("", "\n\n"), "corpus d", "separator", "only a text corpus")
	wantErr(t, ids.CheckWhole("", "x"), "corpus i", "separator", "only a text corpus")
}

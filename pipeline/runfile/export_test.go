package runfile_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// exportNLLs are NLLs whose shortest decimals are long, tiny, huge or
// negative: each must come back from the text with the same bits.
var exportNLLs = []float32{1.5, 0.1, float32(math.Pi), math.Nextafter32(2, 3), math.SmallestNonzeroFloat32, 1e-7,
	-1e-4, 0, 123456.79, math.MaxFloat32}

// exportFile is a per-token file of len(exportNLLs) targets over two
// documents, with k top log-probabilities per target, and its decoder,
// whose texts have quotes, commas, newlines, leading spaces and HTML
// characters.
func exportFile(k int) (*runfile.PerTokenFile, func(int32) string) {
	f := &runfile.PerTokenFile{Header: runfile.PerTokenHeader{Model: "gpt2", Data: "data.txt", Mode: "documents", Ctx: 8,
		Stride: 8, Tokenizer: "gpt2-builtin", VocabSize: 1000, TopLogprobs: k,
		Config: &pipeline.RunConfig{Ctx: 8, Precision: "f32"}}}
	for i, nll := range exportNLLs {
		r := pipeline.TokenNLL{Doc: i / 6, Pos: i%6 + 1, Token: int32(i), NLL: nll}
		for j := range k {
			r.Top = append(r.Top, pipeline.TokenLogprob{ID: int32(999 - j), Logprob: []float32{-1e-6, -0.75, -math.E}[j]})
		}
		f.Tokens = append(f.Tokens, r)
	}
	texts := []string{`say "hi", then`, " the", "line\nbreak", "", "<a&b>", "\t", ",", `"`, "é", "x"}
	return f, func(id int32) string { return texts[id] }
}

// exportRecord is one JSONL record as a reader sees it.
type exportRecord struct {
	Doc   int              `json:"doc"`
	Pos   int              `json:"pos"`
	Token int32            `json:"token"`
	NLL   float32          `json:"nll"`
	Text  *string          `json:"text"`
	Top   [][2]json.Number `json:"top"`
}

// TestExportJSONL: the header line holds the file's header with its exact
// sum; every record parses back (encoding/json, float32) to the same bits,
// ids, texts and top log-probabilities; a record is written as a plain JSON
// object, checked against one typed by hand.
func TestExportJSONL(t *testing.T) {
	f, decode := exportFile(3)
	var buf bytes.Buffer
	if err := runfile.ExportPerToken(&buf, f, "jsonl", decode); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 1+len(f.Tokens) {
		t.Fatalf("%d lines for %d targets:\n%s", len(lines), len(f.Tokens), buf.String())
	}
	var head struct {
		Format        string                  `json:"format"`
		FormatVersion int                     `json:"format_version"`
		Header        *runfile.PerTokenHeader `json:"header"`
	}
	if !strings.HasPrefix(lines[0], `{"format":"wgpu-eval per-token export","format_version":1,"header":{`) {
		t.Errorf("the header line does not start with its mark: %.100s", lines[0])
	}
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&head); err != nil || head.Header == nil {
		t.Fatalf("header line %s: %v", lines[0], err)
	}
	h := head.Header
	sum := 0.0
	for _, nll := range exportNLLs {
		sum += float64(nll) // MaxFloat32 swamps the rest: the float64 sum is the exact one rounded
	}
	if h.Model != "gpt2" || h.Mode != "documents" || h.Tokenizer != "gpt2-builtin" || h.Targets != len(exportNLLs) ||
		h.TopLogprobs != 3 || h.VocabSize != 1000 || h.Config == nil || h.Config.Precision != "f32" ||
		h.NLLSum != sum || h.NLLSumExact == nil || h.NLLSumExact.Float64() != sum {
		t.Errorf("header line %s", lines[0])
	}
	for i, line := range lines[1:] {
		var r exportRecord
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("record %d %s: %v", i, line, err)
		}
		w := f.Tokens[i]
		if r.Doc != w.Doc || r.Pos != w.Pos || r.Token != w.Token || math.Float32bits(r.NLL) != math.Float32bits(w.NLL) ||
			r.Text == nil || *r.Text != decode(w.Token) || len(r.Top) != 3 {
			t.Fatalf("record %d %s, wrote %+v text %q", i, line, w, decode(w.Token))
		}
		for j, x := range r.Top {
			id, err1 := strconv.ParseInt(string(x[0]), 10, 32)
			lp, err2 := strconv.ParseFloat(string(x[1]), 32)
			if err1 != nil || err2 != nil || int32(id) != w.Top[j].ID || math.Float32bits(float32(lp)) != math.Float32bits(w.Top[j].Logprob) {
				t.Errorf("record %d top %d: %v, wrote %+v", i, j, x, w.Top[j])
			}
		}
	}
	want := `{"doc":0,"pos":1,"token":0,"nll":1.5,"text":"say \"hi\", then","top":[[999,-1e-06],[998,-0.75],[997,-2.7182817]]}`
	if lines[1] != want {
		t.Errorf("first record\n%s\nwant\n%s", lines[1], want)
	}
	if want := `"nll":1e-45,"text":"<a&b>"`; !strings.Contains(lines[5], want) {
		t.Errorf("record 4 %s lacks %s", lines[5], want)
	}

	// Without top log-probabilities or a decoder: neither key.
	f.Header.TopLogprobs = 0
	for i := range f.Tokens {
		f.Tokens[i].Top = nil
	}
	buf.Reset()
	if err := runfile.ExportPerToken(&buf, f, "jsonl", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(buf.String(), "\n")[1]; got != `{"doc":0,"pos":1,"token":0,"nll":1.5}` {
		t.Errorf("plain record %s", got)
	}
}

// TestExportCSV: the header row names the columns; every row parses back
// (encoding/csv) to the same bits, ids and texts, whatever quotes, commas and
// newlines the texts hold; without a decoder or top log-probabilities the
// columns are doc,pos,token,nll.
func TestExportCSV(t *testing.T) {
	f, decode := exportFile(2)
	var buf bytes.Buffer
	if err := runfile.ExportPerToken(&buf, f, "csv", decode); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, buf.String())
	}
	head := "doc,pos,token,nll,text,top_id_1,top_logprob_1,top_id_2,top_logprob_2"
	if len(rows) != 1+len(f.Tokens) || strings.Join(rows[0], ",") != head {
		t.Fatalf("%d rows, header %q; want %d rows, %q", len(rows), rows[0], 1+len(f.Tokens), head)
	}
	for i, row := range rows[1:] {
		w := f.Tokens[i]
		doc, _ := strconv.Atoi(row[0])
		pos, _ := strconv.Atoi(row[1])
		tok, _ := strconv.Atoi(row[2])
		nll, err := strconv.ParseFloat(row[3], 32)
		if err != nil || doc != w.Doc || pos != w.Pos || int32(tok) != w.Token || math.Float32bits(float32(nll)) != math.Float32bits(w.NLL) ||
			row[4] != decode(w.Token) {
			t.Fatalf("row %d %q, wrote %+v text %q", i, row, w, decode(w.Token))
		}
		for j, x := range w.Top {
			id, _ := strconv.Atoi(row[5+2*j])
			lp, err := strconv.ParseFloat(row[6+2*j], 32)
			if err != nil || int32(id) != x.ID || math.Float32bits(float32(lp)) != math.Float32bits(x.Logprob) {
				t.Errorf("row %d top %d: %q %q, wrote %+v", i, j, row[5+2*j], row[6+2*j], x)
			}
		}
	}
	// RFC 4180 by hand: quotes doubled inside a quoted field, newlines kept.
	for _, want := range []string{"\n0,1,0,1.5,\"say \"\"hi\"\", then\",999,-1e-06,", "\"line\nbreak\"", `,""""`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("CSV lacks %q:\n%s", want, buf.String())
		}
	}

	f.Header.TopLogprobs = 0
	for i := range f.Tokens {
		f.Tokens[i].Top = nil
	}
	buf.Reset()
	if err := runfile.ExportPerToken(&buf, f, "csv", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Split(buf.String(), "\n")[:3], "\n"); got != "doc,pos,token,nll\n0,1,0,1.5\n0,2,1,0.1" {
		t.Errorf("plain CSV begins\n%s", got)
	}
}

// TestExportRefuses: an unknown format, a record with the wrong number of top
// log-probabilities and one no run writes (NaN) are errors that say so, and
// nothing is written; WriteExport names the path it cannot write.
func TestExportRefuses(t *testing.T) {
	f, _ := exportFile(2)
	var buf bytes.Buffer
	if err := runfile.ExportPerToken(&buf, f, "parquet", nil); err == nil || !strings.Contains(err.Error(), `unknown export format "parquet"`) {
		t.Errorf("format parquet: err = %v", err)
	}
	g := *f
	g.Tokens = append([]pipeline.TokenNLL(nil), f.Tokens...)
	g.Tokens[3].Top = g.Tokens[3].Top[:1]
	if err := runfile.ExportPerToken(&buf, &g, "csv", nil); err == nil || !strings.Contains(err.Error(), "target 3 has 1 top log-probabilities") {
		t.Errorf("a short top list: err = %v", err)
	}
	g.Tokens[3] = f.Tokens[3]
	g.Tokens[5].NLL = float32(math.NaN())
	if err := runfile.ExportPerToken(&buf, &g, "jsonl", nil); err == nil || !strings.Contains(err.Error(), "target 5") {
		t.Errorf("a NaN NLL: err = %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("refused exports wrote %q", buf.String())
	}
	dir := t.TempDir()
	if err := runfile.WriteExport(dir, f, "csv", nil); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("export to a folder: err = %v", err)
	}
}

// TestWriteExport: the file WriteExport writes is what ExportPerToken writes,
// with no temporary file left; a refused export leaves the old file.
func TestWriteExport(t *testing.T) {
	f, decode := exportFile(1)
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := runfile.WriteExport(path, f, "jsonl", decode); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := runfile.ExportPerToken(&want, f, "jsonl", decode); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("file (%v):\n%s\nwant\n%s", err, got, want.String())
	}
	f.Tokens[0].NLL = float32(math.Inf(1))
	if err := runfile.WriteExport(path, f, "jsonl", decode); err == nil {
		t.Error("an infinite NLL was exported")
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, got) {
		t.Error("a refused export changed the file")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files in the folder, want the export only", len(entries))
	}
}

// TestExportPartialUTF8: a token that is part of a UTF-8 character (GPT-2's
// byte-level pieces of an emoji) keeps its bytes in CSV, so the texts of
// the tokens join to the exact text, and shows as U+FFFD for each byte in
// JSONL, whose every line is valid UTF-8 JSON (README, export's help).
func TestExportPartialUTF8(t *testing.T) {
	whole := "a😀b"
	pieces := []string{"a", whole[1:3], whole[3:5], "b"} // the emoji cut in two
	f := &runfile.PerTokenFile{Header: runfile.PerTokenHeader{Mode: "documents", Tokenizer: "gpt2-builtin"}}
	for i := range pieces {
		f.Tokens = append(f.Tokens, pipeline.TokenNLL{Pos: i, Token: int32(i), NLL: 1})
	}
	decode := func(id int32) string { return pieces[id] }

	var buf bytes.Buffer
	if err := runfile.ExportPerToken(&buf, f, "csv", decode); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var joined string
	for _, r := range rows[1:] {
		joined += r[4]
	}
	if joined != whole {
		t.Errorf("CSV texts join to %q, want %q", joined, whole)
	}

	buf.Reset()
	if err := runfile.ExportPerToken(&buf, f, "jsonl", decode); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var texts []string
	for _, l := range lines[1:] {
		var r exportRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil || !utf8.ValidString(l) || r.Text == nil {
			t.Fatalf("line %q: %v", l, err)
		}
		texts = append(texts, *r.Text)
	}
	if want := []string{"a", "\ufffd\ufffd", "\ufffd\ufffd", "b"}; !slices.Equal(texts, want) {
		t.Errorf("JSONL texts %q, want %q", texts, want)
	}
}

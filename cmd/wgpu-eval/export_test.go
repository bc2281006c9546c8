package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// exportText has quotes, commas and newlines in its tokens' texts.
const exportText = "He said, \"hi, there\"\n\nthen: \"bye\", and left.\n"

// writeExportFile writes a per-token file of the built-in tokenizer with k top
// log-probabilities: the targets are exportText's tokens after the first,
// with NLLs whose shortest decimals are long.
func writeExportFile(t *testing.T, k int) (string, *runfile.PerTokenFile) {
	t.Helper()
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(exportText)
	f := &runfile.PerTokenFile{Header: runfile.PerTokenHeader{Model: "gpt2", Data: "x.txt", Mode: "stream", Ctx: 1024, Stride: 1024,
		Tokenizer: tokenizer.BuiltinID, VocabSize: tok.VocabSize(), TopLogprobs: k}}
	for i, id := range ids[1:] {
		r := pipeline.TokenNLL{Pos: i + 1, Token: id, NLL: float32(math.Sqrt(float64(i + 2)))}
		for j := range k {
			r.Top = append(r.Top, pipeline.TokenLogprob{ID: int32(50000 + j), Logprob: -float32(math.Log(float64(j + 2)))})
		}
		f.Tokens = append(f.Tokens, r)
	}
	path := filepath.Join(t.TempDir(), "run.ptk")
	if err := runfile.WritePerToken(path, f); err != nil {
		t.Fatal(err)
	}
	return path, f
}

// TestExportJSONLAndCSV: export writes every record of a per-token file as
// JSONL to stdout and as CSV to --output; parsed back with encoding/json and
// encoding/csv, the NLLs and log-probabilities have the file's bits, and the
// texts put together are the corpus after its first token.
func TestExportJSONLAndCSV(t *testing.T) {
	ptk, f := writeExportFile(t, 2)
	tok, _ := tokenizer.GPT2()
	rest := exportText[len(tok.Decode(tok.Encode(exportText)[:1])):]

	out, stderr, err := cli(t, "", "export", "--format", "jsonl", ptk)
	if err != nil {
		t.Fatalf("export jsonl: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var head struct {
		Header runfile.PerTokenHeader `json:"header"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.Header.Targets != len(f.Tokens) ||
		head.Header.Tokenizer != tokenizer.BuiltinID || head.Header.TopLogprobs != 2 || head.Header.Model != "gpt2" {
		t.Fatalf("header line %s (%v)", lines[0], err)
	}
	if len(lines) != 1+len(f.Tokens) {
		t.Fatalf("%d lines for %d targets", len(lines), len(f.Tokens))
	}
	var text strings.Builder
	for i, line := range lines[1:] {
		var r struct {
			Doc, Pos int
			Token    int32
			NLL      float32
			Text     string
			Top      [][2]float64
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record %d %s: %v", i, line, err)
		}
		w := f.Tokens[i]
		if r.Pos != w.Pos || r.Token != w.Token || math.Float32bits(r.NLL) != math.Float32bits(w.NLL) || len(r.Top) != 2 ||
			int32(r.Top[1][0]) != w.Top[1].ID || math.Float32bits(float32(r.Top[1][1])) != math.Float32bits(w.Top[1].Logprob) {
			t.Fatalf("record %d %s, wrote %+v", i, line, w)
		}
		text.WriteString(r.Text)
	}
	if text.String() != rest {
		t.Errorf("JSONL texts make %q, want %q", text.String(), rest)
	}

	csvPath := filepath.Join(t.TempDir(), "run.csv")
	out, stderr, err = cli(t, "", "export", ptk, "--format", "csv", "--output", csvPath)
	if err != nil || !strings.Contains(out, csvPath) || !strings.Contains(out, strconv.Itoa(len(f.Tokens))+" targets") {
		t.Fatalf("export csv: %v, stdout %q, stderr %q", err, out, stderr)
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, data)
	}
	if got := strings.Join(rows[0], ","); got != "doc,pos,token,nll,text,top_id_1,top_logprob_1,top_id_2,top_logprob_2" || len(rows) != 1+len(f.Tokens) {
		t.Fatalf("header row %s, %d rows", got, len(rows))
	}
	text.Reset()
	for i, row := range rows[1:] {
		nll, err := strconv.ParseFloat(row[3], 32)
		if err != nil || row[2] != strconv.Itoa(int(f.Tokens[i].Token)) || math.Float32bits(float32(nll)) != math.Float32bits(f.Tokens[i].NLL) {
			t.Fatalf("row %d %q, wrote %+v", i, row, f.Tokens[i])
		}
		text.WriteString(row[4])
	}
	if text.String() != rest {
		t.Errorf("CSV texts make %q, want %q", text.String(), rest)
	}
}

// TestExportUsage: a missing or unknown --format, no file or two, and an
// output that is the input are usage errors (exit 2) that say what to do; a
// file that is missing or not a per-token file is an error naming it (exit 1);
// --help goes to stdout; the command list names export.
func TestExportUsage(t *testing.T) {
	ptk, _ := writeExportFile(t, 0)
	junk := filepath.Join(t.TempDir(), "junk.ptk")
	if err := os.WriteFile(junk, []byte("not msgpack"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.ptk")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{ptk}, 2, "--format jsonl or --format csv"},
		{[]string{"--format", "xml", ptk}, 2, `unknown export format "xml" (formats: jsonl, csv)`},
		{[]string{"--format", "csv"}, 2, "give one --per-token file"},
		{[]string{"--format", "csv", ptk, ptk}, 2, "give one --per-token file"},
		{[]string{"--format", "csv", "--output", ptk, ptk}, 2, "is the input"},
		{[]string{"--format", "csv", "--bogus", ptk}, 2, "bogus"},
		{[]string{"--format", "jsonl", missing}, 1, missing},
		{[]string{"--format", "jsonl", junk}, 1, junk + ": not a per-token file"},
	} {
		out, _, err := cli(t, "", append([]string{"export"}, c.args...)...)
		if exitCode(err) != c.code || err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("export %q: exit %d, err %v, stdout %q; want exit %d and %q", c.args, exitCode(err), err, out, c.code, c.want)
		}
	}
	if data, err := os.ReadFile(ptk); err != nil || len(data) == 0 {
		t.Errorf("the input was harmed: %d bytes, %v", len(data), err)
	}
	out, stderr, err := cli(t, "", "help", "export")
	if exitCode(err) != 0 || stderr != "" || !strings.Contains(out, "Usage: wgpu-eval export") || !strings.Contains(out, "--output") {
		t.Errorf("help export: exit %d, stdout %q, stderr %q", exitCode(err), out, stderr)
	}
	if out, _, _ := cli(t, "", "help"); !strings.Contains(out, "wgpu-eval export FILE") {
		t.Errorf("help does not list export:\n%s", out)
	}
}

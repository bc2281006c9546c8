package runfile_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// FuzzExportPerToken: whatever per-token file ParsePerToken accepts and
// whatever texts its tokens decode to, export writes JSON Lines whose every
// line is one valid UTF-8 JSON object (the header, then the records with
// their numbers' bits) and CSV that encoding/csv reads back row by row with
// the same numbers and texts (encoding/csv turns a \r\n inside a quoted
// field into \n; other readers, Python's csv among them, keep it).
func FuzzExportPerToken(f *testing.F) {
	for i, seed := range seedPerTokenFiles(f) {
		f.Add(seed, []string{"", "a,\"b\"\r\n=c", " x", "\xf0\x9f", "\u2028<&>"}[i%5])
	}
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		p, err := runfile.ParsePerToken(data)
		if err != nil {
			return
		}
		decode := func(id int32) string { return text + strconv.Itoa(int(id%3)) }
		var buf bytes.Buffer
		if err := runfile.ExportPerToken(&buf, p, "jsonl", decode); err != nil {
			if strings.Contains(err.Error(), "MarshalJSON") { // a header time JSON cannot hold (year past 9999)
				return
			}
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.HasSuffix(out, "\n") || !utf8.ValidString(out) {
			t.Fatalf("JSONL not UTF-8 lines: %q", out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 1+len(p.Tokens) {
			t.Fatalf("%d lines for %d targets", len(lines), len(p.Tokens))
		}
		for i, line := range lines {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("line %d %q: %v", i, line, err)
			}
			if i == 0 {
				continue
			}
			var r exportRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			w := p.Tokens[i-1]
			if r.Doc != w.Doc || r.Pos != w.Pos || r.Token != w.Token || math.Float32bits(r.NLL) != math.Float32bits(w.NLL) ||
				r.Text == nil || *r.Text != validPerByte(decode(w.Token)) {
				t.Fatalf("record %d %s, wrote %+v", i-1, line, w)
			}
			if len(r.Top) != len(w.Top) {
				t.Fatalf("record %d: %d top, wrote %d", i-1, len(r.Top), len(w.Top))
			}
		}

		buf.Reset()
		if err := runfile.ExportPerToken(&buf, p, "csv", decode); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("CSV: %v", err)
		}
		if len(rows) != 1+len(p.Tokens) {
			t.Fatalf("%d CSV rows for %d targets", len(rows), len(p.Tokens))
		}
		for i, row := range rows[1:] {
			w := p.Tokens[i]
			if len(row) != len(rows[0]) {
				t.Fatalf("row %d has %d fields, the header %d", i, len(row), len(rows[0]))
			}
			nll, err := strconv.ParseFloat(row[3], 32)
			if err != nil || row[0] != strconv.Itoa(w.Doc) || row[1] != strconv.Itoa(w.Pos) || row[2] != strconv.Itoa(int(w.Token)) ||
				math.Float32bits(float32(nll)) != math.Float32bits(w.NLL) || row[4] != strings.ReplaceAll(decode(w.Token), "\r\n", "\n") {
				t.Fatalf("row %d %q, wrote %+v text %q", i, row, w, decode(w.Token))
			}
			for j, x := range w.Top {
				lp, err := strconv.ParseFloat(row[6+2*j], 32)
				if err != nil || row[5+2*j] != strconv.Itoa(int(x.ID)) || math.Float32bits(float32(lp)) != math.Float32bits(x.Logprob) {
					t.Fatalf("row %d top %d: %q %q, wrote %+v", i, j, row[5+2*j], row[6+2*j], x)
				}
			}
		}
	})
}

// validPerByte is s with every byte that is not part of a UTF-8 character
// replaced by U+FFFD, as JSON text holds it (README: once per byte).
func validPerByte(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

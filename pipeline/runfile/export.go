package runfile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// ExportFormats are the formats ExportPerToken writes (wgpu-eval export
// --format): JSON Lines and CSV.
var ExportFormats = []string{"jsonl", "csv"}

// CheckExportFormat reports a format that is not one of ExportFormats.
func CheckExportFormat(format string) error {
	for _, f := range ExportFormats {
		if format == f {
			return nil
		}
	}
	return fmt.Errorf("unknown export format %q (formats: jsonl, csv)", format)
}

// ExportFormat and ExportFormatVersion mark the first line of a JSON Lines
// export (ExportPerToken): "format" and "format_version", as a result's
// JSON has them (pipeline.ResultFormat). The CSV has no place for them.
const (
	ExportFormat        = "wgpu-eval per-token export"
	ExportFormatVersion = 1
)

// ExportPerToken writes f's records to w in format, for tools that read no
// msgpack (wgpu-eval export). decode, when not nil, gives a token's text,
// written beside its id. Every number is written so that it parses back to
// the same bits: ids and positions as integers, NLLs and log-probabilities
// as the shortest decimal that rounds to the same float32.
//
//   - "jsonl": a first line {"format": ExportFormat, "format_version":
//     ExportFormatVersion, "header": {...}} holding f's header as in the
//     per-token file (model, data, mode, ctx, stride, tokenizer, targets,
//     nll_sum, nll_sum_exact, vocab_size, top_logprobs, shard, config,
//     provenance: the result JSON's names), then one object per target in
//     corpus order: {"doc", "pos", "token", "nll"}, with "text" when decode is
//     set and "top": [[id, logprob], ...] (highest first) when the file has
//     top log-probabilities. JSON strings hold Unicode: a token that decodes
//     to part of a multi-byte character shows as U+FFFD there.
//   - "csv": a header row doc,pos,token,nll (then text when decode is set,
//     then top_id_1,top_logprob_1,...,top_id_K,top_logprob_K when the file has
//     K top log-probabilities per target), then one row per target, quoted as
//     RFC 4180 says (encoding/csv, lines ending in \n); text is the token's
//     bytes as they are. The file's header is not in the CSV.
//
// As in Marshal, the header's target count and sums are those of f.Tokens;
// every record must have the header's number of top log-probabilities and
// pass the checks ReadPerToken makes (finite numbers, ids in the vocabulary),
// so nothing is written for a file that has a record that does not.
// Output is buffered; nothing of w is closed.
func ExportPerToken(w io.Writer, f *PerTokenFile, format string, decode func(int32) string) error {
	if err := CheckExportFormat(format); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	k := f.Header.TopLogprobs
	if err := pipeline.CheckTopLogprobs(k, 0); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	for i, t := range f.Tokens {
		if len(t.Top) != k {
			return fmt.Errorf("export: target %d has %d top log-probabilities, the header says %d", i, len(t.Top), k)
		}
		if err := t.Check(f.Header.VocabSize); err != nil {
			return fmt.Errorf("export: target %d (document %d position %d): %w", i, t.Doc, t.Pos, err)
		}
	}
	if format == "csv" {
		return exportCSV(w, f, decode)
	}
	return exportJSONL(w, f, decode)
}

// WriteExport writes f's records in format (see ExportPerToken) to path
// atomically, as WritePerToken does, without holding the whole output in
// memory.
func WriteExport(path string, f *PerTokenFile, format string, decode func(int32) string) error {
	err := atomicfile.WriteFunc(path, func(w io.Writer) error {
		return ExportPerToken(w, f, format, decode)
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// exportJSONL writes f as JSON Lines (see ExportPerToken).
func exportJSONL(w io.Writer, f *PerTokenFile, decode func(int32) string) error {
	h := f.Header
	var sum exactsum.Sum
	for _, t := range f.Tokens {
		sum.Add(float64(t.NLL))
	}
	h.Targets, h.NLLSum, h.NLLSumExact = len(f.Tokens), sum.Float64(), &sum
	bw := bufio.NewWriterSize(w, 1<<16)
	// One encoder for the header and every text: no HTML escaping of <, >
	// and & in token texts.
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Format        string         `json:"format"`
		FormatVersion int            `json:"format_version"`
		Header        PerTokenHeader `json:"header"`
	}{ExportFormat, ExportFormatVersion, h}); err != nil {
		return fmt.Errorf("export: header: %w", err)
	}
	bw.Write(js.Bytes()) // Encode ends the line
	var b []byte
	for _, t := range f.Tokens {
		b = append(b[:0], `{"doc":`...)
		b = strconv.AppendInt(b, int64(t.Doc), 10)
		b = append(b, `,"pos":`...)
		b = strconv.AppendInt(b, int64(t.Pos), 10)
		b = append(b, `,"token":`...)
		b = strconv.AppendInt(b, int64(t.Token), 10)
		b = append(b, `,"nll":`...)
		b = appendFloat32(b, t.NLL)
		if decode != nil {
			js.Reset()
			if err := enc.Encode(decode(t.Token)); err != nil {
				return fmt.Errorf("export: text of token %d: %w", t.Token, err)
			}
			b = append(b, `,"text":`...)
			b = append(b, bytes.TrimSuffix(js.Bytes(), []byte{'\n'})...)
		}
		if len(t.Top) > 0 {
			b = append(b, `,"top":[`...)
			for j, x := range t.Top {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				b = strconv.AppendInt(b, int64(x.ID), 10)
				b = append(b, ',')
				b = appendFloat32(b, x.Logprob)
				b = append(b, ']')
			}
			b = append(b, ']')
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// exportCSV writes f as CSV (see ExportPerToken).
func exportCSV(w io.Writer, f *PerTokenFile, decode func(int32) string) error {
	k := f.Header.TopLogprobs
	cw := csv.NewWriter(w) // buffered; UseCRLF false keeps a \r\n in a text as it is
	row := []string{"doc", "pos", "token", "nll"}
	if decode != nil {
		row = append(row, "text")
	}
	for j := 1; j <= k; j++ {
		row = append(row, fmt.Sprintf("top_id_%d", j), fmt.Sprintf("top_logprob_%d", j))
	}
	if err := cw.Write(row); err != nil {
		return err
	}
	for _, t := range f.Tokens {
		row = append(row[:0], strconv.Itoa(t.Doc), strconv.Itoa(t.Pos), strconv.Itoa(int(t.Token)), formatFloat32(t.NLL))
		if decode != nil {
			row = append(row, decode(t.Token))
		}
		for _, x := range t.Top {
			row = append(row, strconv.Itoa(int(x.ID)), formatFloat32(x.Logprob))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// appendFloat32 appends x as the shortest decimal that parses back to x as a
// float32 (strconv's 'g' format: 3.25, 1e-05, valid JSON and CSV numbers; x
// is finite, TokenNLL.Check saw to it).
func appendFloat32(b []byte, x float32) []byte {
	return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
}

// formatFloat32 is appendFloat32 as a string.
func formatFloat32(x float32) string {
	return strconv.FormatFloat(float64(x), 'g', -1, 32)
}

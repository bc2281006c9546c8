package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

const exportUsage = `Usage: wgpu-eval export --format jsonl|csv [--output OUT] FILE.ptk

Writes the records of a --per-token file as JSON Lines or CSV, for tools that
read no msgpack (Python's json and csv modules, pandas, a spreadsheet), to
stdout or to --output OUT (written atomically: a complete temporary file
renamed). Every NLL and log-probability is the shortest decimal that parses
back to the same float32.

  jsonl  a first line {"format": "wgpu-eval per-token export",
         "format_version": 1, "header": {...}} (model, data, mode, ctx,
         stride, bos_each_window, tokenizer, targets, nll_sum,
         nll_sum_exact, vocab_size, top_logprobs, shard, config,
         provenance: the file's header, a field there only when the file
         has it), then one
         object per target in corpus order:
         {"doc", "pos", "token", "nll", "text", "top": [[id, logprob], ...]}
  csv    a header row doc,pos,token,nll,text (then top_id_1,top_logprob_1,...
         with --top-logprobs), one row per target, quoted as RFC 4180 says

"text" is the token's text, there when the file's tokenizer is the built-in
GPT-2 one; "top" the position's top log-probabilities, there when the file has
them (--top-logprobs). A token that is part of a UTF-8 character has U+FFFD
for each of its bytes in JSON; CSV keeps the bytes, so a CSV of such tokens is
not UTF-8: in Python, open it with errors="surrogateescape"; in pandas,
read_csv(path, encoding_errors="surrogateescape", keep_default_na=False), the
last so that the tokens "null", "NA", "nan" and "None" stay text.

Example:
  wgpu-eval --per-token run.ptk --top-logprobs 5
  wgpu-eval export --format jsonl run.ptk | head -3
  wgpu-eval export --format csv --output run.csv run.ptk

Flags:
`

func runExport(args []string, stdout io.Writer) error {
	var format, output string
	register := func(fs *pflag.FlagSet) {
		fs.StringVar(&format, "format", "", "output `FORMAT`: jsonl or csv (required)")
		fs.StringVarP(&output, "output", "o", "", "write to `FILE` instead of stdout (- for stdout)")
	}
	files, err := parseFlagsArgs("export", exportUsage, register, args, stdout)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageError{fmt.Errorf("export: give one --per-token file (got %d arguments)", len(files))}
	}
	if format == "" {
		return usageError{errors.New("export: give --format jsonl or --format csv")}
	}
	if err := runfile.CheckExportFormat(format); err != nil {
		return usageError{fmt.Errorf("export: %w", err)}
	}
	in := files[0]
	if err := notClobbering("export", []clobber.File{{Role: "--output", Path: output}}, []clobber.File{{Role: "the input", Path: in}}); err != nil {
		return err
	}
	f, err := runfile.ReadPerToken(in)
	if err != nil {
		return err
	}
	decode, err := tokenDecoder(f.Header.Tokenizer)
	if err != nil {
		return err
	}
	if output == "" || output == "-" {
		if err := runfile.ExportPerToken(stdout, f, format, decode); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		return nil
	}
	if err := runfile.WriteExport(output, f, format, decode); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s of %s as %s\n", output, pipeline.Count(len(f.Tokens), "target"), in, format)
	return nil
}

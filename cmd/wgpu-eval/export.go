package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

const exportUsage = `Usage: wgpu-eval export --format jsonl|csv [--output OUT] FILE.ptk

Writes the records of a --per-token file as JSON Lines or CSV, for tools that
read no msgpack (Python's json and csv modules, pandas, a spreadsheet), to
stdout or to --output OUT (written atomically: a complete temporary file
renamed). Every NLL and log-probability is the shortest decimal that parses
back to the same float32.

  jsonl  a first line {"header": {...}} (model, data, mode, ctx, stride,
         tokenizer, targets, nll_sum, top_logprobs, config, provenance: the
         file's header), then one object per target in corpus order:
         {"doc", "pos", "token", "nll", "text", "top": [[id, logprob], ...]}
  csv    a header row doc,pos,token,nll,text (then top_id_1,top_logprob_1,...
         with --top-logprobs), one row per target, quoted as RFC 4180 says

"text" is the token's text, there when the file's tokenizer is the built-in
GPT-2 one; "top" the position's top log-probabilities, there when the file has
them (--top-logprobs).

Example:
  wgpu-eval --per-token run.ptk --top-logprobs 5
  wgpu-eval export --format jsonl run.ptk | head -3
  wgpu-eval export --format csv --output run.csv run.ptk

Flags:
`

func runExport(args []string, stdout io.Writer) error {
	var format, output string
	fs := pflag.NewFlagSet("export", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // pflag's messages come back as errors
	fs.SortFlags = false
	fs.StringVar(&format, "format", "", "output `FORMAT`: jsonl or csv (required)")
	fs.StringVarP(&output, "output", "o", "", "write to `FILE` instead of stdout (- for stdout)")
	fs.Usage = func() {
		fmt.Fprint(stdout, exportUsage)
		printFlags(stdout, fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errUsageShown
		}
		return usageError{fmt.Errorf("export: %w", err)}
	}
	if fs.NArg() != 1 {
		return usageError{fmt.Errorf("export: give one --per-token file (got %d arguments)", fs.NArg())}
	}
	if format == "" {
		return usageError{errors.New("export: give --format jsonl or --format csv")}
	}
	if err := runfile.CheckExportFormat(format); err != nil {
		return usageError{fmt.Errorf("export: %w", err)}
	}
	in := fs.Arg(0)
	if output != "" && output != "-" {
		if ofi, err := os.Stat(output); err == nil {
			if ifi, err := os.Stat(in); err == nil && os.SameFile(ofi, ifi) {
				return usageError{fmt.Errorf("export: the output %s is the input %s: it would be overwritten", output, in)}
			}
		}
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

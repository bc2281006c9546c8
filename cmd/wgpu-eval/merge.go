package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

const mergeUsage = `Usage: wgpu-eval merge [--json OUT] SHARD.json...
       wgpu-eval merge --per-token OUT SHARD.ptk...

Adds the --json results of the shards of one run (wgpu-eval --shard I/N ...
--json SHARD.json, one per shard) into the result of the whole run: the
exact NLL sums (nll_sum_exact) and the counts added without rounding, so the
merged result has the bits of the run unsharded. With --per-token OUT, merges
the shards' --per-token files instead into the per-token file of the whole
run, every target in corpus order. Refuses shards of different runs (model
weights, corpus, tokenizer, method, --bos-each-window, ctx, stride,
precision, shard count; the model's weights and the corpus by sha256, not
by path) and a missing or doubled shard, naming it and its files.

Example:
  for i in 0 1 2; do wgpu-eval --shard $i/3 --json shard-$i.json --per-token shard-$i.ptk & done; wait
  wgpu-eval merge --json all.json shard-*.json
  wgpu-eval merge --per-token all.ptk shard-*.ptk

Flags:
`

func runMerge(args []string, stdout, stderr io.Writer) error {
	var jsonOut, perTokenOut string
	register := func(fs *pflag.FlagSet) {
		fs.StringVar(&jsonOut, "json", "", "also write the merged result as JSON to FILE (- for stdout)")
		fs.StringVar(&perTokenOut, "per-token", "", "merge the shards' --per-token files (the arguments) into FILE instead")
	}
	files, err := parseFlagsArgs("merge", mergeUsage, register, args, stdout)
	if err != nil {
		return err
	}
	jsonOut = asStdout(jsonOut, stdout)
	var inputs []clobber.File
	for _, f := range files {
		inputs = append(inputs, clobber.File{Role: "the input", Path: f})
	}
	if err := notClobbering("merge", []clobber.File{{Role: "--json", Path: jsonOut}, {Role: "--per-token", Path: perTokenOut}}, inputs); err != nil {
		return err
	}
	if perTokenOut != "" {
		if perTokenOut == "-" {
			return usageError{errors.New("merge --per-token -: standard output cannot take a per-token file; name a file (a FIFO or /dev/fd/N pipes it)")}
		}
		if jsonOut != "" {
			return usageError{errors.New("merge: --per-token merges per-token files and --json result files: run merge once for each")}
		}
		if len(files) == 0 {
			return usageError{errors.New("merge --per-token: give the shards' --per-token files")}
		}
		return mergePerToken(perTokenOut, files, stdout)
	}
	if len(files) == 0 {
		return usageError{errors.New("merge: give the shards' --json result files")}
	}
	var rs []*pipeline.Result
	for _, f := range files {
		r, err := readResult(f)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	m, err := runfile.MergeFiles(rs, files)
	if err != nil {
		return err
	}
	summary := stdout
	if jsonOut == "-" {
		summary = stderr
	}
	fmt.Fprintln(summary, formatSummary(m, 0)+fmt.Sprintf("  (%s merged)", pipeline.Count(len(rs), "shard")))
	if jsonOut != "" {
		return writeJSON(jsonOut, stdout, m)
	}
	return nil
}

// readResult reads one --json result file; a FIFO or a device is refused
// before it is opened.
func readResult(path string) (*pipeline.Result, error) {
	data, err := infile.ReadFile(path, runfile.MaxResultBytes)
	var tl *infile.TooLargeError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a wgpu-eval result", infile.Quote(path), runfile.MaxResultBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	r, err := runfile.ParseResult(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", infile.Quote(path), err)
	}
	return r, nil
}

// mergePerToken merges the shards' per-token files into out.
func mergePerToken(out string, files []string, stdout io.Writer) error {
	var fs []*runfile.PerTokenFile
	for _, path := range files {
		f, err := runfile.ReadPerToken(path)
		if err != nil {
			return err
		}
		fs = append(fs, f)
	}
	m, err := runfile.MergePerTokenFiles(fs, files)
	if err != nil {
		return err
	}
	if err := runfile.WritePerToken(out, m); err != nil {
		return err
	}
	mean := 0.0
	if m.Header.Targets > 0 {
		mean = m.Header.NLLSum / float64(m.Header.Targets)
	}
	fmt.Fprintf(stdout, "%s: per-token records of %s merged, %s, mean NLL %.4f\n", infile.Quote(out), pipeline.Count(len(fs), "shard"), pipeline.Count(m.Header.Targets, "target"), mean)
	return nil
}

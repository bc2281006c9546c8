package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// evalFlags are the flags of `wgpu-eval eval`.
type evalFlags struct {
	model, data, split, mode, device  string
	precision, matrixUnits            string
	jsonOut, separator, tinyShake     string
	ctx, stride, maxTokens            int
	threads, batchTokens, topLogprobs int
	quiet, offline, noCache           bool
	bosEachWindow                     bool
	insecureSkipVerify                bool
	shard, checkpoint, perToken       string
	perDocument                       string
}

func (f *evalFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.model, "model", "m", "gpt2", "model: a hub id (gpt2, gpt2-medium, org/name@rev), a folder with config.json + model.safetensors, a .safetensors file, or an llm.c .bin checkpoint")
	fs.StringVarP(&f.data, "data", "d", corpus.TinyShakespeare, "corpus: tinyshakespeare, a text file, a .jsonl file (field \"text\"), an llm.c token file, or - for stdin")
	fs.StringVar(&f.split, "split", "", "part of a text corpus: all (the default), train (first 90%) or val (last 10%: what nanoGPT's recipe scores on tinyshakespeare)")
	fs.StringVar(&f.mode, "mode", string(pipeline.ModeStream), "evaluation method: stream (non-overlapping windows), strided (sliding windows), documents (each document alone)")
	fs.IntVar(&f.ctx, "ctx", 0, "window length in tokens (0: the model's n_positions)")
	fs.IntVar(&f.stride, "stride", 0, "window step for --mode strided, and for long documents in --mode documents (0: ctx/2; there at most ctx-1, so that every token is predicted); refused in --mode stream, whose windows do not overlap")
	fs.BoolVar(&f.bosEachWindow, "bos-each-window", false, "start every window with the tokenizer's BOS (else <|endoftext|>) as context, as llama.cpp's perplexity does: a window is the BOS and up to ctx-1 corpus tokens, all of them scored (llama.cpp instead overwrites each chunk's first token and scores its second half); not what Hugging Face's tokenizer(text) evaluation does; --stride at most ctx-1")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "keep only the first N tokens of the corpus (0: all)")
	fs.StringVar(&f.device, "device", "auto", "where to run: auto (the best hardware GPU, else the CPU), cpu, gpu (the best Vulkan adapter, software ones included), gpu:N (N as listed by 'wgpu-eval devices') or all (every hardware GPU at once)")
	fs.StringVar(&f.precision, "precision", "", "weights: auto (the default: f16 on a GPU with shader-f16, else f32), f16 or f32 on a GPU, activations and sums f32 either way; bf16 on the CPU (matmuls with bf16 weights and activations, f32 sums, as AVX512_BF16 computes them; needs a CPU with AVX512_BF16; auto then means the cpu)")
	fs.StringVar(&f.matrixUnits, "matrix-units", "", "GPU: multiply the weights and the LM head on the device's matrix units (tensor cores, VK_KHR_cooperative_matrix), activations rounded to f16 at their inputs: auto (the default, or $WGPU_EVAL_MATRIX_UNITS: where the device offers them for f16 weights and a first-use self-check against the ordinary kernels passed; the JSON says whether they ran), off, or on (fail where they cannot be used)")
	fs.IntVar(&f.threads, "threads", 0, "CPU threads, also tokenizing on any device (0: all cores)")
	fs.IntVar(&f.batchTokens, "batch-tokens", 0, fmt.Sprintf("padded tokens per batch, sequences x width (0: from the GPU's memory; %d on the CPU)", pipeline.DefaultBatchTokens))
	fs.StringVar(&f.separator, "separator", "", "cut a text corpus into documents at this string (e.g. '\\n\\n'; escapes \\n \\r \\t understood); in stream and strided modes the documents (as a .jsonl file's) are joined, each as the tokenizer encodes it (Llama 2: <s> first) or, where that puts nothing before it, after the tokenizer's BOS (Llama 3's <|begin_of_text|>), else its end-of-text token (GPT-2, Qwen: <|endoftext|>), and those tokens are scored; --mode documents scores each alone")
	fs.StringVar(&f.tinyShake, "tinyshakespeare-file", "", "a local copy of TinyShakespeare to use instead of the download (env "+corpus.TinyShakespeareEnv+")")
	fs.StringVar(&f.jsonOut, "json", "", "also write the result as JSON to FILE (- for stdout)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress (bars, or the lines printed every 10 s where stderr is not a terminal) and no messages; only the result")
	fs.BoolVar(&f.offline, "offline", false, "never use the network: models and data must be cached or local (also HF_HUB_OFFLINE=1)")
	fs.BoolVar(&f.insecureSkipVerify, "insecure-skip-verify", false, "use hub files whose content cannot be checked (an ETag that is neither a sha256 nor a git sha1: a proxy or mirror may be rewriting them); by default they are refused")
	fs.BoolVar(&f.noCache, "no-token-cache", false, "tokenize again instead of reading or writing the token cache")
	fs.StringVar(&f.shard, "shard", "", "score the I-th of N interleaved parts of the samples: I/N (0 <= I < N), or N with I from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm; a Slurm array also shards without the flag); add the --json results with 'wgpu-eval merge'")
	fs.StringVar(&f.perToken, "per-token", "", "also write every scored target's position, token id and NLL, in corpus order, to FILE (msgpack, with the run's config and provenance; read by 'wgpu-eval compare')")
	fs.StringVar(&f.perDocument, "per-document", "", "with --mode documents, also write every document's score (doc, targets, nll_sum, mean_nll, ppl, bytes, bits_per_byte) to FILE as JSON Lines")
	fs.IntVar(&f.topLogprobs, "top-logprobs", 0, fmt.Sprintf("with --per-token, also save every target position's K highest log-probabilities and their ids (1 to %d), for the KL divergence of 'wgpu-eval compare'", pipeline.MaxTopLogprobs))
	fs.StringVar(&f.checkpoint, "checkpoint", "", "keep the sums so far in FILE (and, with --per-token, the records in FILE.pertoken); the same command run again after an interruption continues from it (removed when the run completes)")
}

const evalUsage = `Usage: wgpu-eval [eval] [flags]

Evaluates a model (GPT-2 or the Llama family) on a corpus and prints NLL (nats
per token), perplexity, bits per byte, the standard error of the mean NLL, and
the speed.

Examples:
  wgpu-eval                                         # gpt2 on TinyShakespeare
  wgpu-eval --model gpt2-medium --split val --json result.json
  wgpu-eval --model ./my-gpt2 --data corpus.jsonl --mode documents
  cat notes.txt | wgpu-eval --data - --mode strided --ctx 512 --stride 256
  wgpu-eval --model ./Llama-3.2-1B --ctx 512 --bos-each-window   # every window after a BOS, as llama.cpp

Ctrl-C (or SIGTERM) stops the run: nothing new starts, the batches already on
the device finish and are counted, and the partial result is printed (and
written to --json, marked "interrupted"); with --checkpoint, the same command
run again continues from there. A second Ctrl-C exits at once.

Sums are exact (any batching, sharding or resume gives the same bits). Outputs
(--json, --per-token, --per-document) are written atomically, through a link to
its target, and into a device or FIFO in place (--json /dev/stdout works).

Flags:
`

func runEval(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f evalFlags
	if err := parseFlags("eval", evalUsage, f.register, args, stdout); err != nil {
		return err
	}
	f.jsonOut = asStdout(f.jsonOut, stdout)
	shard, err := pipeline.ParseShard(f.shard, nil)
	if err != nil {
		return usageError{fmt.Errorf("--%w", err)}
	}
	if f.shard == "" && shard != (pipeline.Shard{}) && !f.quiet {
		fmt.Fprintf(stderr, "note: scoring shard %s only, from SLURM_ARRAY_TASK_ID (this is a Slurm array task); --shard 0/1 scores the whole corpus\n", shard)
	}
	if err := tinyShakespeareOnly(f.tinyShake, f.data); err != nil {
		return err
	}
	if f.topLogprobs != 0 && f.perToken == "" {
		return usageError{errors.New("--top-logprobs needs --per-token FILE: the log-probabilities are saved there")}
	}
	opt := wgpueval.EvalOptions{
		Mode:                wgpueval.Mode(f.mode),
		Ctx:                 f.ctx,
		Stride:              f.stride,
		BOSEachWindow:       f.bosEachWindow,
		MaxTokens:           f.maxTokens,
		BatchTokens:         f.batchTokens,
		Split:               f.split,
		Separator:           unescape(f.separator),
		TinyShakespeareFile: f.tinyShake,
		NoTokenCache:        f.noCache,
		Shard:               shard,
		Checkpoint:          f.checkpoint,
		PerToken:            f.perToken,
		PerDocument:         f.perDocument,
		TopLogprobs:         f.topLogprobs,
		Stdin:               stdin,
		JSON:                jsonFile(f.jsonOut),
	}
	open := wgpueval.Options{
		Device:             wgpueval.Device(f.device),
		Precision:          wgpueval.Precision(f.precision),
		MatrixUnits:        wgpueval.MatrixUnits(f.matrixUnits),
		Threads:            f.threads,
		Offline:            f.offline,
		InsecureSkipVerify: f.insecureSkipVerify,
	}
	// The library's checks, before anything is read: errors name the flag.
	if err := open.Check(); err != nil {
		return flagError(err)
	}
	if err := opt.Check(); err != nil {
		return flagError(err)
	}
	if f.split == "" && f.data == corpus.TinyShakespeare && !f.quiet {
		fmt.Fprintln(stderr, "note: scoring all of tinyshakespeare, its train split included; --split val scores the validation split (as nanoGPT's recipe does)")
	}
	boundThreads(stderr, &f.threads, f.quiet)
	open.Threads = f.threads

	prog := newProgress(stderr, f.quiet)
	defer prog.close()
	ev, err := wgpueval.Open(ctx, f.model, wgpueval.Options{
		Device:             open.Device,
		Precision:          open.Precision,
		MatrixUnits:        open.MatrixUnits,
		Threads:            open.Threads,
		Offline:            f.offline,
		InsecureSkipVerify: f.insecureSkipVerify,
		Progress:           prog.report,
		Log: func(msg string) {
			if !f.quiet || strings.HasPrefix(msg, backend.ValidationPrefix) { // asked for with $WGPU_EVAL_VALIDATION
				prog.note(msg) // on its own line, not on a progress bar's
			}
		},
	})
	if err != nil {
		return flagError(err) // an option the device refuses: --matrix-units on without matrix units
	}
	defer ev.Close()
	promptStdin(stderr, stdin, f.data)
	res, err := ev.Evaluate(ctx, wgpueval.Named(f.data), opt)
	var outErr *wgpueval.OutputError
	var optErr *wgpueval.OptionError
	if errors.As(err, &optErr) {
		return flagError(err) // one that needs the model: --ctx beyond its positions
	}
	if err != nil && !errors.As(err, &outErr) {
		prog.close()
		if res != nil && res.Interrupted {
			if res.Tokens == 0 {
				fmt.Fprintf(stderr, "\ninterrupted after 0 of %d tokens: nothing was scored\n", res.TotalTokens)
			} else {
				fmt.Fprintf(stderr, "\ninterrupted after %d of %d tokens: mean NLL so far %.4f\n", res.Tokens, res.TotalTokens, res.MeanNLL)
			}
			switch f.jsonOut {
			case "":
			case "-":
				writeJSON("-", stdout, res)
			default:
				fmt.Fprintf(stderr, "the partial result (\"interrupted\": true) is in %s\n", infile.Quote(f.jsonOut))
			}
			if f.checkpoint != "" {
				if _, serr := os.Stat(f.checkpoint); serr == nil {
					fmt.Fprintf(stderr, "the sums so far are in %s: run the same command again to continue\n", infile.Quote(f.checkpoint))
				} else {
					fmt.Fprintf(stderr, "no batch had finished, so %s was not written\n", infile.Quote(f.checkpoint))
				}
			} else {
				fmt.Fprintln(stderr, "(with --checkpoint FILE, the same command run again continues where it stopped)")
			}
			return interrupted{err}
		}
		return err
	}
	prog.close()
	if note := setupNote(res); note != "" && !f.quiet {
		fmt.Fprintln(stderr, note)
	}
	threads := f.threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}

	summary := stdout
	if f.jsonOut == "-" {
		summary = stderr
	}
	if !(f.quiet && summary == stderr) {
		fmt.Fprintln(summary, formatSummary(res, threads))
	}
	if f.jsonOut == "-" {
		if err := writeJSON(f.jsonOut, stdout, res); err != nil {
			return err
		}
	}
	if outErr != nil {
		return outErr // the summary is out; the files were not all written
	}
	return nil
}

// asStdout is "-" when path names this process's standard output (stdout is
// an *os.File and the two are one file: --json /dev/stdout, or the file stdout
// is redirected to), else path: the JSON then goes out as with --json -, the
// summary to stderr, so that stdout holds JSON alone (--json /dev/stdout | jq).
func asStdout(path string, stdout io.Writer) string {
	f, ok := stdout.(*os.File)
	if path == "" || path == "-" || !ok {
		return path
	}
	pfi, err := os.Stat(path)
	if err != nil {
		return path
	}
	if sfi, err := f.Stat(); err == nil && os.SameFile(pfi, sfi) {
		return "-"
	}
	return path
}

// jsonFile is the --json path the library writes: every path but "-" (stdout,
// which the command writes itself).
func jsonFile(path string) string {
	if path == "-" {
		return ""
	}
	return path
}

// formatSummary is the one human line printed after an evaluation.
func formatSummary(r *pipeline.Result, threads int) string {
	device := r.Device
	if r.Config != nil && r.Config.Threads > 0 {
		threads = r.Config.Threads
	}
	if device == "cpu" && threads > 0 {
		device = fmt.Sprintf("cpu x%d", threads)
	}
	if r.Config != nil && r.Config.Precision == string(backend.PrecisionBF16) && strings.HasPrefix(device, "cpu") {
		device += " (bf16)" // the GPU's device names carry their weight type already
	}
	shard := ""
	if r.Mode == string(pipeline.ModeStrided) && r.Config != nil {
		shard = fmt.Sprintf(", stride %d", r.Config.Stride)
	}
	if r.Shard != nil && r.Shard.Count > 1 { // 0/1 is the whole corpus
		shard += ", shard " + r.Shard.String()
	}
	if r.BOSEachWindow {
		shard += ", BOS each window"
	}
	return fmt.Sprintf("%s on %s (%s, ctx %d%s): NLL %.4f ± %.4f  PPL %s ± %s  bpb %.4f  %s  %.1f s  %.0f tok/s  %s",
		r.Model, dataLabel(r.Data), r.Mode, r.Ctx, shard, r.MeanNLL, r.StdErr, formatPPLFixed(r.PPL), formatPPLFixed(r.PPLStdErr), r.BitsPerByte, pipeline.Count(r.Tokens, "token"), r.Seconds, r.TokensPerSecond, device)
}

// setupNote says, where a run spent a second or more and a tenth or more
// of its scoring time on work once per device, driver and batch shape (a
// first run on a GPU), what that work was and how fast the batches alone
// ran; "" otherwise.
func setupNote(r *pipeline.Result) string {
	t := r.Timings
	if t == nil || t.Setup() < 1 || t.Setup() < 0.1*r.Seconds {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		what string
		s    float64
	}{{"compiling GPU pipelines", t.Compile}, {"tuning the kernels", t.Tune}, {"the matrix units' self-check", t.Check}} {
		if p.s >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.1f s", p.what, p.s))
		}
	}
	note := fmt.Sprintf("note: %.1f s of the run went to work done once per device, driver and batch shape (%s), which later runs find cached",
		t.Setup(), strings.Join(parts, ", "))
	if t.Score > 0 {
		note += fmt.Sprintf("; the batches alone took %.1f s, %.0f tok/s", t.Score, float64(r.Tokens)/t.Score)
	}
	return note
}

// writeJSON writes r as indented JSON to path ("-" is stdout), as
// runfile.WriteJSON does: an existing result is never left half-written, and
// a link, a device or a FIFO is written through.
func writeJSON(path string, stdout io.Writer, r any) error {
	if path != "-" {
		return runfile.WriteJSON(path, r)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(b, '\n'))
	return err
}

// unescape turns the escapes \n, \t, \r and \\ of a flag value into characters,
// so that --separator '\n\n' works from any shell.
func unescape(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", `\r`, "\r").Replace(s)
}

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

const tokenizeUsage = `Usage: wgpu-eval tokenize --model M --data FILE --output OUT [flags]

Writes the token ids of a corpus as the evaluation sees them (what --mode
stream and strided score): the text as transformers' tokenizer(text) encodes
it, special tokens of the tokenizer's post-processor included (Llama 2's BOS
<s> first, Llama 3.1's <|begin_of_text|>; none for GPT-2, Qwen, or the first
Llama 3 release's tokenizer.json), separate documents (.jsonl, --separator)
one after another, each as the tokenizer encodes it or, where that puts
nothing before it, after the tokenizer's BOS (the first Llama 3's
<|begin_of_text|>), else its end-of-text token (GPT-2, Qwen: <|endoftext|>),
then cut to --max-tokens. It is how to check a tokenization against another
tool.

--output OUT gets the ids as little-endian uint32, no header (an llm.c-style
token stream without its header; written atomically); --output - prints them
as text, one id per line.

The model is found as eval finds it, but its weights are not read: a folder
needs only its tokenizer files (tokenizer.json with tokenizer_config.json, or
vocab.json + merges.txt; none means GPT-2's), a .safetensors or llm.c file
stands for its folder (an llm.c checkpoint: GPT-2's tokenizer), and a hub id
is fetched as eval fetches it.

Examples:
  wgpu-eval tokenize --model ./Llama-3.2-1B --data tinyshakespeare --output ts.u32
  wgpu-eval tokenize --model gpt2 --data notes.jsonl --max-tokens 20 --output -

Flags:
`

// tokenizeFlags are the flags of `wgpu-eval tokenize`.
type tokenizeFlags struct {
	model, data, output, split string
	separator, tinyShake       string
	maxTokens, threads         int
	quiet, offline, noCache    bool
	insecureSkipVerify         bool
}

func (f *tokenizeFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.model, "model", "m", "gpt2", "model whose tokenizer to use: a hub id, a folder with tokenizer files, a .safetensors file or an llm.c .bin checkpoint")
	fs.StringVarP(&f.data, "data", "d", corpus.TinyShakespeare, "corpus: tinyshakespeare, a text file, a .jsonl file (field \"text\"), an llm.c token file, or - for stdin")
	fs.StringVarP(&f.output, "output", "o", "", "write the ids to FILE as little-endian uint32, or - to print them as text, one per line (required)")
	fs.StringVar(&f.split, "split", "", "part of a text corpus: all (the default), train (first 90%) or val (last 10%)")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "keep only the first N ids (0: all)")
	fs.IntVar(&f.threads, "threads", 0, "goroutines that tokenize (0: all cores)")
	fs.StringVar(&f.separator, "separator", "", "cut a text corpus into documents at this string (escapes \\n \\r \\t understood)")
	fs.StringVar(&f.tinyShake, "tinyshakespeare-file", "", "a local copy of TinyShakespeare to use instead of the download (env "+corpus.TinyShakespeareEnv+")")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no messages; only the ids")
	fs.BoolVar(&f.offline, "offline", false, "never use the network (also HF_HUB_OFFLINE=1)")
	fs.BoolVar(&f.insecureSkipVerify, "insecure-skip-verify", false, "use hub files whose content cannot be checked")
	fs.BoolVar(&f.noCache, "no-token-cache", false, "tokenize again instead of reading or writing the token cache")
}

func runTokenize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f tokenizeFlags
	if err := parseFlags("tokenize", tokenizeUsage, f.register, args, stdout); err != nil {
		return err
	}
	if f.output == "" {
		return usageError{errors.New("tokenize: give --output FILE (little-endian uint32) or --output - (text)")}
	}
	if err := notNegative(intFlag{"max-tokens", f.maxTokens}, intFlag{"threads", f.threads}); err != nil {
		return err
	}
	boundThreads(stderr, &f.threads, f.quiet)
	if err := tinyShakespeareOnly(f.tinyShake, f.data); err != nil {
		return err
	}
	prog := newProgress(stderr, f.quiet)
	defer prog.close()
	log := func(msg string) {
		if !f.quiet {
			prog.note(msg) // on its own line, not on a progress bar's
		}
	}
	tok, path, err := wgpueval.LoadTokenizer(ctx, f.model, wgpueval.Options{
		Offline: f.offline, InsecureSkipVerify: f.insecureSkipVerify, Log: log})
	if err != nil {
		return err
	}
	inputs := modelFolderInputs(path)
	if f.data != "-" && f.data != corpus.TinyShakespeare {
		inputs = append(inputs, clobber.File{Role: "the corpus", Path: f.data})
	} else if f.data == corpus.TinyShakespeare {
		inputs = append(inputs, clobber.File{Role: "the TinyShakespeare copy", Path: f.tinyShake})
	}
	if err := notClobbering("tokenize", []clobber.File{{Role: "--output", Path: f.output}}, inputs); err != nil {
		return err
	}
	promptStdin(stderr, stdin, f.data)
	ids, err := wgpueval.Tokenize(ctx, tok, f.data, wgpueval.TokenizeOptions{
		MaxTokens:           f.maxTokens,
		Split:               f.split,
		Separator:           unescape(f.separator),
		TinyShakespeareFile: f.tinyShake,
		NoTokenCache:        f.noCache,
		Threads:             f.threads,
		Stdin:               stdin,
		Offline:             f.offline,
		Log:                 log,
		Progress:            prog.report,
	})
	prog.close()
	if err != nil {
		return err
	}
	if f.output == "-" {
		if err := writeIDsText(stdout, ids); err != nil {
			return fmt.Errorf("tokenize: %w", err)
		}
	} else if err := atomicfile.WriteFunc(f.output, func(w io.Writer) error { return writeIDs(w, ids) }); err != nil {
		return err
	}
	bos := "none"
	if id, ok := tok.BOS(); ok {
		bos = fmt.Sprintf("%q (%d)", tok.TokenText(id), id)
	}
	where := infile.Quote(f.output)
	if f.output == "-" {
		where = "stdout"
	}
	log(fmt.Sprintf("%s of %s to %s (tokenizer of %s: %s, %d ids, BOS %s)",
		pipeline.Count(len(ids), "id"), infile.Quote(wgpueval.DataName(f.data, f.split)), where, infile.Quote(path), tok.ID(), tok.VocabSize(), bos))
	return nil
}

// writeIDs writes ids as little-endian uint32.
func writeIDs(w io.Writer, ids []int32) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(b[:], uint32(id))
		if _, err := bw.Write(b[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeIDsText writes ids as decimal text, one per line.
func writeIDsText(w io.Writer, ids []int32) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for _, id := range ids {
		line = strconv.AppendInt(line[:0], int64(id), 10)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

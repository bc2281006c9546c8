// Package wgpueval is the library behind the wgpu-eval command, for programs
// that embed the engine: open a model (a Hugging Face hub id, a folder or a
// file), pick a device (a Vulkan GPU or the pure-Go CPU path), evaluate a
// named corpus or text, documents or token ids held in memory, with
// cancellation, progress and per-target results, and read the same Result
// the command prints.
//
//	ev, err := wgpueval.Open(ctx, "gpt2", wgpueval.Options{Device: wgpueval.DeviceAuto})
//	if err != nil { ... }
//	defer ev.Close()
//	res, err := ev.Evaluate(ctx, wgpueval.Named("tinyshakespeare"), wgpueval.EvalOptions{Ctx: 1024})
//	fmt.Println(res.MeanNLL, res.PPL, res.Device)
//
// Bad options are *OptionError values naming the field. The types the API
// takes and returns are declared (or aliased) here, so a program needs no
// other import of this module; the packages below it (pipeline, model,
// shaders, wgpu) are usable on their own.
package wgpueval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/hub"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// Result is an evaluation's outcome, as the command prints it (and writes
// with --json).
type Result = pipeline.Result

// Progress is a report of long work: Stage is "download" (a model file from
// the hub; File names it), "load" (weights read or uploaded, in bytes),
// "corpus" (a corpus downloaded, in bytes), "tokenize" (the corpus's text
// tokenized, in bytes; not for ids from the token cache) or "eval" (targets
// scored).
type Progress struct {
	Stage       string
	File        string
	Done, Total int64
	// Scored and NLLSum are, for "eval", the targets of the batches finished
	// and the sum of their NLL in nats (NLLSum / Scored is the running mean
	// NLL: MeanNLL). Done is Scored at a batch's end; inside a batch on the
	// CPU, which reports after each layer, it counts the part of the batch's
	// targets that the work done stands for too.
	Scored int64
	NLLSum float64
}

// MeanNLL is the running mean NLL of an "eval" report, NLLSum / Scored; 0
// before any batch has finished.
func (p Progress) MeanNLL() float64 {
	if p.Scored == 0 {
		return 0
	}
	return p.NLLSum / float64(p.Scored)
}

// Options say how Open finds the model and where it runs.
type Options struct {
	// Device is where to run: DeviceAuto (the zero value: the best hardware
	// GPU, else the CPU), DeviceCPU, DeviceGPU, GPU(n) or DeviceAll.
	Device Device
	// Precision is the GPU weight type: PrecisionAuto (the zero value: f16
	// where the device has shader-f16), PrecisionF16 or PrecisionF32; or
	// PrecisionBF16, the CPU's bf16 mode (DeviceAuto then means the CPU, a
	// GPU device is an error, and so is a CPU without AVX512_BF16 unless
	// WGPU_EVAL_CPU_KERNELS=generic).
	Precision Precision
	// Threads is the CPU path's goroutines; 0 means all cores. It also
	// bounds the goroutines that tokenize a corpus before it is scored, on
	// any device: by default a GPU run tokenizes on all cores, which are
	// otherwise idle then (nothing is scored while the corpus is
	// tokenized), and a run given a count keeps to it.
	Threads int
	// MatrixUnits says whether a GPU multiplies on its matrix units (tensor
	// cores): MatrixUnitsAuto (the zero value; $WGPU_EVAL_MATRIX_UNITS when
	// set), MatrixUnitsOff or MatrixUnitsOn (which Open refuses where the
	// GPU's features show it has none). The result's provenance says
	// whether they ran and why.
	MatrixUnits MatrixUnits
	// Offline uses only local files and the hub cache, never the network.
	Offline bool
	// Hub overrides the hub client (endpoint, cache folder, token); nil means
	// hub.FromEnv(), as the command uses.
	Hub *HubClient
	// CacheDir is the folder of the library's caches: the token cache of
	// Named corpora (CacheDir/tokens) and the TinyShakespeare download
	// (CacheDir/data). "" means os.UserCacheDir()/wgpu-eval, the command's.
	// EvalOptions.NoTokenCache turns the token cache off (data held in
	// memory never uses it); the hub's model cache is Hub's
	// (HubClient.CacheDir, else $HF_HUB_CACHE). A GPU keeps its Vulkan
	// pipeline cache, kernel tuning and matrix-unit self-check verdicts in
	// CacheDir/pipelines. The sha256 of a local weights file of 64 MiB or
	// more (the results' provenance, a checkpoint's identity) is recorded
	// in CacheDir/hashes under the file's identity on disk, and not read
	// again while the file is unchanged.
	CacheDir string
	// InsecureSkipVerify accepts model files from the hub whose content
	// cannot be checked (hub.Client.InsecureSkipVerify); by default they are
	// refused.
	InsecureSkipVerify bool
	// Progress, when set, receives reports of downloads, weight loading and
	// evaluation. It is called from the goroutine doing the work, which
	// holds the Evaluator: Close called from it cancels the run and returns
	// at once (the run releases the device as it ends), and Evaluate,
	// Generate and Prepare called from it return ErrReentrant, since they
	// would wait for the run that is calling them.
	Progress func(Progress)
	// Log, when set, receives one-line messages the command prints unless
	// --quiet (what was loaded, warnings, a hub or TinyShakespeare server that
	// has been silent for a while: those come from a goroutine of their own
	// while Open or Evaluate downloads). It may call the Evaluator as
	// Progress may.
	Log func(msg string)
}

// Evaluator is a model ready to score corpora on a device. Open reads its
// configuration and tokenizer; the weights go to the device on the first
// Evaluate (or Prepare), so that a bad corpus or option is reported before
// that expensive step. An Evaluator is safe for concurrent use; evaluations
// run one at a time. Close may be called while one runs: it cancels it.
// Its callbacks (Options.Progress and Log, EvalOptions.OnScored,
// GenerateOptions.OnText) may call Close, which then cancels the run and
// returns without waiting for it; its other methods called from them return
// ErrReentrant.
type Evaluator struct {
	name   string
	path   string
	hash   string // weightsSHA256, computed once
	opt    Options
	spec   backend.DeviceSpec
	prec   backend.Precision
	ck     *model.Checkpoint
	stored string // the checkpoint's dtype
	tok    *tokenizer.Tokenizer

	mu      sync.Mutex
	backend pipeline.Backend
	closed  bool

	// running cancels the evaluations and generations under way (Close
	// calls them); guarded by runMu, not mu, which they hold. closeLater is
	// set by a Close called from a callback, which cannot wait for mu: the
	// holder of mu releases the device when it lets go (unlock).
	runMu      sync.Mutex
	running    map[*context.CancelFunc]struct{}
	closing    bool
	closeLater bool

	// callbacks counts the calls of the user's callbacks in progress
	// (callUser), so that a call from one is recognized (fromCallback).
	callbacks atomic.Int64
}

// Open locates the model name (a hub id such as "gpt2" or "org/name@rev", a
// folder with config.json and model.safetensors, a .safetensors file or an
// llm.c .bin checkpoint), checks its configuration and tensors, and loads its
// tokenizer: the folder's vocab.json + merges.txt or tokenizer.json, else
// GPT-2's; always GPT-2's for an llm.c checkpoint (tokenizer files beside
// one are ignored, with a warning through Options.Log). Close the Evaluator
// when done.
func Open(ctx context.Context, name string, opt Options) (*Evaluator, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	spec, _ := backend.ParseDevice(string(opt.device())) // checked
	prec, _ := backend.ParsePrecision(string(opt.Precision))
	if err := backend.CheckKernelsEnv(); err != nil {
		return nil, err
	}
	// Before anything is downloaded or loaded: a GPU asked for must be there.
	if err := backend.CheckDevice(spec); err != nil {
		return nil, err
	}
	// And where matrix units are required, that its features allow them.
	if err := checkMatrixUnits(spec, prec, opt.MatrixUnits); err != nil {
		return nil, err
	}
	c := opt.hubClient()
	path, err := c.Locate(ctx, name)
	if err != nil {
		return nil, err
	}
	ck, err := model.OpenCheckpoint(ctx, path)
	if err != nil {
		return nil, err
	}
	tok, err := loadTokenizer(path, ck, opt)
	if err != nil {
		ck.Close()
		return nil, err
	}
	cfg := ck.Config()
	if tok.VocabSize() > cfg.VocabSize {
		ck.Close()
		return nil, fmt.Errorf("tokenizer of %s has %d tokens but the model only %d", name, tok.VocabSize(), cfg.VocabSize)
	}
	opt.log("model %s: %s, %s weights (%s)", infile.Quote(name), cfg.Describe(), ck.StoredDType(), infile.Quote(path))
	return &Evaluator{name: name, path: path, opt: opt, spec: spec, prec: prec, ck: ck, tok: tok, stored: ck.StoredDType()}, nil
}

// hubClient is the hub client Open and LoadTokenizer locate models with:
// o.Hub (else hub.FromEnv()) with o's Offline and InsecureSkipVerify added,
// its downloads reported to o.Progress and its waits to o.Log, each after
// o.Hub's own Progress and Waiting callbacks.
func (o Options) hubClient() *hub.Client {
	hc := o.Hub
	if hc == nil {
		hc = hub.FromEnv()
	}
	c := *hc
	c.Offline = c.Offline || o.Offline
	c.InsecureSkipVerify = c.InsecureSkipVerify || o.InsecureSkipVerify
	c.Progress = func(file string, done, total int64) {
		if hc.Progress != nil {
			hc.Progress(file, done, total)
		}
		o.report(Progress{Stage: "download", File: file, Done: done, Total: total})
	}
	c.Waiting = func(w hub.Wait) {
		if hc.Waiting != nil {
			hc.Waiting(w)
		}
		o.log("%s", w)
	}
	return &c
}

// loadTokenizer returns the tokenizer of the model at path: GPT-2's for an
// llm.c checkpoint (which is GPT-2's and carries none), whatever tokenizer
// files lie beside it, those being named in a warning through opt.Log; else
// the files in the model's folder (tokenizer.Load).
//
// A Llama-family model's tokenizer is its tokenizer.json, which must be there
// (the folder's vocab.json and merges.txt, as Qwen repos also have, leave out
// its pre-tokenizer and added tokens).
func loadTokenizer(path string, ck *model.Checkpoint, opt Options) (*tokenizer.Tokenizer, error) {
	if cfg := ck.Config(); cfg.Arch != model.ArchGPT2 {
		return llamaTokenizer(path, cfg)
	}
	if !ck.LLMC() {
		return tokenizer.Load(path)
	}
	var stray []string
	for _, name := range []string{tokenizer.VocabFile, tokenizer.MergesFile, tokenizer.TokenizerFile} {
		p := filepath.Join(filepath.Dir(path), name)
		if _, err := os.Lstat(p); err == nil {
			stray = append(stray, infile.Quote(p))
		}
	}
	if len(stray) > 0 {
		opt.log("warning: %s is an llm.c checkpoint, whose tokenizer is GPT-2's: %s beside it ignored",
			infile.Quote(path), strings.Join(stray, ", "))
	}
	return tokenizer.GPT2()
}

// llamaTokenizer is the tokenizer.json beside the Llama-family model at path
// (a folder or a file in it), which such a model must have.
func llamaTokenizer(path string, cfg model.Config) (*tokenizer.Tokenizer, error) {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	tj := filepath.Join(dir, tokenizer.TokenizerFile)
	if _, err := os.Stat(tj); err != nil {
		hint := ""
		if _, err := os.Stat(filepath.Join(dir, "tokenizer.model")); err == nil {
			hint = "; the tokenizer.model beside it is SentencePiece's, which wgpu-eval does not read: transformers writes tokenizer.json with AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)"
		}
		return nil, fmt.Errorf("model %s is a %s model and needs its tokenizer file: %w%s", infile.Quote(path), cfg.ModelType, err, hint)
	}
	return tokenizer.LoadJSON(tj)
}

// pipelineCacheDir is the GPU's folder of pipeline cache, tuning and
// self-check files under CacheDir; "" (the default's) without one.
func (o Options) pipelineCacheDir() string {
	if o.CacheDir == "" {
		return ""
	}
	return filepath.Join(o.CacheDir, "pipelines")
}

// hashCacheDir is the folder of the weights' sha256 records
// (internal/hashcache): CacheDir/hashes, or the user cache's; "" where there
// is no user cache folder.
func (o Options) hashCacheDir() string {
	root := o.CacheDir
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		root = filepath.Join(base, "wgpu-eval")
	}
	return filepath.Join(root, "hashes")
}

func (o Options) report(p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

func (o Options) log(format string, a ...any) {
	if o.Log != nil {
		o.Log(fmt.Sprintf(format, a...))
	}
}

// documentsNote is the data line's word on the documents of a corpus of
// separate documents (a JSONL file, --separator) in documents mode: how many,
// and how many of them are empty (numbered, but scoring nothing); "" for a
// corpus that is one text or a token stream.
func documentsNote(toks *corpus.Tokens) string {
	if !toks.Separated {
		return ""
	}
	empty := 0
	for _, d := range toks.Docs {
		if len(d) == 0 {
			empty++
		}
	}
	note := " in " + pipeline.Count(len(toks.Docs), "document")
	if empty > 0 {
		note += fmt.Sprintf(" (%d empty: numbered in --per-document, but scoring nothing)", empty)
	}
	return note
}

// Config is the model's shape.
func (e *Evaluator) Config() Config { return e.ck.Config() }

// Path is where the model's files are (the hub cache's snapshot for a hub id).
func (e *Evaluator) Path() string { return e.path }

// Prepare puts the weights on the device now (Evaluate does it otherwise) and
// returns the device's name, as results name it.
func (e *Evaluator) Prepare(ctx context.Context) (string, error) {
	if e.fromCallback() {
		return "", fmt.Errorf("prepare: %w", ErrReentrant)
	}
	e.mu.Lock()
	defer e.unlock()
	b, err := e.prepare(ctx)
	if err != nil {
		return "", err
	}
	return b.Name(), nil
}

// prepare opens the backend once, saying which device it is when it does.
// e.mu must be held.
func (e *Evaluator) prepare(ctx context.Context) (pipeline.Backend, error) {
	b, opened, err := e.open(ctx)
	if opened {
		e.announce(b)
	}
	return b, err
}

// announce says which device the run is on, once the backend is open and
// whatever else the run waits for before scoring is done: after that line,
// Ctrl-C gives the partial result (the interrupt tests wait for it).
func (e *Evaluator) announce(b pipeline.Backend) { e.log("device: %s", b.Name()) }

// open opens the backend once (opened reports whether this call did) without
// a word. e.mu must be held.
func (e *Evaluator) open(ctx context.Context) (b pipeline.Backend, opened bool, err error) {
	if e.closed || e.closingNow() {
		return nil, false, ErrClosed
	}
	if e.backend != nil {
		return e.backend, false, nil
	}
	b, err = backend.Open(ctx, e.spec, e.ck, backend.Options{
		Precision:   e.prec,
		Threads:     e.opt.Threads,
		Progress:    func(done, total int64) { e.report(Progress{Stage: "load", File: e.name, Done: done, Total: total}) },
		MatrixUnits: e.opt.MatrixUnits,
		Warn:        func(msg string) { e.log("%s", msg) },
		// The GPU's pipeline cache, tuning and self-check verdicts.
		PipelineCacheDir: e.opt.pipelineCacheDir(),
	})
	if err != nil {
		return nil, false, err
	}
	e.backend = b
	e.ck.Close() // the backend holds the weights now
	return b, true, nil
}

// EvalOptions say what Evaluate scores and how. The zero value scores the
// whole corpus in stream mode with the model's full context.
type EvalOptions struct {
	// Mode is the evaluation method: ModeStream (the zero value),
	// ModeStrided or ModeDocuments.
	Mode Mode
	// Ctx is the window in tokens; 0 means the model's positions.
	Ctx int
	// Stride is the window step of strided mode and of long documents; 0 means Ctx/2.
	Stride int
	// BOSEachWindow starts every window with the tokenizer's BOS (else
	// <|endoftext|>) as context, as llama.cpp's perplexity tool starts its
	// chunks with BOS (pipeline.EvalConfig.BOSEachWindow): a window is the
	// BOS and up to Ctx-1 corpus tokens, all of them scored (the stream's
	// first token too), none overwritten; Stride must then be at most Ctx-1.
	// A stream that starts with the BOS (Llama 2's tokenizer(text)) keeps its
	// own as the first window's. This is not Hugging Face's evaluation of
	// tokenizer(text), nor llama.cpp's exact one, which overwrites each
	// chunk's first token with BOS and scores only the second half of each
	// chunk. A tokenizer with neither a BOS nor <|endoftext|> is refused.
	BOSEachWindow bool
	// MaxTokens keeps only the first MaxTokens tokens; 0 keeps all.
	MaxTokens int
	// BatchTokens bounds a batch's padded tokens; 0 lets the device decide.
	BatchTokens int
	// Split is "all" (the default), "train" (the first 90%) or "val" (the last 10%) of a text corpus.
	Split string
	// Separator cuts a text corpus into documents.
	Separator string
	// TinyShakespeareFile is a local copy of TinyShakespeare to use instead of the download.
	TinyShakespeareFile string
	// NoTokenCache tokenizes again instead of using the token cache (data
	// held in memory never uses it).
	NoTokenCache bool
	// Stdin is read for the corpus Named("-").
	Stdin io.Reader
	// Shard, when its Count is above 1, scores only the I-th of N interleaved
	// parts of the samples; runfile.Merge adds the shards' results.
	Shard Shard
	// Checkpoint, when set, is a file that keeps the sums so far (written
	// atomically about once a second): an interrupted run given the same file
	// continues where it stopped and gives the totals of an uninterrupted run.
	// A checkpoint of another run is refused, naming what differs, and so is
	// one another build of the program wrote (its version and commit, or,
	// where the build records none or has uncommitted changes, its
	// executable's sha256). The file is removed when the run completes.
	Checkpoint string
	// PerToken, when set, is a file to write every scored target's position,
	// token id and NLL to, in corpus order, with the run's config, provenance
	// and tokenizer in a header (runfile.WritePerToken; written atomically
	// when the run completes). Result.PerToken holds the same. It costs a
	// second, small readback per batch on a GPU. With Checkpoint, the records
	// so far are kept in a sidecar file beside the checkpoint (its name plus
	// ".pertoken"), and a resumed run writes the same file an uninterrupted
	// one would.
	PerToken string
	// PerDocument, when set, is a file to write every document's score to
	// (documents mode only: JSON Lines of runfile.DocumentScore), when the
	// run completes; not with a Shard, which scores some windows of a long
	// document while other shards score the rest. It keeps the per-token records in memory (and, with
	// Checkpoint, in its sidecar) to add them up.
	PerDocument string
	// JSON, when set, is a file to write the result to as JSON
	// (runfile.WriteJSON): when the run completes, after the per-token file
	// and before the checkpoint is removed, so that a failed write leaves the
	// run resumable; when it is interrupted, the partial result (Interrupted
	// set, TotalTokens the run's targets).
	JSON string
	// OnScored, when set, is called after each batch with the targets it
	// scored (position, token id, NLL, and the top log-probabilities with
	// TopLogprobs), in the batch's order, which is not the corpus's: batches
	// go longest first. The slice is valid during the call only. Result.
	// PerToken holds them all, in corpus order, at the end. An error from it
	// stops the run, and Evaluate returns that error. With a Checkpoint, the
	// targets of a resumed run's earlier batches are not reported again.
	// It may call the Evaluator as Options.Progress may: Close stops the
	// run, as returning an error or cancelling the context does.
	OnScored func(batch []TokenNLL) error
	// TopLogprobs, with PerToken or OnScored, also keeps every target
	// position's K highest log-probabilities over the vocabulary and their
	// ids (1 to MaxTopLogprobs), for compare's KL divergence. It
	// adds a second pass over the LM head at the scored positions (on a GPU:
	// topk_logits.wgsl, and 8K + 4 bytes read back per target).
	TopLogprobs int
}

// Evaluate scores data (Named, Text, Documents or TokenIDs) and returns the
// result, with its Config and Provenance filled. It checks the options
// before reading the corpus (a bad one is an *OptionError, as is an output
// path that names an input of the run, such as the corpus or a model file,
// or another output, or whose folder does not exist or cannot be written
// in), and the corpus before
// the weights go to the device. Cancelling ctx, or Close (from another
// goroutine or from a callback), stops it with ctx's error (context.Canceled
// for Close) and the partial result of what was scored (Interrupted set).
// Work already on the device finishes first and is counted: on a GPU up to
// two batches (EvalOptions.BatchTokens bounds them), on a software Vulkan
// driver one short batch, on the CPU the layer under way; when it was the
// run's last, the result is complete and the error nil.
func (e *Evaluator) Evaluate(ctx context.Context, data Data, opt EvalOptions) (*Result, error) {
	if e.fromCallback() {
		return nil, fmt.Errorf("evaluate: %w", ErrReentrant)
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if data.load == nil {
		return nil, errors.New("no data to evaluate (the zero Data)")
	}
	if err := e.checkOutputPaths(data, opt); err != nil {
		return nil, err
	}
	ctx, done, err := e.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	mode := opt.mode()
	cfg := e.Config()
	if opt.TopLogprobs != 0 {
		if err := checkTopLogprobs(opt.TopLogprobs, cfg.VocabSize); err != nil {
			return nil, err
		}
	}
	window := cmp.Or(opt.Ctx, cfg.NPositions)
	if window > cfg.NPositions {
		if cfg.Window > 0 {
			return nil, badInt("Ctx", window, "longer than the model's %d positions: its sliding window, within which attention is the full causal one this tool computes", cfg.NPositions)
		}
		return nil, badInt("Ctx", window, "longer than the model's %d positions", cfg.NPositions)
	}
	stride := opt.stride(window)
	if err := checkWindow(mode, window, stride, opt.BOSEachWindow); err != nil {
		return nil, err
	}
	if opt.BOSEachWindow && e.tok.DocSeparator() < 0 {
		return nil, &OptionError{"BOSEachWindow", "true", "needs the tokenizer's BOS or <|endoftext|>, and this model's tokenizer has neither"}
	}
	spec := data.name
	tokenizing := time.Now()
	corp, err := data.load(ctx, corpus.Options{
		Split:           opt.Split,
		Separator:       opt.Separator,
		TinyShakespeare: opt.TinyShakespeareFile,
		CacheDir:        e.opt.CacheDir,
		Offline:         e.opt.Offline,
		Progress:        func(done, total int64) { e.report(Progress{Stage: "corpus", File: spec, Done: done, Total: total}) },
		Waiting:         func(msg string) { e.log("%s", msg) },
		Stdin:           opt.Stdin,
	})
	if err != nil {
		return nil, err
	}
	if corp.SeparatorNote != "" {
		e.log("warning: corpus %s: %s", infile.Quote(spec), corp.SeparatorNote)
	}
	toks, err := corpus.Tokenize(ctx, corp, e.tok, corpus.TokenizeOptions{
		CacheDir:   e.opt.CacheDir,
		NoCache:    opt.NoTokenCache || data.memory,
		MaxTokens:  opt.MaxTokens,
		Threads:    e.opt.Threads,
		CacheError: func(err error) { e.log("warning: token cache not written: %v", err) },
		Progress: func(done, total int64) {
			e.report(Progress{Stage: "tokenize", File: spec, Done: done, Total: total})
		},
	})
	if err != nil {
		return nil, err
	}
	tokenized := time.Since(tokenizing)
	if mode != pipeline.ModeDocuments {
		if err := checkSeparator(toks, e.tok); err != nil {
			return nil, err
		}
	}
	if toks.Separated && mode != pipeline.ModeDocuments && len(toks.Docs) > 1 {
		e.log("note: %d documents joined into one stream with %s before each, as in %s training data: "+
			"those tokens are scored too; --mode documents scores each document alone",
			len(toks.Docs), tokenName(e.tok, e.tok.DocSeparator()), trainingData(e.tok))
	}
	if opt.BOSEachWindow {
		e.log("every window starts with %s as context (not a target): llama.cpp's convention, not Hugging Face's tokenizer(text)",
			tokenName(e.tok, e.tok.DocSeparator()))
	}
	dataName := DataName(spec, opt.Split)
	docs := ""
	if mode == pipeline.ModeDocuments {
		docs = documentsNote(toks)
	}
	if n := toks.Len(); opt.MaxTokens > 0 && toks.Partial {
		e.log("data %s: the first %s (tokenizing stopped there, before the end of the corpus)%s", infile.Quote(dataName), pipeline.Count(opt.MaxTokens, "token"), docs)
	} else if opt.MaxTokens > 0 && n > opt.MaxTokens {
		e.log("data %s: the first %s (of the %s tokenized)%s", infile.Quote(dataName), pipeline.Count(opt.MaxTokens, "token"), pipeline.Count(n, "token"), docs)
	} else if opt.MaxTokens > 0 {
		e.log("data %s: %s (the whole corpus: fewer than the %d asked for)%s", infile.Quote(dataName), pipeline.Count(n, "token"), opt.MaxTokens, docs)
	} else {
		e.log("data %s: %s%s", infile.Quote(dataName), pipeline.Count(n, "token"), docs)
	}

	e.mu.Lock()
	defer e.unlock()
	start := time.Now()
	var hashed *hashing
	if e.hash == "" { // beside the loading
		hashed = startHashing(ctx, e.opt.hashCacheDir(), e.ck.Files())
	}
	var setupBefore pipeline.SetupTimes // the backend's setup work before this run
	if e.backend != nil {
		setupBefore = pipeline.SetupOf(e.backend)
	}
	b, opened, err := e.open(ctx)
	if err != nil {
		if hashed != nil {
			hashed.stop()
		}
		return nil, err
	}
	if hashed != nil {
		// Part of the start, as the loading is: Ctrl-C here stops the run
		// with the hash's error, before the device line says scoring starts.
		if e.hash, err = hashed.wait(); err != nil {
			return nil, err
		}
	}
	var loaded time.Duration // 0 for a model an earlier run loaded
	if opened || hashed != nil {
		loaded = time.Since(start)
	}
	setupLoaded := pipeline.SetupOf(b)
	if opened {
		e.announce(b)
	}
	version, commit := Version()
	desc := b.Describe()
	rc := &pipeline.RunConfig{
		Mode: string(mode), Ctx: window, Stride: stride, BOSEachWindow: opt.BOSEachWindow, MaxTokens: opt.MaxTokens,
		Split: cmp.Or(opt.Split, corpus.SplitAll), Separator: opt.Separator,
		Device: e.spec.String(), Precision: desc.Precision, Threads: desc.Threads, BatchTokens: opt.BatchTokens,
	}
	switch {
	case mode == pipeline.ModeStream && opt.BOSEachWindow:
		rc.Stride = window - 1 // the BOS and window-1 stream tokens
	case mode == pipeline.ModeStream:
		rc.Stride = window
	}
	prov := &pipeline.Provenance{
		Tool: "wgpu-eval", Version: version, Commit: commit, GoVersion: runtime.Version(),
		Model: pipeline.ModelProvenance{ID: e.name, Type: cmp.Or(e.ck.Config().ModelType, "gpt2"), Revision: snapshotRevision(e.path), Path: e.path,
			StoredDType: e.stored, WeightsSHA256: e.hash},
		Corpus:    pipeline.CorpusProvenance{Name: spec, SHA256: corp.SHA256, Format: string(corp.Format)},
		Tokenizer: e.tok.ID(),
		Device:    desc.Device,
		Start:     start.UTC(),
	}
	ec := pipeline.EvalConfig{
		Model:         e.name,
		Data:          dataName,
		Tokens:        toks,
		EOT:           e.tok.DocSeparator(),
		Mode:          mode,
		Ctx:           window,
		Stride:        stride,
		BOSEachWindow: opt.BOSEachWindow,
		BatchTokens:   opt.BatchTokens,
		MaxTokens:     opt.MaxTokens,
		VocabSize:     cfg.VocabSize,
		TokenLen:      e.tok.TokenLen,
		Words:         corpusWords(corp, opt.MaxTokens),
		Progress: func(p pipeline.Progress) {
			e.report(Progress{Stage: "eval", Done: int64(p.Done), Total: int64(p.Total), Scored: int64(p.Scored), NLLSum: p.NLLSum})
		},
		Shard:       opt.Shard,
		PerToken:    opt.PerToken != "" || opt.PerDocument != "" || opt.OnScored != nil, // per-document scores add the records up
		TopLogprobs: opt.TopLogprobs,
		OnPerToken:  e.onScored(opt.OnScored),
	}
	var ck *runfile.Checkpointer
	if opt.Checkpoint != "" {
		id := runfile.RunIdentity{ModelSHA256: e.hash, CorpusSHA256: corp.SHA256, Tokenizer: e.tok.ID(),
			Mode: rc.Mode, Ctx: rc.Ctx, Stride: rc.Stride, BOSEachWindow: rc.BOSEachWindow, MaxTokens: rc.MaxTokens, Split: rc.Split, Separator: rc.Separator,
			Precision: rc.Precision, Device: deviceIdentity(b.Name(), desc.Device), Shard: opt.Shard,
			PerToken: ec.PerToken, TopLogprobs: opt.TopLogprobs, Tool: buildIdentity()}
		if ck, err = runfile.OpenCheckpointer(opt.Checkpoint, id); err != nil {
			return nil, err
		}
		if why := ck.NoLock(); why != "" {
			e.log("warning: %s", why)
		}
		if resume, records := ck.Resume(); resume != nil {
			e.log("resuming from %s: %d of the run's targets scored already", infile.Quote(opt.Checkpoint), resume.Sums.Count)
			ec.Resume = resume
			ec.ResumePerToken = records
		}
		ec.OnBatch = ck.Save
		if ck.KeepsRecords() {
			ec.OnPerToken = bothRecords(ck.AppendRecords, e.onScored(opt.OnScored))
		}
	}
	res, err := pipeline.Evaluate(ctx, b, ec)
	if res != nil {
		res.Timings = pipeline.NewTimings(tokenized, loaded, setupLoaded.Sub(setupBefore), pipeline.SetupOf(b).Sub(setupLoaded), res.Seconds)
	}
	if res == nil {
		if ck != nil {
			kept := ck.Kept()
			err = errors.Join(err, ck.Finish(false))
			if kept { // a lost device, a full disk: what was scored is not lost
				err = fmt.Errorf("%w\nthe run's state as of its last checkpoint is in %s: run the same command again to continue from it", err, infile.Quote(opt.Checkpoint))
			}
		}
		return nil, err
	}
	// The device as it ran: the autotuner picks its tiles as the first
	// batches of each shape come (MatmulTiles), so the description taken
	// before the run names only the defaults.
	prov.Device = b.Describe().Device
	res.Config, res.Provenance = rc, prov
	var werr error // writing the outputs of a complete run
	switch {
	case err == nil:
		werr = e.writeOutputs(res, opt, toks)
	case opt.JSON != "": // interrupted: the partial result
		if jerr := runfile.WriteJSON(opt.JSON, res); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	if ck != nil {
		// The checkpoint goes only once every output is written.
		if cerr := ck.Finish(err == nil && werr == nil); cerr != nil && err == nil {
			werr = errors.Join(werr, cerr)
		}
	}
	if werr != nil {
		return res, &OutputError{Err: werr, Checkpoint: opt.Checkpoint}
	}
	return res, err
}

// bothRecords calls first, then second where it is set, with a batch's
// records; the first error stops.
func bothRecords(first, second func([]TokenNLL) error) func([]TokenNLL) error {
	if second == nil {
		return first
	}
	return func(recs []TokenNLL) error {
		if err := first(recs); err != nil {
			return err
		}
		return second(recs)
	}
}

// writeOutputs writes a complete run's per-document and per-token files and
// JSON; toks is the corpus it scored.
func (e *Evaluator) writeOutputs(res *Result, opt EvalOptions, toks *corpus.Tokens) error {
	if opt.PerDocument != "" {
		docs := runfile.DocumentScores(res.PerToken, pipeline.RecordBytes(toks, e.tok.DocSeparator(), e.tok.TokenLen))
		if err := runfile.WriteDocumentScores(opt.PerDocument, docs); err != nil {
			return err
		}
		e.log("scores of %d documents written to %s", len(docs), infile.Quote(opt.PerDocument))
	}
	if opt.PerToken != "" {
		if err := runfile.WritePerToken(opt.PerToken, runfile.NewPerTokenFile(res, e.tok.ID())); err != nil {
			return err
		}
		e.log("per-token NLLs of %d targets written to %s", len(res.PerToken), infile.Quote(opt.PerToken))
	}
	if opt.JSON != "" {
		return runfile.WriteJSON(opt.JSON, res)
	}
	return nil
}

// OutputError is Evaluate's error when the run completed but an output file
// (per-token, JSON) could not be written, or the checkpoint not removed: the
// result returned with it is complete. With a checkpoint, the run's state
// stays in it, so the same call again writes the outputs without scoring
// anything again.
type OutputError struct {
	Err        error
	Checkpoint string // the checkpoint that keeps the run; "" without one
}

// Error says what was not written and what is kept.
func (e *OutputError) Error() string {
	if e.Checkpoint != "" {
		return fmt.Sprintf("the run is complete, but %v (its state stays in %s: run the same command again to write the outputs)", e.Err, e.Checkpoint)
	}
	return fmt.Sprintf("the run is complete, but %v", e.Err)
}

// Unwrap is the write's error.
func (e *OutputError) Unwrap() error { return e.Err }

// corpusWords is corp's word count for word perplexity (corpus.CountWords
// over its documents), 0 where it is unknown: a token file, or a corpus cut
// at maxTokens.
func corpusWords(corp *corpus.Corpus, maxTokens int) int {
	if maxTokens > 0 || len(corp.Docs) == 0 {
		return 0
	}
	n := 0
	for _, d := range corp.Docs {
		n += corpus.CountWords(d)
	}
	return n
}

// tokenName is a special token as text ("<|endoftext|>", "<s>").
func tokenName(tok *tokenizer.Tokenizer, id int32) string {
	if s := tok.TokenText(id); s != "" {
		return s
	}
	return fmt.Sprintf("token %d", id)
}

// trainingData names whose training data joins documents the way the
// stream does: GPT-2's, with <|endoftext|> between them; else the model's,
// with its BOS.
func trainingData(tok *tokenizer.Tokenizer) string {
	if _, ok := tok.BOS(); ok {
		return "the model's"
	}
	return "GPT-2's"
}

// DataName is how results name a corpus: the spec, with the split when it is
// not the whole corpus ("tinyshakespeare:val").
func DataName(spec, split string) string {
	if split == "" || split == corpus.SplitAll {
		return spec
	}
	return spec + ":" + split
}

// Devices lists the Vulkan adapters in the order GPU(n) counts them. Where
// Vulkan is not installed it returns an error for which Unavailable is true;
// the CPU is always available.
func Devices() ([]AdapterInfo, error) { return backend.Devices() }

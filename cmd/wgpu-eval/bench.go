package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/jsonformat"
	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/hub"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/shaders"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// benchFlags are the flags of `wgpu-eval bench`.
type benchFlags struct {
	model, device, precision, matrixUnits, batches, jsonOut string
	threads, ctx, warmup, runs, chunk                       int
	profile, quiet, tune, pipelineStats                     bool
	insecureSkipVerify, offline                             bool
}

func (f *benchFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.model, "model", "m", "124M", "a shape with random weights (tiny, gpt2 or 124M, gpt2-medium or 355M, gpt2-large or 774M, gpt2-xl or 1558M; "+strings.Join(synth.LlamaShapeNames(), ", ")+"), or a model as eval takes it (a folder, a .safetensors or llm.c .bin file, a hub id such as org/name)")
	fs.StringVar(&f.device, "device", "auto", "where to run: auto, cpu, gpu, gpu:N (N as listed by 'wgpu-eval devices')")
	fs.StringVar(&f.precision, "precision", "", "weights: auto (the default: f16 on a GPU with shader-f16, else f32), f16 or f32; bf16 on the CPU (matmuls in bf16 with f32 sums; needs a CPU with AVX512_BF16)")
	fs.StringVar(&f.matrixUnits, "matrix-units", "", "GPU: multiply the weights and the LM head on the device's matrix units (tensor cores, VK_KHR_cooperative_matrix), activations rounded to f16 at their inputs: auto (the default, or $WGPU_EVAL_MATRIX_UNITS: where the device offers them for f16 weights and a first-use self-check against the ordinary kernels passed; the JSON says whether they ran), off, or on (fail where they cannot be used)")
	fs.IntVar(&f.threads, "threads", 0, "CPU threads (0: all cores)")
	fs.IntVar(&f.ctx, "ctx", 0, "tokens per window (0: the model's n_positions)")
	fs.StringVar(&f.batches, "batch", "", "windows per batch, a comma-separated list: each size is timed on its own (default: 1,4,8; on a hardware GPU 1, 8 and the batch eval runs there, as many windows as its batches hold: 64 at --ctx 1024)")
	fs.IntVar(&f.warmup, "warmup", 1, "batches run before the timed ones (pipelines, allocations)")
	fs.IntVar(&f.runs, "runs", 5, "timed batches per size; the median is reported")
	fs.IntVar(&f.chunk, "chunk", 0, "GPU: score each window in chunks of N positions (chunked prefill with a KV cache; 0: one pass)")
	fs.BoolVar(&f.profile, "profile", true, "GPU: time every kernel with timestamp queries, in one extra batch after the timed ones (where the device has timestamps)")
	fs.StringVar(&f.jsonOut, "json", "", "also write the figures as JSON to FILE (- for stdout); a file is rewritten after every batch size, a FIFO or pipe written once at the end")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bars or messages; only the figures")
	fs.BoolVar(&f.offline, "offline", false, "never use the network: a hub model must be cached (also HF_HUB_OFFLINE=1)")
	fs.BoolVar(&f.insecureSkipVerify, "insecure-skip-verify", false, "use hub files whose content cannot be checked (an ETag that is neither a sha256 nor a git sha1); by default they are refused")
	fs.BoolVar(&f.pipelineStats, "pipeline-stats", false, "GPU: ask the driver for every pipeline's compile statistics (register count, spills: what it reports, under its names; VK_KHR_pipeline_executable_properties, which NVIDIA's driver has and the CPU drivers lack) and print them, the autotuner's candidates too where it times them (first use, --tune); a diagnostic, some drivers then compile without their shader cache")
	fs.BoolVar(&f.tune, "tune", false, "GPU: time the matmul tile configurations for this model's shapes again (with the matrix units: their tilings, the LM head's and the attention kernels), at each --batch size (the autotuner, which otherwise runs once per device, driver and shape and keeps its choice beside the pipeline cache) and print every candidate's time")
}

const benchUsage = `Usage: wgpu-eval bench [flags]

Times the forward pass and loss on one device: for each batch size, random
token windows of --ctx tokens are scored --warmup times, then --runs times with
batches in flight as eval keeps them, and the median gives tokens/s (scored
tokens: batch x (ctx-1)) and windows/s. On a GPU it also reports the peak
device memory and, from one separate profiled batch, the GPU time, share,
GFLOP/s and GB/s of every kernel (printed for the largest batch that fits;
--json has every batch's). The weights do not change the speed: a shape name
benchmarks random weights of that shape without any download.

Examples:
  wgpu-eval bench                                      # GPT-2 124M shape, ctx 1024, best device (a GPU: batches 1,8,64)
  wgpu-eval bench --device gpu:0 --batch 1,2,4,8,16,32,64 --json bench.json
  wgpu-eval bench --model gpt2-xl --precision f16 --ctx 512 --runs 3
  wgpu-eval bench --device cpu --model tiny --batch 1,2 --runs 1 --warmup 0
  wgpu-eval bench --device gpu --tune --batch 64     # redo the autotuning at 64 windows, show each candidate

Flags:
`

// benchResult is what `wgpu-eval bench` measured: the speed of the forward
// pass and loss on one device, batch size by batch size, on random token
// windows, and the GPU time of every kernel. Its JSON (--json FILE) is one
// object:
//
//	tool, version, date       "wgpu-eval", version(), RFC 3339 UTC time of the run
//	commit, go_version        the build's VCS commit ("" when unknown: wgpueval.Version), the Go release it was built with
//	environment               the WGPU_EVAL_* variables set (kernel set, matrix units, workgroup memory, ...), which change what runs
//	cpu_model                 the CPU backend's processor
//	device                    the backend's Name() ("cpu", "NVIDIA H200 (f16), driver ...")
//	adapter                   wgpu.AdapterInfo of the GPU (name, vendor, deviceType, driver, limits, heaps); absent on the CPU
//	model                     {name: --model as given, random: true for a shape name, config: {n_layer, n_head, n_embd, n_positions, vocab_size, layer_norm_epsilon}}
//	precision                 weight type: "f16" or "f32" on a GPU; "f32" or "bf16" (--precision bf16) on the CPU
//	ctx, width                tokens per window; the padded batch width the backend's Feed asks for (>= ctx)
//	warmup, runs              batches run before timing; batches timed
//	in_flight                 batches kept submitted and not yet waited for in the timed runs (Feed().InFlight)
//	chunk                     --chunk (chunked prefill positions on the GPU; 0: one pass)
//	threads                   CPU goroutines (the CPU backend only)
//	device_bytes_after_load   device memory in use once the weights are uploaded (GPU only)
//	kernels                   the GPU's kernel set (software, hardware)
//	matrix_units              GPU: {mode: --matrix-units, used, config: M x N x K when tried, reason, attention}: whether the weight matmuls and LM head ran on the matrix units; attention: the attention kernel they bring, or why attention_shared stays
//	attention_tuning[]        GPU, matrix units: the autotuner's attention kernel per shape: {shape, tiles: {coop: 1 for attention_coop, 0 for attention_shared}, nanos, candidates[]}
//	pipelines[]               GPU, --pipeline-stats: every pipeline compiled, in order: {label: kernel{constants}, executables: [{name, description, subgroup_size, statistics: [{name, description, value}]}], error}, as the driver reports them
//	batches[]                 one per --batch entry, in the order given:
//	  batch                   windows per batch
//	  tokens                  scored targets per batch: batch*(ctx-1)
//	  input_tokens            batch*ctx
//	  over_feed_budget        true when batch*width exceeds Feed().BatchTokens: Evaluate would not form this batch
//	  fits                    false when the device ran out of memory (an error wrapping pipeline.ErrBatchTooLarge)
//	  error                   that error's text, when fits is false
//	  seconds[]               wall time of every timed run: from one batch's result to the next one's, with in_flight batches submitted
//	  median_seconds          the median of seconds
//	  tokens_per_second       tokens / median_seconds
//	  windows_per_second      batch / median_seconds
//	  mean_nll                mean NLL of the last run (about ln(vocab) for a random model: a sanity check, not a result)
//	  peak_device_bytes       wgpu MemoryStats().Peak over this size's warm-up and timed runs (weights included; activations of earlier sizes freed)
//	  profile_wall_seconds    wall time of the one profiled batch (timestamps add a pass per dispatch)
//	  kernels[]               GPU time per kernel from one separate, profiled batch (absent without timestamps or --profile=false):
//	    kernel, dispatches    the kernel (its .wgsl name) and its dispatches in the batch
//	    gpu_seconds, share    summed GPU time of its dispatches; its fraction of the total
//	    flops, bytes          floating-point operations (multiply-add = 2) and bytes moved (a lower bound), from the shapes
//	    gflop_per_second      flops / gpu_seconds / 1e9
//	    gb_per_second         bytes / gpu_seconds / 1e9
//	  kernel_total            the same fields summed over kernels (kernel "total", share 1)
type benchResult struct {
	Tool          string                    `json:"tool"`
	Version       string                    `json:"version"`
	Date          string                    `json:"date"`
	Commit        string                    `json:"commit"`
	GoVersion     string                    `json:"go_version"`
	Environment   map[string]string         `json:"environment,omitempty"`
	CPUModel      string                    `json:"cpu_model,omitempty"`
	Device        string                    `json:"device"`
	Adapter       *wgpu.AdapterInfo         `json:"adapter,omitempty"`
	Model         benchModel                `json:"model"`
	Precision     string                    `json:"precision"`
	Ctx           int                       `json:"ctx"`
	Width         int                       `json:"width"`
	Warmup        int                       `json:"warmup"`
	Runs          int                       `json:"runs"`
	InFlight      int                       `json:"in_flight"`
	Chunk         int                       `json:"chunk"`
	Threads       int                       `json:"threads,omitempty"`
	DeviceLoaded  uint64                    `json:"device_bytes_after_load,omitempty"`
	Peak          *devicePeak               `json:"peak,omitempty"`             // the adapter's datasheet peak, where known
	Kernels       string                    `json:"kernels,omitempty"`          // the kernel set: GPU software or hardware; CPU generic, avx2, avx512, neon (bf16: avx512+bf16-avx512, ...)
	MatrixUnits   *pipeline.MatrixUnitsInfo `json:"matrix_units,omitempty"`     // GPU: whether the matmuls ran on the matrix units, and why
	Tuning        []shaders.TuneChoice      `json:"tuning,omitempty"`           // GPU: the autotuner's matmul tiles by shape
	AttnTuning    []shaders.TuneChoice      `json:"attention_tuning,omitempty"` // GPU, matrix units: the autotuner's attention kernel by shape ({"coop": 1, ...}: attention_coop.wgsl and its tiling)
	Pipelines     []wgpu.PipelineStatistics `json:"pipelines,omitempty"`        // GPU, --pipeline-stats: the driver's statistics of every pipeline
	Batches       []benchBatch              `json:"batches"`
	profileReason string                    // why there are no kernel tables, for the human output
}

// benchFormat and benchFormatVersion mark bench's JSON: its first keys are
// "format" and "format_version", as a result's are (pipeline.ResultFormat).
const (
	benchFormat        = "wgpu-eval bench"
	benchFormatVersion = 1
)

// MarshalJSON is the bench result's JSON, marked with benchFormat and
// benchFormatVersion.
func (r benchResult) MarshalJSON() ([]byte, error) {
	type fields benchResult // without this method
	return jsonformat.Marshal(benchFormat, benchFormatVersion, fields(r))
}

type benchModel struct {
	Name   string      `json:"name"`
	Random bool        `json:"random"`
	Config benchConfig `json:"config"`
}

// benchConfig is model.Config under GPT-2's config.json names, with the
// Llama family's model_type, key/value heads, head size and MLP width
// (absent for GPT-2).
type benchConfig struct {
	ModelType    string  `json:"model_type,omitempty"`
	NLayer       int     `json:"n_layer"`
	NHead        int     `json:"n_head"`
	NKVHead      int     `json:"n_kv_head,omitempty"`
	HeadDim      int     `json:"head_dim,omitempty"`
	NEmbd        int     `json:"n_embd"`
	NInner       int     `json:"n_inner,omitempty"`
	NPositions   int     `json:"n_positions"`
	VocabSize    int     `json:"vocab_size"`
	LayerNormEps float64 `json:"layer_norm_epsilon"`
}

// benchConfigOf is cfg as benchConfig.
func benchConfigOf(cfg model.Config) benchConfig {
	b := benchConfig{NLayer: cfg.NLayer, NHead: cfg.NHead, NEmbd: cfg.NEmbd, NPositions: cfg.NPositions,
		VocabSize: cfg.VocabSize, LayerNormEps: cfg.LayerNormEps}
	if cfg.Arch == model.ArchLlama {
		b.ModelType, b.NKVHead, b.HeadDim, b.NInner = cfg.ModelType, cfg.KVHeads(), cfg.HeadDim(), cfg.Inner()
	}
	return b
}

type benchBatch struct {
	Batch          int           `json:"batch"`
	Tokens         int           `json:"tokens"`
	InputTokens    int           `json:"input_tokens"`
	OverBudget     bool          `json:"over_feed_budget"`
	Fits           bool          `json:"fits"`
	Error          string        `json:"error,omitempty"`
	Seconds        []float64     `json:"seconds,omitempty"`
	Median         float64       `json:"median_seconds,omitempty"`
	TokensPerSec   float64       `json:"tokens_per_second,omitempty"`
	WindowsPerSec  float64       `json:"windows_per_second,omitempty"`
	MeanNLL        float64       `json:"mean_nll,omitempty"`
	PeakDevice     uint64        `json:"peak_device_bytes,omitempty"`
	ProfileSeconds float64       `json:"profile_wall_seconds,omitempty"`
	Kernels        []benchKernel `json:"kernels,omitempty"`
	KernelTotal    *benchKernel  `json:"kernel_total,omitempty"`
}

type benchKernel struct {
	Kernel     string  `json:"kernel"`
	Dispatches int     `json:"dispatches"`
	GPUSeconds float64 `json:"gpu_seconds"`
	Share      float64 `json:"share"`
	Flops      float64 `json:"flops"`
	Bytes      float64 `json:"bytes"`
	GFlops     float64 `json:"gflop_per_second"`
	GBps       float64 `json:"gb_per_second"`
}

// benchWaitInterval is the hub client's WaitInterval for bench's model; 0 for
// hub.DefaultWaitInterval (tests shorten it).
var benchWaitInterval time.Duration

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f benchFlags
	var fs *pflag.FlagSet
	register := func(s *pflag.FlagSet) { f.register(s); fs = s }
	if err := parseFlags("bench", benchUsage, register, args, stdout); err != nil {
		return err
	}
	dev, err := backend.ParseDevice(f.device)
	if err != nil {
		return usageError{fmt.Errorf("--%w", err)}
	}
	if dev.Kind == "all" {
		return usageError{errors.New("--device all: bench times one device; use gpu:N for each")}
	}
	if err := checkPrecision(f.precision, f.matrixUnits, f.device); err != nil {
		return err
	}
	precision, _ := backend.ParsePrecision(f.precision) // checked
	// nil sizes: defaultBenchBatches's, once the device is known.
	var sizes []int
	if f.batches != "" {
		if sizes, err = parseBatches(f.batches); err != nil {
			return usageError{err}
		}
	}
	f.jsonOut = asStdout(f.jsonOut, stdout)
	if f.runs < 1 {
		return usageError{fmt.Errorf("--runs %d: want at least 1", f.runs)}
	}
	if err := notNegative(intFlag{"warmup", f.warmup}, intFlag{"ctx", f.ctx}, intFlag{"threads", f.threads}, intFlag{"chunk", f.chunk}); err != nil {
		return err
	}
	// A file is rewritten after every batch size, so that a run cut short keeps
	// what it measured; a FIFO, a device or a pipe (--json >(jq .)) gets the
	// JSON once, at the end: a second write would follow the first in the
	// reader's stream, or block once a reader such as cat has seen the end.
	rewrite := false
	if f.jsonOut != "" && f.jsonOut != "-" {
		if err := atomicfile.Check(f.jsonOut); err != nil { // before loading and timing, not after the first size
			return usageError{fmt.Errorf("bench: --json: %w", err)}
		}
		rewrite = atomicfile.Replaces(f.jsonOut)
	}
	boundThreads(stderr, &f.threads, f.quiet)
	say := func(format string, a ...any) {
		if !f.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	prog := newProgress(stderr, f.quiet)
	defer prog.close()

	// The model: a shape with random weights, or a checkpoint.
	var src model.TensorReader
	cfg, random := synth.Shape(f.model)
	if random {
		say("model %s: random weights, %s", f.model, cfg.Describe())
		src = synth.Random(cfg, 1).Reader()
	} else {
		hc := hub.FromEnv()
		hc.Progress, hc.WaitInterval = prog.bytes, benchWaitInterval
		hc.InsecureSkipVerify = f.insecureSkipVerify
		hc.Offline = hc.Offline || f.offline
		hc.Waiting = func(w hub.Wait) { // as eval reports them (wgpueval.Options.Log)
			if !f.quiet {
				prog.note(w.String())
			}
		}
		path, err := hc.Locate(ctx, f.model)
		if err != nil {
			return err
		}
		ck, err := model.OpenCheckpoint(ctx, path)
		if err != nil {
			return err
		}
		defer ck.Close()
		if err := notClobbering("bench", []clobber.File{{Role: "--json", Path: f.jsonOut}}, clobber.ModelFiles(ck.InputFiles())); err != nil {
			return err
		}
		cfg = ck.Config()
		say("model %s: %s (%s)", f.model, cfg.Describe(), path)
		src = ck
	}
	window := f.ctx
	if window == 0 {
		window = cfg.NPositions
	}
	if window < 2 || window > cfg.NPositions {
		return usageError{fmt.Errorf("--ctx %d: want 2 to the model's %d positions", window, cfg.NPositions)}
	}

	mu, _ := backend.ParseMatrixUnits(f.matrixUnits) // checked
	be, err := backend.Open(ctx, dev, src, backend.Options{
		Precision:          precision,
		MatrixUnits:        mu,
		Warn:               func(msg string) { fmt.Fprintln(stderr, msg) },
		Threads:            f.threads,
		Progress:           func(done, total int64) { prog.bytes("load "+f.model, done, total) },
		PipelineStatistics: f.pipelineStats,
	})
	if err != nil {
		return err
	}
	defer be.Close()
	prog.close()

	feed, desc := be.Feed(), be.Describe()
	_, commit := wgpueval.Version()
	res := &benchResult{
		Tool: "wgpu-eval", Version: version(), Date: time.Now().UTC().Format(time.RFC3339),
		Commit: commit, GoVersion: runtime.Version(), Environment: evalEnvironment(),
		Device:    be.Name(),
		Model:     benchModel{Name: f.model, Random: random, Config: benchConfigOf(cfg)},
		Precision: desc.Precision, Ctx: window, Width: feed.Width(window),
		Warmup: f.warmup, Runs: f.runs, InFlight: max(feed.InFlight, 1), Chunk: f.chunk,
	}
	// The GPU's own settings (chunked prefill, tuning, profiling) need its
	// model and device; the description serves everything else.
	gpu, _ := be.(*backend.GPU)
	res.Kernels = desc.Device.Kernels
	var g *shaders.GPT2
	profile := false
	if gpu != nil {
		g = gpu.Model()
		d := gpu.Device()
		info := d.AdapterInfo()
		res.Adapter = &info
		if p, ok := peakOf(&info); ok {
			res.Peak = &p
		}
		res.DeviceLoaded = d.MemoryStats().InUse
		res.MatrixUnits = desc.Device.MatrixUnits
		g.SetChunk(f.chunk)
		g.SetTuneEachSize(true) // each size as tuned for itself, whatever their order
		if f.tune {
			g.SetTuning(shaders.TuneRedo)
			if g.MatmulTiles() == nil { // the software kernels: no tiles, no candidates
				say("warning: --tune: the %s kernel set runs on %s and has no tile configurations to time; WGPU_EVAL_GPU_KERNELS=hardware runs (and tunes) the hardware set there", desc.Device.Kernels, info.Name)
			}
		}
		switch {
		case !f.profile:
			res.profileReason = "--profile=false"
		case !d.HasFeature(wgpu.FeatureTimestampQuery):
			res.profileReason = info.Name + " has no timestamp queries"
			if fs.Changed("profile") {
				say("warning: --profile: %s", res.profileReason)
			}
		default:
			profile = true
		}
		if f.warmup == 0 {
			// The first batch of a size records its pipelines and, on a
			// first use or with --tune, times the autotuner's candidates.
			say("warning: --warmup 0: the first timed batch compiles the pipelines (and, at a size not tuned before or " +
				"with --tune, runs the autotuner), and its time counts them; the median hides that only from --runs 3 on")
		}
	} else {
		res.Threads, res.CPUModel = desc.Threads, desc.Device.CPUModel
		res.profileReason = "the CPU has no kernel profile"
		for _, g := range []struct {
			set  bool
			flag string
		}{{f.chunk > 0, "--chunk"}, {f.tune, "--tune"}, {f.pipelineStats, "--pipeline-stats"}} {
			if g.set {
				say("warning: %s applies to GPUs only: not used on the CPU", g.flag)
			}
		}
	}
	say("device: %s", res.Device)
	if sizes == nil {
		sizes = defaultBenchBatches(gpu != nil && !shaders.Software(gpu.Device().AdapterInfo()), feed.BatchTokens, res.Width)
	}

	// The human output goes out line by line, so that a run cut short still shows the sizes done.
	human := stdout
	if f.jsonOut == "-" {
		human = stderr
	}
	if f.quiet && human == stderr {
		human = io.Discard
	}
	printBenchHeader(human, res)
	// decided fills in what the device decided so far (the autotuner's
	// choices, the pipelines compiled), for every write of the JSON: a file
	// rewritten after each size, or a run cut short, has them too.
	decided := func() {
		if g == nil {
			return
		}
		res.Tuning, res.AttnTuning = g.Tuning(), g.AttentionTuning()
		if gpu.Device().HasFeature(wgpu.FeaturePipelineStatistics) {
			res.Pipelines = gpu.Device().PipelineStatistics()
		}
	}
	// stopped ends a run interrupted at what (a size, its profile): what was
	// measured is above and, once more or for the first time (a pipe,
	// stdout), in the JSON.
	// printTables prints what the device decided and the kernel table of
	// the largest size profiled, after the sizes' rows: at the end of a
	// run, and of one cut short.
	printTables := func() {
		decided()
		if g != nil {
			printBenchTuning(human, res.Tuning, f.tune)
			printBenchAttnTuning(human, res.AttnTuning)
			if gpu.Device().HasFeature(wgpu.FeaturePipelineStatistics) {
				printBenchPipelines(human, res.Pipelines)
			}
		}
		printBenchKernels(human, res)
	}
	stopped := func(what string, err error) error {
		where := ""
		if len(res.Batches) > 0 {
			printTables()
		}
		if len(res.Batches) > 0 && f.jsonOut != "" {
			if werr := writeJSON(f.jsonOut, stdout, res); werr == nil && f.jsonOut != "-" {
				where = " and in " + infile.Quote(f.jsonOut)
			}
		}
		fmt.Fprintf(stderr, "stopped at %s: the sizes timed are above%s\n", what, where)
		return interrupted{err} // the exit status says it: 130, or 143 for SIGTERM
	}
	for _, n := range sizes {
		b := benchBatch{Batch: n, Tokens: n * (window - 1), InputTokens: n * window, Fits: true}
		// The windows' ids are held on the host before any device can say
		// the batch does not fit: a size whose ids alone exceed the memory
		// is a row that does not fit, not an allocation that fails.
		if err := sysmem.Check(fmt.Sprintf("the token ids of %d windows of %d", n, window), uint64(n)*uint64(window)*4); err != nil {
			b.Fits, b.Error = false, err.Error()
			res.Batches = append(res.Batches, b)
			printBenchBatch(human, &b)
			continue
		}
		batch := pipeline.Batch{Seqs: randomWindows(n, window, cfg.VocabSize), Width: res.Width}
		b.OverBudget = feed.BatchTokens > 0 && n*res.Width > feed.BatchTokens
		say("batch %d: %d warm-up, %d timed", n, f.warmup, f.runs)
		if gpu != nil {
			// This size's peak is its own: not the larger batches' memory of a size before it, nor the loading's.
			g.FreeActivations()
			gpu.Device().ResetMemoryPeak()
		}
		secs, sums, err := timeBatches(ctx, be, batch, f.warmup, f.runs, res.InFlight)
		if errors.Is(err, pipeline.ErrBatchTooLarge) {
			b.Fits, b.Error = false, err.Error()
			res.Batches = append(res.Batches, b)
			printBenchBatch(human, &b)
			continue
		}
		if err != nil && ctx.Err() != nil {
			return stopped(fmt.Sprintf("batch %d", n), err)
		}
		if err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		b.Seconds = secs
		b.Median = median(secs)
		if b.Median > 0 {
			b.TokensPerSec = float64(b.Tokens) / b.Median
			b.WindowsPerSec = float64(n) / b.Median
		}
		if sums.Count > 0 {
			b.MeanNLL = sums.Sum.Float64() / float64(sums.Count)
		}
		if gpu != nil {
			b.PeakDevice = gpu.Device().MemoryStats().Peak
		}
		if profile {
			if err := profileBatch(ctx, g, batch, &b); err != nil {
				if ctx.Err() != nil { // the timed runs count; the profile is left out
					b.Kernels, b.KernelTotal, b.ProfileSeconds = nil, nil, 0
					res.Batches = append(res.Batches, b)
					printBenchBatch(human, &b)
					return stopped(fmt.Sprintf("the profile of batch %d", n), err)
				}
				return fmt.Errorf("batch %d: profile: %w", n, err)
			}
		}
		res.Batches = append(res.Batches, b)
		printBenchBatch(human, &b)
		if rewrite {
			decided()
			if err := writeJSON(f.jsonOut, stdout, res); err != nil {
				return err
			}
		}
	}
	printTables()
	if f.jsonOut != "" {
		return writeJSON(f.jsonOut, stdout, res)
	}
	return nil
}

// evalEnvironment is the WGPU_EVAL_* variables set, not empty (nil for none): each
// changes what runs (the kernel set, the matrix units, how workgroup memory
// starts, the CPU's kernels), so figures name them.
func evalEnvironment() map[string]string {
	var env map[string]string
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" && strings.HasPrefix(k, "WGPU_EVAL_") { // empty: the default
			if env == nil {
				env = map[string]string{}
			}
			env[k] = v
		}
	}
	return env
}

// defaultBenchBatches is --batch's default: 1, 4 and 8 windows, and on a
// hardware GPU 1, 8 and the windows of width tokens that eval's batches
// hold (batchTokens, Feed().BatchTokens; at least 1), so that the largest
// size is what eval runs, without sizes past it.
func defaultBenchBatches(hardwareGPU bool, batchTokens, width int) []int {
	if !hardwareGPU || batchTokens <= 0 || width <= 0 {
		return []int{1, 4, 8}
	}
	eval := max(batchTokens/width, 1)
	var sizes []int
	for _, n := range []int{1, 8} {
		if n < eval {
			sizes = append(sizes, n)
		}
	}
	return append(sizes, eval)
}

// parseBatches parses --batch: positive sizes separated by commas.
func parseBatches(s string) ([]int, error) {
	var sizes []int
	for field := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--batch %q: want positive numbers of windows separated by commas, e.g. 1,4,8", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// randomWindows is n windows of ctx uniformly random tokens (the same for the
// same arguments), each scoring its tokens 2..ctx as in stream evaluation.
func randomWindows(n, ctx, vocab int) []model.Sequence {
	r := rand.New(rand.NewPCG(uint64(n), uint64(ctx)))
	seqs := make([]model.Sequence, n)
	for i := range seqs {
		toks := make([]int32, ctx)
		for j := range toks {
			toks[j] = int32(r.IntN(vocab))
		}
		seqs[i] = model.Sequence{Tokens: toks, First: 1}
	}
	return seqs
}

// timeBatches scores b warmup+runs times, keeping up to inFlight batches
// submitted and not yet waited for (as Evaluate does), and returns the wall
// time of each timed one, from the previous batch's result to its own, with
// the sums of the last. Every batch submitted is waited for, also after an
// error.
func timeBatches(ctx context.Context, be pipeline.Backend, b pipeline.Batch, warmup, runs, inFlight int) ([]float64, model.LossSums, error) {
	var queue []pipeline.Pending
	drain := func() {
		for _, p := range queue {
			p.Wait(ctx) //nolint:errcheck // results of an abandoned run
		}
	}
	var secs []float64
	var sums model.LossSums
	submitted, last := 0, time.Now()
	for k := range warmup + runs {
		for submitted < warmup+runs && len(queue) < inFlight {
			p, err := be.Submit(ctx, b)
			if err != nil {
				drain()
				return nil, sums, err
			}
			queue = append(queue, p)
			submitted++
		}
		s, err := queue[0].Wait(ctx)
		queue = queue[1:]
		if err != nil {
			drain()
			return nil, sums, err
		}
		now := time.Now()
		if k >= warmup {
			secs = append(secs, now.Sub(last).Seconds())
		}
		last, sums = now, s
	}
	return secs, sums, nil
}

// profileBatch scores b once more with timestamps around every dispatch and
// puts the GPU time per kernel into out.
func profileBatch(ctx context.Context, g *shaders.GPT2, b pipeline.Batch, out *benchBatch) error {
	if err := g.SetProfiling(true); err != nil {
		return err
	}
	defer g.SetProfiling(false) //nolint:errcheck // turning it off cannot fail
	start := time.Now()
	p, err := g.Submit(ctx, b.Seqs, b.Width)
	if err != nil {
		return err
	}
	if _, err := p.Wait(ctx); err != nil {
		return err
	}
	out.ProfileSeconds = time.Since(start).Seconds()
	total := benchKernel{Kernel: "total", Share: 1}
	for _, kt := range p.Profile() {
		k := benchKernel{Kernel: kt.Kernel, Dispatches: kt.Dispatches, GPUSeconds: float64(kt.Nanos) / 1e9, Flops: kt.Flops, Bytes: kt.Bytes}
		out.Kernels = append(out.Kernels, k)
		total.Dispatches += k.Dispatches
		total.GPUSeconds += k.GPUSeconds
		total.Flops += k.Flops
		total.Bytes += k.Bytes
	}
	if len(out.Kernels) == 0 {
		return nil
	}
	out.Kernels = append(out.Kernels, total)
	for i := range out.Kernels {
		k := &out.Kernels[i]
		if total.GPUSeconds > 0 {
			k.Share = k.GPUSeconds / total.GPUSeconds
		}
		if k.GPUSeconds > 0 {
			k.GFlops = k.Flops / k.GPUSeconds / 1e9
			k.GBps = k.Bytes / k.GPUSeconds / 1e9
		}
	}
	out.KernelTotal = &out.Kernels[len(out.Kernels)-1]
	out.Kernels = out.Kernels[:len(out.Kernels)-1]
	return nil
}

// median is the middle of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printBenchHeader prints the device, the model, the settings and the
// column names of printBenchBatch.
func printBenchHeader(w io.Writer, r *benchResult) {
	c := r.Model.Config
	kind := "weights from " + r.Model.Name
	if r.Model.Random {
		kind = r.Model.Name + " shape, random weights"
	}
	device := r.Device
	if r.Adapter == nil {
		device = fmt.Sprintf("%s x%d", device, r.Threads)
	}
	fmt.Fprintf(w, "device %s\n", device)
	if c.ModelType != "" {
		fmt.Fprintf(w, "model  %s: %s, %d layers, %d heads (%d key/value) of %d, C %d, MLP %d, vocab %d\n",
			kind, c.ModelType, c.NLayer, c.NHead, c.NKVHead, c.HeadDim, c.NEmbd, c.NInner, c.VocabSize)
	} else {
		fmt.Fprintf(w, "model  %s: %d layers, %d heads, C %d, vocab %d\n", kind, c.NLayer, c.NHead, c.NEmbd, c.VocabSize)
	}
	fmt.Fprintf(w, "run    %s weights, ctx %d (width %d), %d warm-up + median of %d runs, %d in flight", r.Precision, r.Ctx, r.Width, r.Warmup, r.Runs, r.InFlight)
	if r.Chunk > 0 {
		fmt.Fprintf(w, ", chunks of %d", r.Chunk)
	}
	fmt.Fprintln(w)
	if mu := r.MatrixUnits; mu != nil {
		used := "not used"
		if mu.Used {
			used = "used, " + mu.Config
		}
		fmt.Fprintf(w, "matrix units %s (%s): %s\n", used, mu.Mode, mu.Reason)
		if mu.Attention != "" {
			fmt.Fprintf(w, "attention on the matrix units: %s\n", mu.Attention)
		}
	}
	fmt.Fprintf(w, "\n%6s %10s %12s %10s %10s\n", "batch", "median s", "tokens/s", "windows/s", "peak MiB")
}

// printBenchBatch prints one batch size's line.
func printBenchBatch(w io.Writer, b *benchBatch) {
	if !b.Fits {
		fmt.Fprintf(w, "%6d  does not fit: %s\n", b.Batch, b.Error)
		return
	}
	peak := "-"
	if b.PeakDevice > 0 {
		peak = fmt.Sprintf("%.1f", float64(b.PeakDevice)/(1<<20))
	}
	note := ""
	if b.OverBudget {
		note = "  (over the backend's batch budget: eval would split it)"
	}
	fmt.Fprintf(w, "%6d %10.4f %12.1f %10.2f %10s%s\n", b.Batch, b.Median, b.TokensPerSec, b.WindowsPerSec, peak, note)
}

// printBenchKernels prints the kernel table of the largest batch that was
// profiled, or why there is none on a GPU.
func printBenchKernels(w io.Writer, r *benchResult) {
	var prof *benchBatch
	for i := range r.Batches {
		if b := &r.Batches[i]; len(b.Kernels) > 0 && (prof == nil || b.Batch > prof.Batch) {
			prof = b
		}
	}
	if prof == nil {
		if r.profileReason != "" && r.Adapter != nil {
			fmt.Fprintf(w, "\nno kernel profile: %s\n", r.profileReason)
		}
		return
	}
	fmt.Fprintf(w, "\nGPU time per kernel, batch %d (one profiled batch, %.3f s wall: timestamps add a pass per dispatch)\n", prof.Batch, prof.ProfileSeconds)
	width := len("kernel")
	for _, k := range prof.Kernels {
		width = max(width, len(k.Kernel))
	}
	if p := r.Peak; p != nil {
		tensor := ""
		if p.TensorTFlops > 0 {
			tensor = fmt.Sprintf(", %.0f TFLOP/s f16 on the matrix units (the _coop kernels' peak)", p.TensorTFlops)
		}
		fmt.Fprintf(w, "peak of the %s (%s): %.1f TFLOP/s f32 FMA%s, %.0f GB/s\n", p.Name, p.Source, p.TFlops, tensor, p.GBps)
		fmt.Fprintf(w, "%-*s %10s %10s %7s %10s %6s %9s %6s\n", width, "kernel", "dispatches", "GPU ms", "share", "GFLOP/s", "peak", "GB/s", "peak")
		// The total's share of peak: the time every kernel's FLOPs need at
		// its own peak (the matrix units' for _coop kernels), over the GPU
		// time; "-" where a kernel's peak is unknown.
		ideal, mixed := 0.0, false
		for _, k := range prof.Kernels {
			peak := p.TFlops
			if onMatrixUnits(k.Kernel) {
				peak, mixed = p.TensorTFlops, true
			}
			if peak <= 0 {
				ideal = math.NaN()
				continue
			}
			ideal += k.GFlops * k.GPUSeconds / (1e3 * peak)
		}
		for _, k := range append(slices.Clone(prof.Kernels), *prof.KernelTotal) {
			flops := fmt.Sprintf("%5.1f%%", k.GFlops/(10*p.TFlops))
			switch {
			case k.Kernel == "total" && mixed && math.IsNaN(ideal):
				flops = "     -"
			case k.Kernel == "total" && mixed:
				flops = fmt.Sprintf("%5.1f%%", 100*ideal/k.GPUSeconds)
			case onMatrixUnits(k.Kernel):
				flops = "     -" // no matrix peak known for this GPU
				if p.TensorTFlops > 0 {
					flops = fmt.Sprintf("%5.1f%%", k.GFlops/(10*p.TensorTFlops))
				}
			}
			fmt.Fprintf(w, "%-*s %10d %10.3f %6.1f%% %10.1f %s %9.1f %5.1f%%\n", width, k.Kernel, k.Dispatches, k.GPUSeconds*1e3, 100*k.Share,
				k.GFlops, flops, k.GBps, 100*k.GBps/p.GBps)
		}
		return
	}
	fmt.Fprintf(w, "%-*s %10s %10s %7s %10s %9s\n", width, "kernel", "dispatches", "GPU ms", "share", "GFLOP/s", "GB/s")
	for _, k := range append(slices.Clone(prof.Kernels), *prof.KernelTotal) {
		fmt.Fprintf(w, "%-*s %10d %10.3f %6.1f%% %10.1f %9.1f\n", width, k.Kernel, k.Dispatches, k.GPUSeconds*1e3, 100*k.Share, k.GFlops, k.GBps)
	}
}

// printBenchPipelines prints the driver's statistics of every pipeline, one
// line each: its label, then each executable's statistics as name=value.
func printBenchPipelines(w io.Writer, pipes []wgpu.PipelineStatistics) {
	fmt.Fprintf(w, "\npipeline statistics (the driver's, %d pipelines in the order compiled):\n", len(pipes))
	for _, p := range pipes {
		var parts []string
		for _, e := range p.Executables {
			for _, s := range e.Statistics {
				parts = append(parts, fmt.Sprintf("%s=%v", s.Name, s.Value))
			}
		}
		if p.Err != "" {
			parts = append(parts, "error: "+p.Err)
		}
		fmt.Fprintf(w, "%s: %s\n", p.Label, strings.Join(parts, ", "))
	}
}

// printBenchTuning prints the autotuner's choice per matmul shape and, when
// it timed them in this run (--tune), every candidate's time.
func printBenchTuning(w io.Writer, choices []shaders.TuneChoice, all bool) {
	if len(choices) == 0 {
		return
	}
	fmt.Fprintf(w, "\nmatmul tiles (BMxBNxBK/TMxTN; coop: subgroups SGMxSGN * matrices FMxFN / BK / EC) by shape, from the autotuner:\n")
	for _, c := range choices {
		from := "timed now"
		if c.Cached {
			from = "from the tuning file"
		}
		if c.Err != "" {
			fmt.Fprintf(w, "%-22s %-16s (the default: tuning failed: %s)\n", c.Shape, shaders.TilesName(c.Tiles), c.Err)
			continue
		}
		fmt.Fprintf(w, "%-22s %-16s %9.1f us  (%s)\n", c.Shape, shaders.TilesName(c.Tiles), float64(c.Nanos)/1e3, from)
		if !all {
			continue
		}
		for _, x := range c.Candidates {
			if x.Err != "" {
				fmt.Fprintf(w, "    %-16s %s\n", shaders.TilesName(x.Tiles), x.Err)
			} else {
				fmt.Fprintf(w, "    %-16s %9.1f us  %.2fx the best\n", shaders.TilesName(x.Tiles), float64(x.Nanos)/1e3, float64(x.Nanos)/float64(max(c.Nanos, 1)))
			}
		}
	}
}

// printBenchAttnTuning prints the autotuner's attention kernel per shape
// with both kernels' times (where the matrix units are used).
func printBenchAttnTuning(w io.Writer, choices []shaders.TuneChoice) {
	if len(choices) == 0 {
		return
	}
	fmt.Fprintf(w, "\nattention kernel by shape, from the autotuner:\n")
	name := map[float64]string{1: "attention_coop", 0: "attention_shared"}
	for _, c := range choices {
		from := "timed now"
		if c.Cached {
			from = "from the tuning file"
		}
		if c.Err != "" {
			fmt.Fprintf(w, "%-40s %s (tuning failed: %s)\n", c.Shape, name[c.Tiles["coop"]], c.Err)
			continue
		}
		fmt.Fprintf(w, "%-40s %-16s %9.1f us  (%s)\n", c.Shape, name[c.Tiles["coop"]], float64(c.Nanos)/1e3, from)
		for _, x := range c.Candidates {
			if x.Err != "" {
				fmt.Fprintf(w, "    %-16s %s\n", name[x.Tiles["coop"]], x.Err)
			} else {
				fmt.Fprintf(w, "    %-16s %9.1f us\n", name[x.Tiles["coop"]], float64(x.Nanos)/1e3)
			}
		}
	}
}

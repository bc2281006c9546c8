package wgpueval

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/hub"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// The types this package's API takes and returns, from the packages below
// it, so that a program needs no other import of this module.
type (
	// Config is a model's shape and options (Evaluator.Config).
	Config = model.Config
	// Tokenizer turns text into a model's token ids (Evaluator.Tokenizer).
	Tokenizer = tokenizer.Tokenizer
	// HubClient fetches models from the Hugging Face hub (Options.Hub).
	HubClient = hub.Client
	// AdapterInfo describes a Vulkan adapter (Devices).
	AdapterInfo = wgpu.AdapterInfo
	// Shard is the I-th of N interleaved parts of a run (EvalOptions.Shard).
	Shard = pipeline.Shard
	// TokenNLL is one scored target (EvalOptions.OnScored, Result.PerToken).
	TokenNLL = pipeline.TokenNLL
	// TokenLogprob is one of a position's highest log-probabilities
	// (TokenNLL.Top, with EvalOptions.TopLogprobs).
	TokenLogprob = pipeline.TokenLogprob
	// Timings is where a run's time went (Result.Timings).
	Timings = pipeline.Timings
	// Mode is an evaluation method (EvalOptions.Mode).
	Mode = pipeline.Mode
	// Precision is the weight type on a GPU, or the CPU's bf16 mode
	// (Options.Precision).
	Precision = backend.Precision
	// MatrixUnits says whether a GPU multiplies on its matrix units
	// (Options.MatrixUnits).
	MatrixUnits = backend.MatrixUnits
	// SampleOptions say how Generate picks each token
	// (GenerateOptions.Sampling).
	SampleOptions = model.SampleOptions
	// DocumentScore is one document's score in a per-document file
	// (EvalOptions.PerDocument).
	DocumentScore = runfile.DocumentScore
)

// MaxTopLogprobs is the most log-probabilities EvalOptions.TopLogprobs keeps
// per target.
const MaxTopLogprobs = pipeline.MaxTopLogprobs

// Unavailable reports whether err means that Vulkan cannot be used on this
// machine (no loader or no driver): Devices' error then, where a program
// falls back to DeviceCPU.
func Unavailable(err error) bool { return wgpu.Unavailable(err) }

// The evaluation methods (README, "Evaluation methods").
const (
	// ModeStream cuts the token stream into windows of Ctx tokens that do
	// not overlap; each window's first token is context only.
	ModeStream = pipeline.ModeStream
	// ModeStrided slides windows of Ctx tokens by Stride, scoring in each
	// only the tokens no earlier window scored.
	ModeStrided = pipeline.ModeStrided
	// ModeDocuments scores each document alone, after the separator token
	// (GPT-2's <|endoftext|>, or the tokenizer's BOS); long documents in
	// strided windows.
	ModeDocuments = pipeline.ModeDocuments
)

// The precisions.
const (
	// PrecisionAuto is f16 on a GPU with shader-f16, else f32; f32 on the CPU.
	PrecisionAuto = backend.PrecisionAuto
	// PrecisionF32 computes in f32 everywhere.
	PrecisionF32 = backend.PrecisionF32
	// PrecisionF16 keeps the weights in f16 on a GPU (accumulating in f32).
	PrecisionF16 = backend.PrecisionF16
	// PrecisionBF16 is the CPU's bf16 mode: matrix products with bf16
	// operands as AVX512_BF16 computes them (a CPU without it is an error,
	// unless WGPU_EVAL_CPU_KERNELS=generic runs the portable kernels).
	PrecisionBF16 = backend.PrecisionBF16
)

// The matrix-units choices: whether a GPU's weight matmuls and LM head run
// on its matrix units (tensor cores), with f16 activations at their inputs
// (README, "Matrix units").
const (
	// MatrixUnitsAuto uses them where the device offers a configuration the
	// kernels take, the weights are f16 and the self-check against the
	// ordinary kernels passed on the device and driver (the zero value too).
	MatrixUnitsAuto = backend.MatrixUnitsAuto
	// MatrixUnitsOff keeps the ordinary (SIMT) kernels.
	MatrixUnitsOff = backend.MatrixUnitsOff
	// MatrixUnitsOn requires them: Open refuses it (an *OptionError of
	// MatrixUnits) where the GPU's features show it has none, and Evaluate
	// fails, saying why, where the GPU cannot use them for another reason
	// (such as a failed self-check).
	MatrixUnitsOn = backend.MatrixUnitsOn
)

// ParseMatrixUnits reads auto (or ""), off or on.
func ParseMatrixUnits(s string) (MatrixUnits, error) { return backend.ParseMatrixUnits(s) }

// Device says where an Evaluator runs: one of the constants, or GPU(n).
// ParseDevice reads the names the command's --device takes.
type Device string

// The devices.
const (
	// DeviceAuto is the best hardware GPU, else the CPU (the zero value too).
	DeviceAuto Device = "auto"
	// DeviceCPU is the pure-Go CPU path.
	DeviceCPU Device = "cpu"
	// DeviceGPU is the best hardware GPU; an error where there is none.
	DeviceGPU Device = "gpu"
	// DeviceAll is every hardware GPU at once, sharing the batches.
	DeviceAll Device = "all"
)

// GPU is the n-th Vulkan adapter, from 0, in the order Devices lists them.
func GPU(n int) Device { return Device("gpu:" + strconv.Itoa(n)) }

// ParseDevice reads a device name, case-insensitively: auto, cpu, gpu,
// gpu:N or all.
func ParseDevice(s string) (Device, error) {
	spec, err := backend.ParseDevice(s)
	if err != nil {
		return "", err
	}
	return Device(spec.String()), nil
}

// ParsePrecision reads a precision name: auto (or ""), f16, f32 or bf16.
func ParsePrecision(s string) (Precision, error) { return backend.ParsePrecision(s) }

// ParseMode reads an evaluation method's name: stream, strided or
// documents.
func ParseMode(s string) (Mode, error) { return pipeline.ParseMode(s) }

// OptionError is a bad value in Options, EvalOptions, GenerateOptions or
// TokenizeOptions: Option is the field's name ("Ctx", "Device",
// "Sampling.TopP", ...), Value its value as text, Reason what is wrong with
// it. Open, Evaluate, Generate, Tokenize and the Check methods return it
// unwrapped, so a program can point at the setting, as the command points at
// its flag.
type OptionError struct {
	Option, Value, Reason string
}

// Error reads "Option Value: Reason".
func (e *OptionError) Error() string { return e.Option + " " + e.Value + ": " + e.Reason }

// badInt and badString are OptionErrors for an int or a string value.
func badInt(option string, v int, format string, a ...any) *OptionError {
	return &OptionError{option, strconv.Itoa(v), fmt.Sprintf(format, a...)}
}

func badString(option, v string, format string, a ...any) *OptionError {
	return &OptionError{option, v, fmt.Sprintf(format, a...)}
}

// badFloat is an OptionError for a float value.
func badFloat(option string, v float64, format string, a ...any) *OptionError {
	return &OptionError{option, strconv.FormatFloat(v, 'g', -1, 64), fmt.Sprintf(format, a...)}
}

// Check reports the first bad value of o that needs no model to see (the
// checks Open makes before it looks for the model), as an *OptionError.
func (o Options) Check() error {
	spec, err := backend.ParseDevice(string(o.device()))
	if err != nil {
		return badString("Device", string(o.Device), "want auto, cpu, gpu, gpu:N (N as Devices and `wgpu-eval devices` list them) or all")
	}
	prec, err := backend.ParsePrecision(string(o.Precision))
	if err != nil {
		return badString("Precision", string(o.Precision), "want auto, f16, f32 or bf16")
	}
	if o.Threads < 0 {
		return badInt("Threads", o.Threads, "must not be negative")
	}
	mu, err := backend.ParseMatrixUnits(string(o.MatrixUnits))
	if err != nil {
		return badString("MatrixUnits", string(o.MatrixUnits), "want auto, off or on")
	}
	if mu == MatrixUnitsOn && (spec.Kind == "cpu" || prec == PrecisionF32 || prec == PrecisionBF16) {
		return &OptionError{"MatrixUnits", "on", fmt.Sprintf("needs a GPU with f16 weights (device %s, precision %s): the matrix units multiply f16", spec, cmp.Or(string(prec), "auto"))}
	}
	switch {
	case prec == PrecisionF16 && spec.Kind == "cpu":
		return &OptionError{"Precision", "f16", "is for GPUs (f16 weights on the device): the cpu device computes in f32 " +
			"(F16 checkpoints stay 16-bit in its memory anyway) or in bf16"}
	case prec == PrecisionBF16 && (spec.Kind == "gpu" || spec.Kind == "all"):
		return &OptionError{"Precision", "bf16", fmt.Sprintf("runs on the cpu device only (device %s): GPUs compute in f16 or f32", spec)}
	case prec == PrecisionBF16:
		if err := model.CheckBF16(); err != nil {
			return &OptionError{"Precision", "bf16", strings.TrimPrefix(err.Error(), "bf16 ")}
		}
	}
	return nil
}

// device is o.Device, DeviceAuto for the zero value.
func (o Options) device() Device {
	if o.Device == "" {
		return DeviceAuto
	}
	return o.Device
}

// Check reports the first bad value of o that needs no model or corpus to
// see (Evaluate makes these checks first), as an *OptionError: among them an
// output file whose folder does not exist or cannot be written in.
func (o EvalOptions) Check() error {
	mode := o.mode()
	if _, err := pipeline.ParseMode(string(mode)); err != nil {
		return badString("Mode", string(o.Mode), "want stream, strided or documents")
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"Ctx", o.Ctx}, {"Stride", o.Stride}, {"MaxTokens", o.MaxTokens}, {"BatchTokens", o.BatchTokens}} {
		if v.n < 0 {
			return badInt(v.name, v.n, "must not be negative")
		}
	}
	if o.Stride > 0 && mode == ModeStream {
		return badInt("Stride", o.Stride, "stream windows do not overlap, so there is no stride; the strided mode slides windows")
	}
	if o.Ctx > 0 {
		if err := checkWindow(mode, o.Ctx, o.stride(o.Ctx), o.BOSEachWindow); err != nil {
			return err
		}
	}
	if err := checkSplit(o.Split); err != nil {
		return err
	}
	if o.PerDocument != "" && mode != ModeDocuments {
		return badString("PerDocument", o.PerDocument, "per-document scores need the documents mode (this run's mode is %s)", mode)
	}
	if s := o.Shard; s != (Shard{}) && (s.Count < 1 || s.Index < 0 || s.Index >= s.Count) {
		return &OptionError{"Shard", s.String(), "want I/N with 0 <= I < N"}
	}
	if o.PerDocument != "" && o.Shard.Count > 1 {
		return badString("PerDocument", o.PerDocument, "per-document scores need the whole run: a shard (%s) scores some windows of a "+
			"long document and the other shards the rest; write --per-token files, merge them and group the records by doc", o.Shard)
	}
	if o.TopLogprobs != 0 {
		if o.PerToken == "" && o.OnScored == nil {
			return badInt("TopLogprobs", o.TopLogprobs, "needs somewhere to put them: a PerToken file or OnScored")
		}
		if err := checkTopLogprobs(o.TopLogprobs, 0); err != nil {
			return err
		}
	}
	return checkOutputs(o)
}

// checkSplit refuses a Split that names no part of a corpus.
func checkSplit(split string) error {
	switch split {
	case "", corpus.SplitAll, corpus.SplitTrain, corpus.SplitVal:
		return nil
	}
	return badString("Split", split, "want all, train or val")
}

// checkWindow is pipeline.CheckModeWindow, with bos a BOS before every
// window (in stream mode, whose windows take their own stride, not
// checked), as an OptionError.
func checkWindow(mode Mode, window, stride int, bos bool) error {
	return asOption(pipeline.CheckModeWindow(mode, window, stride, bos && mode != ModeStream))
}

// checkTopLogprobs is pipeline.CheckTopLogprobs as an OptionError.
func checkTopLogprobs(k, vocab int) error { return asOption(pipeline.CheckTopLogprobs(k, vocab)) }

// settingOptions are the fields of the settings pipeline's checks name.
var settingOptions = map[string]string{"context length": "Ctx", "stride": "Stride", "top-logprobs": "TopLogprobs"}

// asOption turns pipeline's *SettingError into the OptionError of its field;
// nil stays nil.
func asOption(err error) error {
	var se *pipeline.SettingError
	if errors.As(err, &se) {
		if option, ok := settingOptions[se.Setting]; ok {
			return badInt(option, se.Value, "%s", se.Reason)
		}
	}
	return err
}

// mode is o.Mode, ModeStream for the zero value.
func (o EvalOptions) mode() Mode {
	if o.Mode == "" {
		return ModeStream
	}
	return o.Mode
}

// stride is the window step of o at context window: o.Stride, else half the
// window (at least 1).
func (o EvalOptions) stride(window int) int {
	if o.Stride > 0 {
		return o.Stride
	}
	return max(window/2, 1)
}

package backend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/shaders"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// GPU is the WGSL backend: shaders.GPT2 (GPT-2 or a model of the Llama
// family) on one Vulkan device, batches sized from the device's memory, two
// in flight; on a software adapter, batches of about a second's work, one in
// flight (gpuFeed).
type GPU struct {
	g     *shaders.GPT2
	dev   *wgpu.Device
	owned []func() error // closed by Close in order: the device, then its instance
	feed  pipeline.Feed
	name  string
}

// gpuWidthStep is the granularity of the GPU's bucket widths: a batch is padded
// to a multiple of it (or to the model's positions), so that few shapes occur
// and little is padding.
const gpuWidthStep = 64

// gpuWidths are the padded batch widths for a device that takes P
// positions: the powers of two below gpuWidthStep, then its multiples, and
// P. The short ones keep short windows and documents from being padded to
// 64 positions (--ctx 2 was 32 times the work: 54 s where 2 s did).
func gpuWidths(P int) []int {
	var widths []int
	for w := 2; w < min(gpuWidthStep, P); w *= 2 {
		widths = append(widths, w)
	}
	for w := gpuWidthStep; w < P; w += gpuWidthStep {
		widths = append(widths, w)
	}
	return append(widths, P)
}

// NewGPU uploads the model src holds (a *model.Checkpoint, or Model.Reader) to
// dev, tensor by tensor (f16 weights when f16 is set, else f32), and sizes
// batches from dev's memory budget. progress, when not nil, gets the bytes
// uploaded. Close releases the model on the device, not dev.
func NewGPU(ctx context.Context, dev *wgpu.Device, src model.TensorReader, f16 bool, progress func(done, total int64)) (*GPU, error) {
	g, err := shaders.NewGPT2(ctx, dev, src, f16, progress)
	if err != nil {
		return nil, err
	}
	n, err := g.MaxBatchTokens()
	if err != nil {
		g.Close()
		return nil, err
	}
	P := g.Positions() // the model's, unless the adapter caps them (shaders.GPT2.Positions)
	if n < 1 {
		g.Close()
		hint := ""
		if ft := dev.AdapterInfo().Features; !f16 && ft.ShaderF16 && ft.Storage16Bit { // what f16 weights need
			hint = " (f16 weights take half the memory: --precision f16)"
		}
		return nil, fmt.Errorf("%w: no memory left for activations after the weights%s", pipeline.ErrBatchTooLarge, hint)
	}
	info := dev.AdapterInfo()
	name := g.Name()
	if drv := strings.TrimSpace(info.DriverName + " " + cmp.Or(info.DriverInfo, info.DriverVersion)); drv != "" {
		name += ", driver " + drv
	}
	feed := gpuFeed(shaders.Software(info), src.Config(), n)
	feed.Widths = gpuWidths(P)
	return &GPU{g: g, dev: dev, feed: feed, name: name}, nil
}

// maxGPUBatchTokens caps a batch: 64 windows of 1024 tokens keep any GPU busy;
// larger batches only delay progress reports and a cancel.
const maxGPUBatchTokens = 64 * 1024

// hardwareBatchFlops caps a batch's work on a hardware GPU, so that
// progress moves and a cancel (which waits for the batches on the device)
// stays bounded for large models too. At the 31 TFLOP/s the matrix-unit
// kernels reached on an H200 with GPT-2 124M (124,375 tok/s, BENCHMARKS.md)
// that is about 8 s of work, where 64K tokens of an 8B model (1 PFLOP)
// would be half a minute (estimates, not measured). It binds only above
// about 2B parameters (GPT-2, Qwen2.5 0.5B to 1.5B and Llama 3.2 1B keep
// maxGPUBatchTokens), where a batch of it is still thousands of tokens
// (about 15,000 for an 8B model): matrices far larger than a GPU needs to
// be busy.
const hardwareBatchFlops = 2.5e14

// softwareBatchFlops caps a batch's work on a software adapter (lavapipe,
// SwiftShader: a few GFLOP/s on the host's cores), so that a batch takes
// about a second there and a cancel, which waits for the batch running, is
// as prompt; a batch still holds at least one sequence.
const softwareBatchFlops = 2e9

// gpuFeed is the batch budget and batches in flight for a model of shape
// cfg on an adapter that holds memTokens padded tokens a batch
// (GPT2.MaxBatchTokens). A hardware GPU takes the memory's budget up to
// maxGPUBatchTokens and hardwareBatchFlops of work, two batches in flight (the next one is recorded while
// the GPU runs the current one). A software adapter (software) takes
// softwareBatchFlops of work a batch, and one batch in flight: the host's
// recording is nothing beside a batch there, and a cancel then waits for one
// batch of about a second, not two of minutes.
func gpuFeed(software bool, cfg model.Config, memTokens int) pipeline.Feed {
	tokens := min(memTokens, maxGPUBatchTokens)
	if !software {
		return pipeline.Feed{BatchTokens: max(min(tokens, int(hardwareBatchFlops/tokenFlops(cfg))), 1), InFlight: 2}
	}
	capped := int(softwareBatchFlops / tokenFlops(cfg))
	return pipeline.Feed{BatchTokens: max(min(tokens, capped), 1), InFlight: 1}
}

// tokenFlops is the floating-point operations (a multiply-add is 2) of one
// position: the blocks' matrices and the LM head. Attention, which grows
// with the window, is left out (19 of GPT-2's 272 GFLOP a 1024-token window).
func tokenFlops(cfg model.Config) float64 {
	matrices := float64(cfg.VocabSize) * float64(cfg.NEmbd) // the LM head
	for _, s := range cfg.Tensors() {
		if s.Layer >= 0 && len(s.Shape) == 2 {
			matrices += float64(s.NumElements())
		}
	}
	return max(2*matrices, 1)
}

// Name is the adapter, the weight type and the driver.
func (g *GPU) Name() string { return g.name }

// Feed is widths in steps of 64 up to the model's positions, a token budget
// from the device's memory, two batches in flight; on a software adapter a
// smaller budget and one batch in flight (gpuFeed).
func (g *GPU) Feed() pipeline.Feed { return g.feed }

// Model is the model on the device, for settings such as chunked prefill.
func (g *GPU) Model() *shaders.GPT2 { return g.g }

// Submit starts b on the device. With b.PerToken the batch's per-target
// NLLs are read back too: a second readback, of 4 bytes per target; with
// b.TopLogprobs K also their positions' top-K (topk_logits.wgsl, 8K + 4
// bytes per target). b.Progress is never called: a batch is one command
// buffer, so there is nothing to report between its submission and its end.
func (g *GPU) Submit(ctx context.Context, b pipeline.Batch) (pipeline.Pending, error) {
	p, err := g.g.SubmitWith(ctx, b.Seqs, b.Width, shaders.SubmitOptions{PerToken: b.PerToken, TopLogprobs: b.TopLogprobs})
	if err != nil {
		return nil, gpuError(err)
	}
	return gpuPending{p}, nil
}

type gpuPending struct{ p *shaders.Pending }

func (p gpuPending) Wait(ctx context.Context) (model.LossSums, error) {
	s, err := p.p.Wait(ctx)
	return s, gpuError(err)
}

func (p gpuPending) PerToken() []float32 { return p.p.PerToken() }

func (p gpuPending) TopLogprobs() []pipeline.TokenLogprob { return p.p.TopLogprobs() }

// gpuError marks the device's out-of-memory errors as ErrBatchTooLarge.
func gpuError(err error) error {
	if errors.Is(err, wgpu.ErrOutOfMemory) {
		return fmt.Errorf("%w: %w", pipeline.ErrBatchTooLarge, err)
	}
	return err
}

// Close releases the model on the device, then what the GPU was opened with
// (the device and instance, when Open opened them).
func (g *GPU) Close() error {
	errs := []error{g.g.Close()}
	for _, c := range g.owned {
		errs = append(errs, c())
	}
	g.owned = nil
	return errors.Join(errs...)
}

// SetupTimes is the model's work besides its batches: pipelines, tuning,
// the self-check (shaders.SetupTimes).
func (g *GPU) SetupTimes() pipeline.SetupTimes {
	t := g.g.SetupTimes()
	return pipeline.SetupTimes{Compile: t.Compile, Tune: t.Tune, Check: t.Check}
}

// Device is the device the model is on.
func (g *GPU) Device() *wgpu.Device { return g.dev }

// Describe is the adapter, its driver, the kernel set and the weight type.
func (g *GPU) Describe() pipeline.BackendInfo {
	info := g.dev.AdapterInfo()
	prec := "f32"
	if g.g.F16() {
		prec = "f16"
	}
	return pipeline.BackendInfo{Precision: prec, Device: pipeline.DeviceInfo{
		Kind: "gpu", Name: g.name,
		Adapter: info.Name, Vendor: info.Vendor, APIVersion: info.APIVersion,
		Driver:  strings.TrimSpace(info.DriverName + " " + info.DriverInfo + " " + info.DriverVersion),
		Kernels: string(g.g.Kernels()), MatmulTiles: g.g.MatmulTiles(),
		MatrixUnits: matrixUnitsInfo(g.g.MatrixUnits()),
	}}
}

// setMatrixUnits makes the model decide now whether it multiplies on the
// device's matrix units (m; "" keeps $WGPU_EVAL_MATRIX_UNITS's choice), and
// passes the decision's warning, if any, to warn.
func (g *GPU) setMatrixUnits(m shaders.MatrixUnits, warn func(string)) error {
	if m != "" {
		if err := g.g.SetMatrixUnits(m); err != nil {
			return err
		}
	}
	if st := g.g.MatrixUnits(); st.Warning != "" && warn != nil {
		warn(st.Warning)
	}
	return nil
}

// matrixUnitsInfo is the provenance of a model's matrix-units decision.
func matrixUnitsInfo(st shaders.MatrixUnitsStatus) *pipeline.MatrixUnitsInfo {
	return &pipeline.MatrixUnitsInfo{Mode: string(st.Mode), Used: st.Used, Config: st.Config, Reason: st.Reason, Lowered: st.Lowered, Attention: st.Attention}
}

// Every run may ask for pipeline.MaxTopLogprobs log-probabilities per target
// and the GPU kernels keep shaders.MaxTopLogprobs: this constant (a negative
// uint) fails to compile if the kernels keep fewer.
const _ = uint(shaders.MaxTopLogprobs - pipeline.MaxTopLogprobs)

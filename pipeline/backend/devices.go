package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/shaders"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// DeviceSpec says where to evaluate, as --device spells it.
type DeviceSpec struct {
	// Kind is "auto", "cpu", "gpu" or "all".
	Kind string
	// Index is the adapter's position in Devices order for "gpu:N", else -1.
	Index int
}

// ParseDevice parses a device name, case-insensitively: auto (the best
// hardware GPU, else the CPU), cpu, gpu (the first adapter that can run,
// software ones included), gpu:N (the N-th adapter of Devices, from 0) or all
// (every hardware GPU at once).
func ParseDevice(s string) (DeviceSpec, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "auto", "cpu", "gpu", "all":
		return DeviceSpec{v, -1}, nil
	}
	if rest, ok := strings.CutPrefix(v, "gpu:"); ok {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 0 {
			return DeviceSpec{"gpu", n}, nil
		}
	}
	return DeviceSpec{}, fmt.Errorf("device %q: want auto, cpu, gpu, gpu:N (N as listed by `wgpu-eval devices`) or all", s)
}

// String spells the spec as ParseDevice reads it.
func (d DeviceSpec) String() string {
	if d.Kind == "gpu" && d.Index >= 0 {
		return "gpu:" + strconv.Itoa(d.Index)
	}
	return d.Kind
}

// Precision is the weight type on a GPU, or the CPU's bf16 mode.
type Precision string

// Precisions. PrecisionAuto is f16 where the device has shader-f16, else f32
// (on a GPU), and f32 on the CPU. PrecisionBF16 is the CPU's bf16 mode
// (model.LoadOptions.BF16): matmuls with weights take bf16 operands as
// AVX512_BF16's VDPBF16PS computes them, everything else f32; GPUs refuse it.
const (
	PrecisionAuto Precision = ""
	PrecisionF16  Precision = "f16"
	PrecisionF32  Precision = "f32"
	PrecisionBF16 Precision = "bf16"
)

// ParsePrecision parses a precision name: auto (or ""), f16, f32 or bf16.
func ParsePrecision(s string) (Precision, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", "auto":
		return PrecisionAuto, nil
	case "f16", "f32", "bf16":
		return Precision(v), nil
	}
	return "", fmt.Errorf("precision %q: want f16, f32 or bf16", s)
}

// Options tune Open.
type Options struct {
	// Precision is the weight type on GPUs; the CPU computes in f32, or in
	// its bf16 mode with PrecisionBF16 (which GPUs refuse; so does a CPU
	// without AVX512_BF16 unless PortableBF16 is set or
	// WGPU_EVAL_CPU_KERNELS=generic).
	Precision Precision
	// PortableBF16 runs the CPU's bf16 mode on the portable kernels (the same
	// bits as VDPBF16PS, on any CPU, slowly): for tests.
	PortableBF16 bool
	// Threads is the CPU path's goroutines; <= 0 means GOMAXPROCS.
	Threads int
	// Progress, when set, gets the bytes of weights loaded (CPU) or uploaded
	// (GPU) so far and the total.
	Progress func(done, total int64)
	// MatrixUnits says whether GPUs multiply on their matrix units (tensor
	// cores): MatrixUnitsAuto, MatrixUnitsOff or MatrixUnitsOn; "" is
	// $WGPU_EVAL_MATRIX_UNITS, else auto. A GPU decides when it opens
	// (running the self-check the first time a device and driver use them);
	// with On, Open fails where a GPU cannot use them.
	MatrixUnits MatrixUnits
	// Warn, when set, gets one-line warnings and notices, such as a GPU
	// whose matrix units failed the self-check and are not used, the
	// autotuner starting to time kernels (shaders.GPT2.SetTuneNotice), or,
	// from Close, a pipeline cache that could not be saved.
	Warn func(msg string)
	// PipelineStatistics asks a GPU's driver for the compile statistics of
	// every pipeline (wgpu.FeaturePipelineStatistics: registers, spills, as
	// the driver names them), where it reports them; Warn says where it
	// does not. A diagnostic (bench --pipeline-stats): some drivers compile
	// such pipelines without their shader cache.
	PipelineStatistics bool
	// PipelineCacheDir is where GPUs keep their Vulkan pipeline cache, and
	// beside it the autotuner's choices and the matrix units' self-check
	// verdicts (wgpu.DeviceDescriptor.PipelineCacheDir): "" means
	// os.UserCacheDir()/wgpu-eval/pipelines, "-" keeps none of them.
	PipelineCacheDir string
	// Validation runs GPUs under the Khronos validation layer, its
	// synchronization validation included (wgpu.InstanceDescriptor.Validation),
	// and passes each message it reports to Warn, each a bug to find or to
	// report (a GPU giving wrong results, say). Slow. Open fails where the
	// layer is not installed.
	// $WGPU_EVAL_VALIDATION=1 sets it too. The CPU ignores it.
	Validation bool
}

// ValidationEnv names the variable that, set to 1, turns on
// Options.Validation: for the CLI and programs that embed the library,
// without a rebuild. 0 or unset leave it to Options.
const ValidationEnv = "WGPU_EVAL_VALIDATION"

// validation reports whether opt or $WGPU_EVAL_VALIDATION asks for the
// validation layer.
func validation(opt Options) (bool, error) {
	switch v := os.Getenv(ValidationEnv); v {
	case "", "0":
		return opt.Validation, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("$%s is %q: want 1 (the Khronos validation layer checks every GPU command) or 0", ValidationEnv, v)
	}
}

// createInstance makes the Vulkan instance Open runs GPUs on: under the
// validation layer where validate, its messages passed to warn (dropped
// where warn is nil), and an error where the layer is not installed.
func createInstance(validate bool, warn func(string)) (*wgpu.Instance, error) {
	if !validate {
		return wgpu.CreateInstance(nil)
	}
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{Validation: true, OnMessage: func(m wgpu.Message) {
		if warn != nil {
			warn(validationMessage(m))
		}
	}})
	if err != nil {
		return nil, err
	}
	if !inst.ValidationEnabled() {
		inst.Close()
		return nil, fmt.Errorf("validation asked for ($%s or Options.Validation), but the Khronos validation layer (%s) is not installed: "+
			"on Debian and Ubuntu `apt-get install vulkan-validationlayers`, elsewhere the Vulkan SDK", ValidationEnv, wgpu.ValidationLayer)
	}
	if warn != nil {
		sync := "with"
		if !inst.SyncValidationEnabled() {
			sync = "without"
		}
		warn(fmt.Sprintf("wgpu-eval: every GPU command is checked by the Khronos validation layer, %s synchronization validation ($%s): slow; each message it reports follows, prefixed %q", sync, ValidationEnv, ValidationPrefix))
	}
	return inst, nil
}

// ValidationPrefix starts every warning that is a message of the validation
// layer or driver (Options.Validation): what a caller that silences notices
// should still show, since it was asked for.
const ValidationPrefix = "vulkan: "

// validationMessage is the warning line of a message of the validation layer
// or driver.
func validationMessage(m wgpu.Message) string {
	return ValidationPrefix + m.String()
}

// Devices lists the Vulkan adapters in the order gpu:N counts them (best
// first). Where Vulkan is not installed (no loader, no driver) it returns no
// adapters and an error for which wgpu.Unavailable is true.
func Devices() ([]wgpu.AdapterInfo, error) {
	inst, err := wgpu.CreateInstance(nil)
	if err != nil {
		return nil, err
	}
	defer inst.Close()
	ads, err := inst.EnumerateAdapters()
	infos := make([]wgpu.AdapterInfo, len(ads))
	for i, a := range ads {
		infos[i] = a.Info()
	}
	return infos, err
}

// software reports whether an adapter is a software rasterizer (lavapipe,
// SwiftShader), which auto and all never pick: the CPU path is faster there.
func software(a *wgpu.Adapter) bool { return shaders.Software(a.Info()) }

// noMemory reports whether an adapter has no memory at all: a driver's
// stand-in that compiles pipelines for a GPU it does not have (Mesa's RADV
// on "null hardware", with RADV_FORCE_FAMILY set) and runs nothing. auto,
// all and gpu never pick one (gpu takes the first adapter that has memory);
// gpu:N refuses it.
func noMemory(a *wgpu.Adapter) bool {
	for _, h := range a.Info().MemoryHeaps {
		if h.Size > 0 {
			return false
		}
	}
	return true
}

// Open opens the backend spec names for the model src holds (with
// PrecisionBF16, auto is the CPU and a GPU is an error): a
// *model.Checkpoint (the CPU reads it into its own layout and holds one copy,
// F16 and BF16 matrices as 16 bits, model.LoadCPU; a GPU gets its weights tensor by tensor, 16-bit
// checkpoints as 16-bit), or a loaded Model's Reader (the CPU keeps a packed
// copy beside the Model, which stays the caller's). src may be closed once Open returns. auto takes the best hardware
// GPU (discrete before integrated) and never a software driver such as
// lavapipe, on which the CPU path is faster; without a hardware GPU it is the
// CPU. gpu and gpu:N take the adapter asked for, software ones included. all
// spreads batches over every hardware GPU. Close the backend when done: it
// releases the devices too.
func Open(ctx context.Context, spec DeviceSpec, src model.TensorReader, opt Options) (pipeline.Backend, error) {
	cpu := func() (pipeline.Backend, error) {
		if opt.MatrixUnits == MatrixUnitsOn {
			return nil, fmt.Errorf("matrix units required (on), but device %s runs on the cpu, which has none: use a GPU with f16 weights, or --matrix-units auto", spec)
		}
		bf16 := opt.Precision == PrecisionBF16
		lo := model.LoadOptions{Progress: opt.Progress, BF16: bf16, PortableBF16: opt.PortableBF16}
		if ck, ok := src.(*model.Checkpoint); ok {
			// Straight into the CPU's layout, one copy, 16-bit checkpoints
			// kept 16-bit.
			c, err := model.LoadCPU(ctx, ck, opt.Threads, lo)
			if err != nil {
				return nil, err
			}
			return &CPU{c}, nil
		}
		m, err := model.LoadReader(ctx, src, lo)
		if err != nil {
			return nil, err
		}
		if bf16 {
			c, err := model.NewCPUBF16(m, opt.Threads, opt.PortableBF16)
			if err != nil {
				return nil, fmt.Errorf("precision bf16: %w", err)
			}
			return &CPU{c}, nil
		}
		return NewCPU(m, opt.Threads), nil // the caller's Model, left usable
	}
	if spec.Kind == "cpu" || spec.Kind == "auto" && opt.Precision == PrecisionBF16 {
		return cpu() // bf16 is the CPU's: auto means the cpu then
	}
	validate, err := validation(opt)
	if err != nil {
		return nil, err
	}
	inst, err := createInstance(validate, opt.Warn)
	if err != nil {
		if spec.Kind == "auto" && wgpu.Unavailable(err) {
			return cpu()
		}
		return nil, instanceError(spec, err)
	}
	adapters, err := inst.EnumerateAdapters()
	if err != nil && !(spec.Kind == "auto" && wgpu.Unavailable(err)) {
		inst.Close()
		return nil, fmt.Errorf("device %s: %w", spec, err)
	}
	picked, err := pickAdapters(spec, adapters)
	if err != nil {
		inst.Close()
		return nil, err
	}
	if len(picked) == 0 { // auto without a hardware GPU
		inst.Close()
		return cpu()
	}
	var gpus []pipeline.Backend
	fail := func(err error) (pipeline.Backend, error) {
		for _, g := range gpus {
			g.Close()
		}
		inst.Close()
		return nil, err
	}
	for _, ad := range picked {
		g, err := openGPU(ctx, ad, src, opt)
		if err != nil {
			return fail(err)
		}
		gpus = append(gpus, g)
	}
	if len(gpus) == 1 {
		g := gpus[0].(*GPU)
		g.owned = append(g.owned, func() error { inst.Close(); return nil })
		return g, nil
	}
	return pipeline.NewMulti(gpus, inst.Close), nil
}

// pickAdapters chooses the adapters spec names among adapters (best first):
// none for auto without a hardware GPU (the CPU then), an error where spec
// names what is not there.
func pickAdapters(spec DeviceSpec, adapters []*wgpu.Adapter) ([]*wgpu.Adapter, error) {
	switch {
	case spec.Kind == "auto" || spec.Kind == "all":
		var picked []*wgpu.Adapter
		for _, a := range adapters { // best first
			if !software(a) && !noMemory(a) {
				picked = append(picked, a)
				if spec.Kind == "auto" {
					break
				}
			}
		}
		if len(picked) == 0 && spec.Kind == "all" {
			return nil, fmt.Errorf("device all: no hardware GPU among the %s (software drivers are left out; use gpu:N for one)", pipeline.Count(len(adapters), "Vulkan adapter"))
		}
		return picked, nil
	case spec.Index >= 0:
		if spec.Index >= len(adapters) {
			if len(adapters) == 0 {
				return nil, fmt.Errorf("device %s: this machine has no Vulkan adapter (see `wgpu-eval devices`)", spec)
			}
			return nil, fmt.Errorf("device %s: no such adapter; this machine has %s, gpu:0 to gpu:%d (see `wgpu-eval devices`)", spec, pipeline.Count(len(adapters), "Vulkan adapter"), len(adapters)-1)
		}
		return adapters[spec.Index : spec.Index+1], nil
	default:
		if len(adapters) == 0 {
			return nil, errors.New("device gpu: no Vulkan adapter")
		}
		for i, a := range adapters { // best first: the first that can run
			if !noMemory(a) {
				return adapters[i : i+1], nil
			}
		}
		return adapters[:1], nil // none can: openGPU says why
	}
}

// CheckDevice reports, before anything is loaded, a device spec that
// Open would refuse for want of it: gpu, gpu:N or all without Vulkan,
// without an adapter at that index, or without a hardware GPU. auto and cpu
// always pass (auto falls back to the CPU), but for a $WGPU_EVAL_VALIDATION
// that is neither 1 nor 0.
func CheckDevice(spec DeviceSpec) error {
	if spec.Kind == "cpu" {
		return nil
	}
	if _, err := validation(Options{}); err != nil {
		return err
	}
	if spec.Kind == "auto" {
		return nil
	}
	inst, err := wgpu.CreateInstance(nil)
	if err != nil {
		return instanceError(spec, err)
	}
	defer inst.Close()
	adapters, err := inst.EnumerateAdapters()
	if err != nil {
		return fmt.Errorf("device %s: %w", spec, err)
	}
	_, err = pickAdapters(spec, adapters)
	return err
}

// instanceError is the error of a device spec whose Vulkan instance could not
// be made: what to install, where that is the reason.
func instanceError(spec DeviceSpec, err error) error {
	if hint := wgpu.InstallHint(err); hint != "" {
		return fmt.Errorf("device %s: %w (%s, or use the cpu device)", spec, err, hint)
	}
	return fmt.Errorf("device %s: %w", spec, err)
}

// CheckKernelsEnv reports a value of $WGPU_EVAL_CPU_KERNELS or
// $WGPU_EVAL_GPU_KERNELS that names no kernel set, whichever device runs.
func CheckKernelsEnv() error {
	_, gerr := shaders.KernelSetFromEnv()
	return errors.Join(model.CheckKernelsEnv(), gerr)
}

// openGPU opens a device on ad and uploads src in the precision asked for.
func openGPU(ctx context.Context, ad *wgpu.Adapter, src model.TensorReader, opt Options) (*GPU, error) {
	prec := opt.Precision
	name := ad.Info().Name
	f16 := ad.HasFeature(wgpu.FeatureShaderF16)
	switch {
	case prec == PrecisionBF16:
		return nil, fmt.Errorf("precision bf16 runs on the cpu device only (the CPU's AVX512_BF16 products); %s computes in f16 or f32: use --device cpu or --precision f16/f32", name)
	case prec == PrecisionF32:
		f16 = false
	case prec == PrecisionF16 && !f16:
		return nil, fmt.Errorf("precision f16: %s lacks shader-f16; use f32", name)
	}
	if noMemory(ad) {
		return nil, fmt.Errorf("%s reports no memory: a driver's stand-in that compiles but cannot run (Mesa's null hardware, "+
			"with RADV_FORCE_FAMILY set?); pick another device (see `wgpu-eval devices`)", name)
	}
	feats := DeviceFeatures(ad, f16, opt.MatrixUnits)
	if opt.PipelineStatistics {
		if ad.HasFeature(wgpu.FeaturePipelineStatistics) {
			feats = append(feats, wgpu.FeaturePipelineStatistics)
		} else if opt.Warn != nil {
			opt.Warn(fmt.Sprintf("warning: %s: the driver reports no pipeline statistics (no VK_KHR_pipeline_executable_properties)", name))
		}
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{Label: "wgpu-eval", RequiredFeatures: feats, PipelineCacheDir: opt.PipelineCacheDir})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	if w := dev.PipelineCacheWarning(); w != "" && opt.Warn != nil {
		opt.Warn(fmt.Sprintf("warning: %s: %s", name, w))
	}
	g, err := NewGPU(ctx, dev, src, f16, opt.Progress)
	if err != nil {
		dev.Close()
		if errors.Is(err, model.ErrOutsideF16) {
			return nil, fmt.Errorf("%s: %w (f16 weights cannot hold it: --precision f32 keeps them in f32 on the GPU)", name, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	warn := opt.Warn
	g.owned = append(g.owned, func() error {
		err := dev.Close()
		if w := dev.PipelineCacheSaveWarning(); w != "" && warn != nil { // not an error: the run is done
			warn(fmt.Sprintf("warning: %s: %s", name, w))
		}
		return err
	})
	g.g.SetTuneNotice(opt.Warn)
	if err := g.setMatrixUnits(opt.MatrixUnits, opt.Warn); err != nil {
		g.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// MatrixUnits says whether GPUs multiply on their matrix units
// (Options.MatrixUnits): MatrixUnitsAuto, MatrixUnitsOff or MatrixUnitsOn.
type MatrixUnits = shaders.MatrixUnits

// The matrix-units choices (shaders.MatrixUnits).
const (
	MatrixUnitsAuto = shaders.MatrixUnitsAuto
	MatrixUnitsOff  = shaders.MatrixUnitsOff
	MatrixUnitsOn   = shaders.MatrixUnitsOn
)

// ParseMatrixUnits reads auto (or ""), off or on.
func ParseMatrixUnits(s string) (MatrixUnits, error) { return shaders.ParseMatrixUnits(s) }

// DeviceFeatures are the features a GPU backend's device is opened with on
// ad: shader-f16 for f16 weights, and where the adapter has them, timestamps
// (profiles), subgroups (the subgroup norms, and the matrix-unit kernels)
// and, for f16 weights unless mu is MatrixUnitsOff, the cooperative
// matrices with subgroup-size control (the matrix units).
func DeviceFeatures(ad *wgpu.Adapter, f16 bool, mu MatrixUnits) []wgpu.FeatureName {
	var feats []wgpu.FeatureName
	if f16 {
		feats = append(feats, wgpu.FeatureShaderF16)
	}
	for _, f := range []wgpu.FeatureName{wgpu.FeatureTimestampQuery, wgpu.FeatureSubgroups} {
		if ad.HasFeature(f) {
			feats = append(feats, f)
		}
	}
	if f16 && mu != MatrixUnitsOff && ad.HasFeature(wgpu.FeatureCooperativeMatrix) {
		feats = append(feats, wgpu.FeatureCooperativeMatrix)
		if ad.HasFeature(wgpu.FeatureSubgroupSizeControl) {
			feats = append(feats, wgpu.FeatureSubgroupSizeControl)
		}
	}
	return feats
}

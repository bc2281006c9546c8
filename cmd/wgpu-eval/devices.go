package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

const devicesUsage = `Usage: wgpu-eval devices [--json]

Lists the Vulkan adapters (GPUs, and CPU implementations such as lavapipe) with
their driver, limits and features, best first, so machines can be compared.
"matrix units" lists the driver's cooperative-matrix configurations (M x N x K,
the A, B, C and result types, scope), "(not for WGSL)" marking those that WGSL
subgroup matrices cannot use. An adapter with 0 MiB of memory is a driver's
compile-only stand-in (Mesa's null hardware, RADV_FORCE_FAMILY): it runs
nothing, so auto, all and gpu pass it over and gpu:N refuses it.
Exits 1 with an explanation when no Vulkan loader or driver is installed.

Flags:
`

// enumerateAdapters is wgpu.EnumerateAdapters; tests replace it.
var enumerateAdapters = wgpu.EnumerateAdapters

func runDevices(args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	register := func(fs *pflag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print the adapters as a JSON array") }
	if err := parseFlags("devices", devicesUsage, register, args, stdout); err != nil {
		return err
	}
	adapters, err := enumerateAdapters()
	if err != nil {
		if wgpu.Unavailable(err) {
			return fmt.Errorf("no Vulkan device: %w (%s; evaluation still runs with --device cpu)", err, wgpu.InstallHint(err))
		}
		return fmt.Errorf("list Vulkan devices: %w", err)
	}
	if asJSON {
		if adapters == nil {
			adapters = []wgpu.AdapterInfo{}
		}
		b, err := json.MarshalIndent(adapters, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	if len(adapters) == 0 {
		fmt.Fprintln(stdout, "no Vulkan adapters")
		return nil
	}
	for i, a := range adapters {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writeAdapter(stdout, i, a)
	}
	return nil
}

// writeAdapter prints one adapter as a short, aligned block.
func writeAdapter(w io.Writer, i int, a wgpu.AdapterInfo) {
	var vram uint64
	for _, h := range a.MemoryHeaps {
		if h.DeviceLocal {
			vram += h.Size
		}
	}
	l, f := a.Limits, a.Features
	var feats []string
	for _, x := range []struct {
		on   bool
		name string
	}{
		{f.ShaderF16, "f16"}, {f.Storage16Bit, "16-bit-storage"}, {f.Subgroups, "subgroups"},
		{f.SubgroupSizeControl, "subgroup-size-control"}, {f.TimestampQuery, "timestamps"},
		{f.CooperativeMatrix, "cooperative-matrix"}, {f.PipelineStatistics, "pipeline-statistics"},
	} {
		if x.on {
			feats = append(feats, x.name)
		}
	}
	fmt.Fprintf(w, "[%d] %s (%s, %s)\n", i, a.Name, a.Vendor, a.DeviceType)
	info := ""
	if a.DriverInfo != "" { // SwiftShader's is empty
		info = " (" + a.DriverInfo + ")"
	}
	fmt.Fprintf(w, "    driver      %s %s%s, Vulkan %s\n", a.DriverName, a.DriverVersion, info, a.APIVersion)
	fmt.Fprintf(w, "    uuid        %s (vendor %#04x, device %#04x)\n", a.DeviceUUID, a.VendorID, a.DeviceID)
	fmt.Fprintf(w, "    memory      %s device-local\n", gib(vram))
	fmt.Fprintf(w, "    storage     max binding %s, max buffer %s\n", gib(l.MaxStorageBufferBindingSize), gib(l.MaxBufferSize))
	fmt.Fprintf(w, "    workgroup   %d invocations, %d KiB shared memory, subgroup %d (%d-%d)\n",
		l.MaxComputeInvocationsPerWorkgroup, l.MaxComputeWorkgroupStorageSize/1024, l.SubgroupSize, l.MinSubgroupSize, l.MaxSubgroupSize)
	fmt.Fprintf(w, "    features    %s\n", strings.Join(feats, " "))
	if f.TimestampQuery { // what a kernel profile's resolution rests on
		fmt.Fprintf(w, "    timestamps  %g ns a tick\n", l.TimestampPeriod)
	}
	if len(f.SubgroupOperations) > 0 {
		fmt.Fprintf(w, "    subgroup ops %s\n", strings.Join(f.SubgroupOperations, " "))
	}
	// One line per cooperative-matrix configuration; "(not for WGSL)" marks those subgroup matrices cannot use.
	for k, c := range f.CooperativeMatrixConfigs {
		label := "matrix units"
		if k > 0 {
			label = ""
		}
		mark := ""
		if !c.SubgroupMatrix {
			mark = " (not for WGSL)"
		}
		fmt.Fprintf(w, "    %-12s %s%s\n", label, c, mark)
	}
}

// gib formats a byte count in GiB (or MiB below 1 GiB).
func gib(n uint64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// checkPrecision refuses --precision and --matrix-units values that cannot
// run with --device (wgpueval.Options.Check: bf16 on a GPU, or on a CPU
// without AVX512_BF16 unless WGPU_EVAL_CPU_KERNELS=generic asks for the
// portable kernels; f16 on the cpu device; matrix units required without f16
// weights on a GPU), before any weights are read.
func checkPrecision(precision, matrixUnits, device string) error {
	return flagError(wgpueval.Options{Device: wgpueval.Device(device), Precision: wgpueval.Precision(precision),
		MatrixUnits: wgpueval.MatrixUnits(matrixUnits)}.Check())
}

// optionFlags are the flags behind the library's options, for flagError.
var optionFlags = map[string]string{
	"Device": "device", "Precision": "precision", "Threads": "threads", "MatrixUnits": "matrix-units",
	"Mode": "mode", "Ctx": "ctx", "Stride": "stride", "MaxTokens": "max-tokens", "BatchTokens": "batch-tokens",
	"PerDocument": "per-document", "Shard": "shard", "TopLogprobs": "top-logprobs", "BOSEachWindow": "bos-each-window",
	"Split": "split", "JSON": "json", "PerToken": "per-token", "Checkpoint": "checkpoint",
	"MaxNewTokens": "max-new-tokens", "Sampling.Temperature": "temperature", "Sampling.TopK": "top-k", "Sampling.TopP": "top-p",
	"Prompt": "prompt",
}

// flagError turns the library's *wgpueval.OptionError into a usage error
// naming the flag ("--ctx 65: longer than the model's 64 positions"); other
// errors pass unchanged.
func flagError(err error) error {
	var oe *wgpueval.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	name, ok := optionFlags[oe.Option]
	if !ok {
		return usageError{err}
	}
	return usageError{fmt.Errorf("--%s %s: %s", name, oe.Value, oe.Reason)}
}

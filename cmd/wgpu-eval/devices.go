package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

const devicesUsage = `Usage: wgpu-eval devices [--json]

Lists the Vulkan adapters (GPUs, and CPU implementations such as lavapipe) with
their driver, limits and features, best first, so machines can be compared.
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
		{f.CooperativeMatrix, "cooperative-matrix"},
	} {
		if x.on {
			feats = append(feats, x.name)
		}
	}
	fmt.Fprintf(w, "[%d] %s (%s, %s)\n", i, a.Name, a.Vendor, a.DeviceType)
	fmt.Fprintf(w, "    driver      %s %s (%s), Vulkan %s\n", a.DriverName, a.DriverVersion, a.DriverInfo, a.APIVersion)
	fmt.Fprintf(w, "    uuid        %s\n", a.DeviceUUID)
	fmt.Fprintf(w, "    memory      %s device-local\n", gib(vram))
	fmt.Fprintf(w, "    storage     max binding %s, max buffer %s\n", gib(l.MaxStorageBufferBindingSize), gib(l.MaxBufferSize))
	fmt.Fprintf(w, "    workgroup   %d invocations, %d KiB shared memory, subgroup %d (%d-%d)\n",
		l.MaxComputeInvocationsPerWorkgroup, l.MaxComputeWorkgroupStorageSize/1024, l.SubgroupSize, l.MinSubgroupSize, l.MaxSubgroupSize)
	fmt.Fprintf(w, "    features    %s\n", strings.Join(feats, " "))
	if len(f.SubgroupOperations) > 0 {
		fmt.Fprintf(w, "    subgroup ops %s\n", strings.Join(f.SubgroupOperations, " "))
	}
}

// gib formats a byte count in GiB (or MiB below 1 GiB).
func gib(n uint64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// checkPrecision parses --precision and refuses bf16 where it cannot run,
// before any weights are read: on a GPU device, and on a CPU without
// AVX512_BF16 (unless WGPU_EVAL_CPU_KERNELS=generic asks for the portable
// kernels). An unknown device is left to the caller's check.
func checkPrecision(precision, device string) error {
	prec, err := pipeline.ParsePrecision(precision)
	if err != nil {
		return usageError{fmt.Errorf("--%w", err)}
	}
	if prec == pipeline.PrecisionF16 {
		if dev, err := pipeline.ParseDevice(device); err == nil && dev.Kind == "cpu" {
			return usageError{errors.New("--precision f16 is for GPUs (f16 weights on the device): the cpu device computes in f32 " +
				"(F16 checkpoints stay 16-bit in its memory anyway) or, with --precision bf16, in bf16")}
		}
	}
	if prec != pipeline.PrecisionBF16 {
		return nil
	}
	if dev, err := pipeline.ParseDevice(device); err == nil && (dev.Kind == "gpu" || dev.Kind == "all") {
		return usageError{fmt.Errorf("--precision bf16 runs on the cpu device only (--device %s): GPUs compute in f16 or f32", dev)}
	}
	if err := model.CheckBF16(); err != nil {
		return fmt.Errorf("--precision %w", err)
	}
	return nil
}

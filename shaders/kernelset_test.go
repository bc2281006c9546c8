package shaders

import (
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestKernelSetParse: auto (or empty), software and hardware parse; any other
// value, in any spelling, is an error naming the choices, and from
// $WGPU_EVAL_GPU_KERNELS one naming the variable too.
func TestKernelSetParse(t *testing.T) {
	for in, want := range map[string]KernelSet{"": KernelsAuto, "auto": KernelsAuto, "software": KernelsSoftware, "hardware": KernelsHardware} {
		if got, err := ParseKernelSet(in); err != nil || got != want {
			t.Errorf("ParseKernelSet(%q) = %q, %v; want %q", in, got, err, want)
		}
		t.Setenv(KernelsEnv, in)
		if got, err := KernelSetFromEnv(); err != nil || got != want {
			t.Errorf("$%s=%q: %q, %v; want %q", KernelsEnv, in, got, err, want)
		}
	}
	for _, in := range []string{"Hardware", "hw", "soft", " auto", "gpu"} {
		if got, err := ParseKernelSet(in); err == nil || !strings.Contains(err.Error(), "auto, software or hardware") {
			t.Errorf("ParseKernelSet(%q) = %q, %v; want an error", in, got, err)
		}
		t.Setenv(KernelsEnv, in)
		if got, err := KernelSetFromEnv(); err == nil || !strings.Contains(err.Error(), KernelsEnv) {
			t.Errorf("$%s=%q: %q, %v; want an error naming the variable", KernelsEnv, in, got, err)
		}
	}
}

// TestKernelSetPerAdapter: auto gives CPU implementations the software
// kernels and GPUs the hardware ones; a forced set holds on either.
func TestKernelSetPerAdapter(t *testing.T) {
	cpu, gpu := wgpu.AdapterInfo{DeviceType: "cpu"}, wgpu.AdapterInfo{DeviceType: "discrete-gpu"}
	for _, c := range []struct {
		set      KernelSet
		info     wgpu.AdapterInfo
		hardware bool
	}{
		{KernelsAuto, cpu, false}, {KernelsAuto, gpu, true},
		{KernelsSoftware, cpu, false}, {KernelsSoftware, gpu, false},
		{KernelsHardware, cpu, true}, {KernelsHardware, gpu, true},
	} {
		if got := c.set.hardware(c.info); got != c.hardware {
			t.Errorf("%s on a %s device: hardware %v, want %v", c.set, c.info.DeviceType, got, c.hardware)
		}
	}
}

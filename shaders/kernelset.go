package shaders

import (
	"fmt"
	"os"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// KernelSet names the set of kernels a GPT2 runs (see the package doc,
// "Variants per adapter").
type KernelSet string

const (
	// KernelsAuto picks per adapter: KernelsSoftware on CPU implementations of
	// Vulkan (lavapipe, SwiftShader), KernelsHardware on GPUs.
	KernelsAuto KernelSet = "auto"
	// KernelsSoftware are the kernels without workgroup memory or barriers
	// (matmul.wgsl, lmhead_loss.wgsl, attention.wgsl, topk_logits.wgsl).
	KernelsSoftware KernelSet = "software"
	// KernelsHardware are the kernels GPUs get (matmul_shared.wgsl,
	// lmhead_loss_shared.wgsl, attention_shared.wgsl,
	// topk_logits_shared.wgsl): tiles in workgroup memory. Forcing them on a
	// CPU implementation runs there what real GPUs run (tests, CI).
	KernelsHardware KernelSet = "hardware"
)

// KernelsEnv is the environment variable that overrides the per-adapter
// choice: auto, software or hardware.
const KernelsEnv = "WGPU_EVAL_GPU_KERNELS"

// ParseKernelSet parses "auto" (or ""), "software" or "hardware".
func ParseKernelSet(s string) (KernelSet, error) {
	switch KernelSet(s) {
	case "", KernelsAuto:
		return KernelsAuto, nil
	case KernelsSoftware, KernelsHardware:
		return KernelSet(s), nil
	}
	return "", fmt.Errorf("GPU kernel set %q: want auto, software or hardware", s)
}

// KernelSetFromEnv is the kernel set $WGPU_EVAL_GPU_KERNELS asks for
// (KernelsAuto when unset); any other value is an error, never ignored.
func KernelSetFromEnv() (KernelSet, error) {
	k, err := ParseKernelSet(os.Getenv(KernelsEnv))
	if err != nil {
		return "", fmt.Errorf("$%s: %w", KernelsEnv, err)
	}
	return k, nil
}

// hardware reports whether the set means the hardware kernels on an adapter.
func (k KernelSet) hardware(info wgpu.AdapterInfo) bool {
	switch k {
	case KernelsSoftware:
		return false
	case KernelsHardware:
		return true
	}
	return !Software(info)
}

// Kernels is the kernel set the model runs: KernelsSoftware or KernelsHardware.
func (g *GPT2) Kernels() KernelSet {
	if g.sharedMatmul {
		return KernelsHardware
	}
	return KernelsSoftware
}

package shaders

import (
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// epilogue is what a matmul kernel (matmul.wgsl, matmul_shared.wgsl) does
// with y = x·w + bias: its override EPI. The WGSL names each value
// EPI_<name> in include/matmul_epilogue.wgsl, with the name String gives;
// TestEpiloguesMatchWGSL checks that both sides agree.
type epilogue uint32

// The epilogues.
const (
	epiStore epilogue = 0 // STORE: out = y
	epiGELU  epilogue = 1 // GELU: out = gelu_new(y)
	epiAdd   epilogue = 2 // ADD: out += y (the residual stream)
	epiQKV   epilogue = 3 // QKV: c_attn: q to out, k and v into the KV cache (matmul_shared.wgsl only)
	// epiSwiGLU (SWIGLU): out (M, N/2) = silu(gate) * up, w's columns gate
	// and up interleaved (the Llama family's gate_proj and up_proj in one
	// matmul).
	epiSwiGLU epilogue = 4
	// epiGELUErf (GELU_ERF): out = y·Φ(y), the exact GELU (GPT-2 configs
	// with activation_function "gelu": model.Config.ExactGELU).
	epiGELUErf epilogue = 5
)

// epilogueNames are the epilogues' WGSL names, without EPI_.
var epilogueNames = map[epilogue]string{epiStore: "STORE", epiGELU: "GELU", epiAdd: "ADD", epiQKV: "QKV", epiSwiGLU: "SWIGLU",
	epiGELUErf: "GELU_ERF"}

// String is the epilogue's WGSL name, without EPI_.
func (e epilogue) String() string {
	if n, ok := epilogueNames[e]; ok {
		return n
	}
	return fmt.Sprintf("epilogue(%d)", uint32(e))
}

// matmulTiles is a tile configuration of matmul_shared.wgsl: BM x BN outputs
// per workgroup, BK along K per step, TM x TN outputs per invocation.
type matmulTiles struct{ BM, BN, BK, TM, TN int }

// defaultMatmulTiles suit GPUs: 128 x 128 outputs, 8 x 8 per invocation (256
// invocations), the shape of the best SIMT GEMMs (llama.cpp's Vulkan mul_mm
// among them). BK 8 rather than 16: the tiles are f32 (activations stay f32,
// so every configuration gives the same bits), and two steps of 128 x 8 f32
// tiles take 16.25 KiB, as llama.cpp's BK 16 f16 tiles do; at BK 16 they would
// take 32.5 KiB, more than lavapipe's and SwiftShader's 32 KiB, and on GPUs
// half as many workgroups would fit a multiprocessor's shared memory. Each
// step is still 512 multiply-adds per invocation per barrier, and one vec4 of
// each tile to load. The autotuner may pick BK 16 where it is faster.
var defaultMatmulTiles = matmulTiles{BM: 128, BN: 128, BK: 8, TM: 8, TN: 8}

// matmulCandidates are the configurations the autotuner times, the default first.
var matmulCandidates = []matmulTiles{
	defaultMatmulTiles,
	{BM: 128, BN: 128, BK: 16, TM: 8, TN: 8},
	{BM: 128, BN: 64, BK: 8, TM: 8, TN: 4},
	{BM: 64, BN: 128, BK: 8, TM: 4, TN: 8},
	{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4},
	{BM: 64, BN: 64, BK: 8, TM: 8, TN: 8},
	{BM: 32, BN: 64, BK: 8, TM: 4, TN: 4},
}

// tileKeys are the override names of matmulTiles.
var tileKeys = []string{"BM", "BN", "BK", "TM", "TN"}

// constants are the tiles as the kernel's override constants.
func (t matmulTiles) constants() map[string]float64 {
	return map[string]float64{"BM": float64(t.BM), "BN": float64(t.BN), "BK": float64(t.BK), "TM": float64(t.TM), "TN": float64(t.TN)}
}

// constSet is constants as the forward pass gives them.
func (t matmulTiles) constSet() constSet {
	return consts("BM", float64(t.BM)).with("BN", float64(t.BN)).with("BK", float64(t.BK)).with("TM", float64(t.TM)).with("TN", float64(t.TN))
}

// tilesOf reads tiles back from override constants (a tuning file's).
func tilesOf(c map[string]float64) matmulTiles {
	return matmulTiles{BM: int(c["BM"]), BN: int(c["BN"]), BK: int(c["BK"]), TM: int(c["TM"]), TN: int(c["TN"])}
}

// String is the configuration as bench prints it.
func (t matmulTiles) String() string {
	return fmt.Sprintf("%dx%dx%d/%dx%d", t.BM, t.BN, t.BK, t.TM, t.TN)
}

// invocations is the workgroup size.
func (t matmulTiles) invocations() int { return (t.BM / t.TM) * (t.BN / t.TN) }

// sharedBytes is the workgroup memory: two steps of both tiles, vec4s; x's
// rows of BM/4 vec4s padded to an odd count (the kernel's XS), w's as they are.
func (t matmulTiles) sharedBytes() int {
	xs := t.BM/4 + 1 - (t.BM/4)%2
	return 2 * t.BK * (xs + t.BN/4) * 16
}

// loads is the vec4 loads of x's and of w's tile per invocation and step
// (the kernel's XL, WL).
func (t matmulTiles) loads() (xl, wl int) {
	wg := t.invocations()
	return ceilDiv(t.BM*t.BK/4, wg), ceilDiv(t.BK*t.BN/4, wg)
}

// groups is the workgroups for an (M, N) output.
func (t matmulTiles) groups(M, N int) int { return ceilDiv(M, t.BM) * ceilDiv(N, t.BN) }

// valid checks the kernel's constraints (its header comment).
func (t matmulTiles) valid() error {
	switch {
	case t.TM < 4 || t.TM > 16 || t.TM%4 != 0 || t.TN < 4 || t.TN > 16 || t.TN%4 != 0:
		return fmt.Errorf("matmul tiles %v: TM and TN must be 4, 8, 12 or 16", t)
	case t.BK < 4 || t.BK%4 != 0:
		return fmt.Errorf("matmul tiles %v: BK must be a positive multiple of 4", t)
	case t.BM < t.TM || t.BM%t.TM != 0 || t.BN < t.TN || t.BN%t.TN != 0:
		return fmt.Errorf("matmul tiles %v: BM and BN must be multiples of TM and TN", t)
	}
	if xl, wl := t.loads(); xl > 8 || wl > 8 {
		return fmt.Errorf("matmul tiles %v: %d and %d vec4 loads of the tiles per invocation, at most 8 each", t, xl, wl)
	}
	return nil
}

// fits checks the configuration against the kernel's constraints and the
// device's limits.
func (t matmulTiles) fits(dev *wgpu.Device) error {
	if err := t.valid(); err != nil {
		return err
	}
	l := dev.Limits()
	if n := t.invocations(); n > int(l.MaxComputeInvocationsPerWorkgroup) {
		return fmt.Errorf("matmul tiles %v: %d invocations, the device allows %d", t, n, l.MaxComputeInvocationsPerWorkgroup)
	}
	if b := t.sharedBytes(); b > int(l.MaxComputeWorkgroupStorageSize) {
		return fmt.Errorf("matmul tiles %v: %d bytes of workgroup memory, the device allows %d", t, b, l.MaxComputeWorkgroupStorageSize)
	}
	return nil
}

// matmulTilesFor is the first candidate that fits the device.
func matmulTilesFor(dev *wgpu.Device) (matmulTiles, error) {
	for _, t := range matmulCandidates {
		if t.fits(dev) == nil {
			return t, nil
		}
	}
	return matmulTiles{}, fmt.Errorf("no matmul tile configuration fits %s", dev.AdapterInfo().Name)
}

package main

import (
	"slices"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// devicePeak is what a GPU can do at most by its vendor's datasheet: the f32
// rate of its plain FMA units, the f16 rate of its matrix units (tensor
// cores: f16 operands, f32 accumulation, dense; where the datasheet gives
// it, 0 elsewhere) and its memory bandwidth. bench sets achieved rates
// against it, the matrix-unit kernels' (matmul_coop, lmhead_loss_coop,
// attention_coop) against the matrix rate; a datasheet figure is a lead
// (boost clocks, not what a busy card holds), so a kernel at 70% of it is
// doing well.
type devicePeak struct {
	Name         string  `json:"name"`                        // the part the figures are for
	TFlops       float64 `json:"f32_fma_tflops"`              // f32 FMA rate, multiply-add = 2
	TensorTFlops float64 `json:"f16_tensor_tflops,omitempty"` // f16 x f16 + f32 matrix rate, dense
	GBps         float64 `json:"memory_gb_per_s"`             // memory bandwidth
	Source       string  `json:"source,omitempty"`            // where the figures come from
}

// knownPeaks are datasheet figures of GPUs people run evaluations on, matched by
// the words of the Vulkan adapter's name (peakOf), most specific first.
var knownPeaks = []struct {
	match string
	peak  devicePeak
}{
	// The matrix rates: NVIDIA's datasheets (H100, H200, A100, T4: their sparse
	// figures halved, f32 accumulation at full rate there) and GeForce
	// whitepapers ("FP16 Tensor TFLOPS with FP32 Accumulate": half the f16
	// accumulation rate there); AMD's MI300X datasheet.
	{"h200", devicePeak{Name: "NVIDIA H200 SXM", TFlops: 67, TensorTFlops: 989.5, GBps: 4800}},
	{"h100 pcie", devicePeak{Name: "NVIDIA H100 PCIe", TFlops: 51, TensorTFlops: 756, GBps: 2000}},
	{"h100", devicePeak{Name: "NVIDIA H100 SXM", TFlops: 67, TensorTFlops: 989.5, GBps: 3350}},
	{"a100", devicePeak{Name: "NVIDIA A100 80GB SXM", TFlops: 19.5, TensorTFlops: 312, GBps: 2039}},
	{"l40s", devicePeak{Name: "NVIDIA L40S", TFlops: 91.6, GBps: 864}},
	{"l4", devicePeak{Name: "NVIDIA L4", TFlops: 30.3, GBps: 300}},
	{"a10", devicePeak{Name: "NVIDIA A10", TFlops: 31.2, GBps: 600}},
	{"tesla t4", devicePeak{Name: "NVIDIA T4", TFlops: 8.1, TensorTFlops: 65, GBps: 320}},
	{"rtx 4090", devicePeak{Name: "NVIDIA GeForce RTX 4090", TFlops: 82.6, TensorTFlops: 165.2, GBps: 1008}},
	{"rtx 3090", devicePeak{Name: "NVIDIA GeForce RTX 3090", TFlops: 35.6, TensorTFlops: 71, GBps: 936}},
	{"rtx 2080 ti", devicePeak{Name: "NVIDIA GeForce RTX 2080 Ti", TFlops: 13.4, TensorTFlops: 53.8, GBps: 616}},
	{"7900 xtx", devicePeak{Name: "AMD Radeon RX 7900 XTX", TFlops: 61.4, GBps: 960}},
	{"mi300x", devicePeak{Name: "AMD Instinct MI300X", TFlops: 163.4, TensorTFlops: 1307.4, GBps: 5300}},
}

// variantWords mark a part that shares its name with a listed one but not
// its figures (a laptop chip, a Ti, SUPER or China's D, NVIDIA's NVL
// boards, A100's 40 GB with 1,555 GB/s, a PCIe board's lower power): a
// name with one the entry does not spell has no known peak, since a wrong
// peak is worse than none.
var variantWords = []string{"laptop", "mobile", "max-q", "ti", "super", "d", "nvl", "40gb", "pcie"}

// peakOf is the datasheet peak of the adapter, when it is a known GPU: an
// entry whose words all appear in the adapter's name as words (so that
// "l4" is not the L40 nor "a100" the RTX A1000), and no variant word the
// entry lacks ("NVIDIA H200 NVL", "RTX 4090 Laptop GPU": unknown).
func peakOf(info *wgpu.AdapterInfo) (devicePeak, bool) {
	if info == nil || info.DeviceType == "cpu" {
		return devicePeak{}, false
	}
	words := nameWords(info.Name)
	for _, k := range knownPeaks {
		match := strings.Fields(k.match)
		if !containsAll(words, match) || variant(words, match) {
			continue
		}
		p := k.peak
		p.Source = "vendor datasheet (boost clock)"
		return p, true
	}
	return devicePeak{}, false
}

// nameWords is name in lower case, split at every character but letters,
// digits and '-' ("NVIDIA A100-SXM4-80GB" gives nvidia, a100, sxm4, 80gb
// after the split at '-' too, and max-q stays one word).
func nameWords(name string) []string {
	fields := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
	})
	var words []string
	for _, f := range fields {
		words = append(words, f)
		if parts := strings.Split(f, "-"); len(parts) > 1 && f != "max-q" {
			words = append(words, parts...)
		}
	}
	return words
}

func containsAll(words, want []string) bool {
	for _, w := range want {
		if !slices.Contains(words, w) {
			return false
		}
	}
	return true
}

// variant reports a variant word in words that match does not spell.
func variant(words, match []string) bool {
	for _, v := range variantWords {
		if slices.Contains(words, v) && !slices.Contains(match, v) {
			return true
		}
	}
	return false
}

// onMatrixUnits reports whether a profile's kernel row is one of the
// matrix-unit kernels, whose rate is set against the matrix peak.
func onMatrixUnits(kernel string) bool { return strings.Contains(kernel, "_coop") }

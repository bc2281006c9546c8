package main

import (
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// devicePeak is what a GPU can do at most by its vendor's datasheet: the f32
// rate of its plain FMA units (no tensor cores: our kernels use none yet) and
// its memory bandwidth. bench sets achieved rates against it; a datasheet
// figure is a lead (boost clocks, not what a busy card holds), so a kernel at
// 70% of it is doing well.
type devicePeak struct {
	Name   string  `json:"name"`             // the part the figures are for
	TFlops float64 `json:"f32_fma_tflops"`   // f32 FMA rate, multiply-add = 2
	GBps   float64 `json:"memory_gb_per_s"`  // memory bandwidth
	Source string  `json:"source,omitempty"` // where the figures come from
}

// knownPeaks are datasheet figures of GPUs people run evaluations on, matched by
// a part of the Vulkan adapter's name (case-insensitive), most specific first.
var knownPeaks = []struct {
	match string
	peak  devicePeak
}{
	{"h200", devicePeak{Name: "NVIDIA H200 SXM", TFlops: 67, GBps: 4800}},
	{"h100 pcie", devicePeak{Name: "NVIDIA H100 PCIe", TFlops: 51, GBps: 2000}},
	{"h100", devicePeak{Name: "NVIDIA H100 SXM", TFlops: 67, GBps: 3350}},
	{"a100", devicePeak{Name: "NVIDIA A100 80GB SXM", TFlops: 19.5, GBps: 2039}},
	{"l40s", devicePeak{Name: "NVIDIA L40S", TFlops: 91.6, GBps: 864}},
	{"l4", devicePeak{Name: "NVIDIA L4", TFlops: 30.3, GBps: 300}},
	{"a10", devicePeak{Name: "NVIDIA A10", TFlops: 31.2, GBps: 600}},
	{"tesla t4", devicePeak{Name: "NVIDIA T4", TFlops: 8.1, GBps: 320}},
	{"rtx 4090", devicePeak{Name: "NVIDIA GeForce RTX 4090", TFlops: 82.6, GBps: 1008}},
	{"rtx 3090", devicePeak{Name: "NVIDIA GeForce RTX 3090", TFlops: 35.6, GBps: 936}},
	{"rtx 2080 ti", devicePeak{Name: "NVIDIA GeForce RTX 2080 Ti", TFlops: 13.4, GBps: 616}},
	{"7900 xtx", devicePeak{Name: "AMD Radeon RX 7900 XTX", TFlops: 61.4, GBps: 960}},
	{"mi300x", devicePeak{Name: "AMD Instinct MI300X", TFlops: 163.4, GBps: 5300}},
}

// peakOf is the datasheet peak of the adapter, when it is a known GPU.
func peakOf(info *wgpu.AdapterInfo) (devicePeak, bool) {
	if info == nil || info.DeviceType == "cpu" {
		return devicePeak{}, false
	}
	name := strings.ToLower(info.Name)
	for _, k := range knownPeaks {
		if strings.Contains(name, k.match) {
			p := k.peak
			p.Source = "vendor datasheet (boost clock)"
			return p, true
		}
	}
	return devicePeak{}, false
}

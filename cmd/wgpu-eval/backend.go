package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/shaders"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// deviceSpec is a parsed --device: kind "auto", "cpu" or "gpu"; index is the
// adapter's position in `wgpu-eval devices` order for gpu:N, else -1.
type deviceSpec struct {
	kind  string
	index int
}

// parseDevice parses --device (case-insensitive): auto, cpu, gpu or gpu:N.
func parseDevice(s string) (deviceSpec, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "auto", "cpu", "gpu":
		return deviceSpec{v, -1}, nil
	case "all":
		return deviceSpec{}, fmt.Errorf("--device all (every GPU at once) is not supported yet; use gpu:N per GPU")
	}
	if rest, ok := strings.CutPrefix(v, "gpu:"); ok {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 0 {
			return deviceSpec{"gpu", n}, nil
		}
	}
	return deviceSpec{}, fmt.Errorf("--device %q: want auto, cpu, gpu or gpu:N (N as listed by `wgpu-eval devices`)", s)
}

// parsePrecision parses --precision: "" (auto), f16 or f32.
func parsePrecision(s string) (string, error) {
	v := strings.ToLower(s)
	switch v {
	case "", "auto", "f16", "f32":
		if v == "auto" {
			v = ""
		}
		return v, nil
	}
	return "", fmt.Errorf("--precision %q: want f16 or f32", s)
}

// openBackend makes the backend spec names for m. auto takes the best hardware
// GPU (discrete before integrated) and never a software driver such as
// lavapipe, on which the CPU path is faster; without one it is the CPU. gpu
// and gpu:N take the adapter asked for, software ones included. precision ""
// means f16 weights where the device has shader-f16, else f32. The returned
// function releases the device.
func openBackend(spec deviceSpec, precision string, m *model.Model, threads int) (pipeline.Backend, func(), error) {
	cpu := func() (pipeline.Backend, func(), error) {
		return model.NewCPU(m, threads), func() {}, nil
	}
	if spec.kind == "cpu" {
		return cpu()
	}
	inst, err := wgpu.CreateInstance(nil)
	if err != nil {
		if spec.kind == "auto" && wgpu.Unavailable(err) {
			return cpu()
		}
		return nil, nil, fmt.Errorf("--device %s: %w (install the GPU's Vulkan driver, or use --device cpu)", spec.kind, err)
	}
	adapters, err := inst.EnumerateAdapters()
	if err != nil && !(spec.kind == "auto" && wgpu.Unavailable(err)) {
		inst.Close()
		return nil, nil, fmt.Errorf("--device %s: %w", spec.kind, err)
	}
	var ad *wgpu.Adapter
	switch {
	case spec.kind == "auto":
		for _, a := range adapters { // best first
			if a.Info().DeviceType != "cpu" {
				ad = a
				break
			}
		}
		if ad == nil {
			inst.Close()
			return cpu()
		}
	case spec.index >= 0:
		if spec.index >= len(adapters) {
			inst.Close()
			return nil, nil, fmt.Errorf("--device gpu:%d: there are %d Vulkan adapters (see `wgpu-eval devices`)", spec.index, len(adapters))
		}
		ad = adapters[spec.index]
	default:
		if len(adapters) == 0 {
			inst.Close()
			return nil, nil, errors.New("--device gpu: no Vulkan adapter")
		}
		ad = adapters[0]
	}
	f16 := ad.HasFeature(wgpu.FeatureShaderF16)
	switch {
	case precision == "f32":
		f16 = false
	case precision == "f16" && !f16:
		inst.Close()
		return nil, nil, fmt.Errorf("--precision f16: %s lacks shader-f16; use --precision f32", ad.Info().Name)
	}
	var feats []wgpu.FeatureName
	if f16 {
		feats = append(feats, wgpu.FeatureShaderF16)
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{Label: "wgpu-eval", RequiredFeatures: feats})
	if err != nil {
		inst.Close()
		return nil, nil, fmt.Errorf("open %s: %w", ad.Info().Name, err)
	}
	g, err := shaders.NewGPT2(dev, m, f16)
	if err != nil {
		dev.Close()
		inst.Close()
		return nil, nil, fmt.Errorf("%s: %w", ad.Info().Name, err)
	}
	return g, func() { dev.Close(); inst.Close() }, nil
}

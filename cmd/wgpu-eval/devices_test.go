package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// withAdapters makes the devices command see adapters (or err) for one test.
func withAdapters(t *testing.T, adapters []wgpu.AdapterInfo, err error) {
	t.Helper()
	old := enumerateAdapters
	enumerateAdapters = func() ([]wgpu.AdapterInfo, error) { return adapters, err }
	t.Cleanup(func() { enumerateAdapters = old })
}

func TestDevicesListsAdapters(t *testing.T) {
	h200 := wgpu.AdapterInfo{
		Name: "NVIDIA H200", Vendor: "NVIDIA", VendorID: 0x10de, DeviceID: 0x2335, DeviceType: "discrete-gpu", DriverName: "NVIDIA",
		DriverVersion: "565.57.1", DriverInfo: "565.57.01", APIVersion: "1.3.289", DeviceUUID: "00112233-4455-6677-8899-aabbccddeeff",
		MemoryHeaps: []wgpu.MemoryHeap{{Size: 140 << 30, DeviceLocal: true}, {Size: 64 << 30}},
		Limits:      wgpu.Limits{MaxStorageBufferBindingSize: 1<<32 - 1, SubgroupSize: 32, MaxComputeWorkgroupStorageSize: 48 << 10, TimestampPeriod: 1},
		Features:    wgpu.Features{ShaderF16: true, Subgroups: true, TimestampQuery: true},
	}
	lvp := wgpu.AdapterInfo{Name: "llvmpipe", Vendor: "Mesa", DeviceType: "cpu", DriverName: "swiftshader", DriverVersion: "5.0.0",
		Limits: wgpu.Limits{SubgroupSize: 8}}
	withAdapters(t, []wgpu.AdapterInfo{h200, lvp}, nil)

	out, _, err := cli(t, "", "devices")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[0] NVIDIA H200 (NVIDIA, discrete-gpu)", "140.0 GiB device-local", "f16 subgroups timestamps",
		"subgroup 32", "48 KiB shared", "[1] llvmpipe (Mesa, cpu)", "driver      NVIDIA 565.57.1 (565.57.01), Vulkan",
		"(vendor 0x10de, device 0x2335)", "timestamps  1 ns a tick", "driver      swiftshader 5.0.0, Vulkan"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "ns a tick") != 1 || strings.Contains(out, "()") {
		t.Errorf("a timestamp period without timestamps, or an empty driver info:\n%s", out)
	}

	out, _, err = cli(t, "", "devices", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []wgpu.AdapterInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(got) != 2 || got[0].DeviceUUID != h200.DeviceUUID || got[0].Limits.SubgroupSize != 32 || got[1].Name != "llvmpipe" {
		t.Errorf("--json round trip: %+v", got)
	}
}

func TestDevicesWithoutVulkan(t *testing.T) {
	withAdapters(t, nil, fmt.Errorf("open loader: %w", wgpu.ErrNoLoader))
	_, _, err := cli(t, "", "devices")
	if err == nil || !strings.Contains(err.Error(), "no Vulkan device") || !strings.Contains(err.Error(), "--device cpu") ||
		!strings.Contains(err.Error(), "libvulkan1") {
		t.Errorf("error = %v", err)
	}
	if exitCode(err) != 1 {
		t.Errorf("exit code %d", exitCode(err))
	}
}

// TestDevicesOnThisMachine lists the real adapters (lavapipe in CI, required
// there) and checks them against what is known of Mesa's lavapipe
// independently of our enumeration: a CPU device named llvmpipe by Mesa, with a
// 128 MiB storage binding limit, subgroups of 8 and 32 KiB workgroup memory.
func TestDevicesOnThisMachine(t *testing.T) {
	out, _, err := cli(t, "", "devices", "--json")
	if err != nil {
		if wgpu.Unavailable(err) {
			prereq.Missing(t, "vulkan", err)
		}
		t.Fatal(err)
	}
	var got []wgpu.AdapterInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		prereq.Missing(t, "vulkan", "no adapters")
	}
	for _, a := range got {
		if !strings.HasPrefix(a.Name, "llvmpipe") {
			continue
		}
		l := a.Limits
		if a.DeviceType != "cpu" || !strings.Contains(a.DriverName, "llvmpipe") && !strings.Contains(a.DriverInfo, "Mesa") ||
			l.MaxStorageBufferBindingSize != 128<<20 || l.SubgroupSize != 8 || l.MaxComputeWorkgroupStorageSize != 32<<10 {
			t.Errorf("lavapipe as listed: %+v", a)
		}
		return
	}
	if prereq.Required("vulkan") {
		t.Errorf("no lavapipe (llvmpipe) among %d adapters; CI installs mesa-vulkan-drivers", len(got))
	}
}

// TestDevicesJSONSnakeCase: devices --json names its fields as eval's JSON
// does (snake_case), at every depth.
func TestDevicesJSONSnakeCase(t *testing.T) {
	withAdapters(t, []wgpu.AdapterInfo{{Name: "x", MemoryHeaps: []wgpu.MemoryHeap{{Size: 1}},
		Features: wgpu.Features{CooperativeMatrixConfigs: []wgpu.CooperativeMatrixConfig{{M: 16, Scope: wgpu.ScopeSubgroup}}}}}, nil)
	out, _, err := cli(t, "", "devices", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if !snake.MatchString(k) {
					t.Errorf("%s.%s is not snake_case", path, k)
				}
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", v)
}

// TestDevicesListsCooperativeMatrixConfigs: an adapter with matrix units lists each configuration on its own line,
// marking those WGSL subgroup matrices cannot use, and --json carries them under features; an adapter without them
// prints no such line.
func TestDevicesListsCooperativeMatrixConfigs(t *testing.T) {
	f16 := wgpu.CooperativeMatrixConfig{M: 16, N: 16, K: 16, AType: wgpu.ComponentF16, BType: wgpu.ComponentF16,
		CType: wgpu.ComponentF32, ResultType: wgpu.ComponentF32, Scope: wgpu.ScopeSubgroup, SubgroupMatrix: true}
	wg := f16
	wg.M, wg.N, wg.Scope, wg.SubgroupMatrix = 64, 64, wgpu.ScopeWorkgroup, false
	gpu := wgpu.AdapterInfo{Name: "NVIDIA RTX 4090", Vendor: "NVIDIA", DeviceType: "discrete-gpu",
		Features: wgpu.Features{CooperativeMatrix: true, CooperativeMatrixConfigs: []wgpu.CooperativeMatrixConfig{f16, wg}}}
	lvp := wgpu.AdapterInfo{Name: "llvmpipe", Vendor: "Mesa", DeviceType: "cpu", Features: wgpu.Features{CooperativeMatrixConfigs: []wgpu.CooperativeMatrixConfig{}}}
	withAdapters(t, []wgpu.AdapterInfo{gpu, lvp}, nil)

	out, _, err := cli(t, "", "devices")
	if err != nil {
		t.Fatal(err)
	}
	gpuPart, lvpPart, _ := strings.Cut(out, "[1] llvmpipe")
	for _, want := range []string{"cooperative-matrix", "    matrix units 16x16x16 f16*f16+f32->f32 subgroup\n",
		"                 64x64x16 f16*f16+f32->f32 workgroup (not for WGSL)\n"} {
		if !strings.Contains(gpuPart, want) {
			t.Errorf("GPU listing lacks %q:\n%s", want, gpuPart)
		}
	}
	if strings.Contains(lvpPart, "matrix units") || strings.Contains(lvpPart, "cooperative-matrix") {
		t.Errorf("llvmpipe listed with matrix units:\n%s", lvpPart)
	}

	out, _, err = cli(t, "", "devices", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	features := got[0]["features"].(map[string]any)
	configs, _ := features["cooperative_matrix_configs"].([]any)
	if features["cooperative_matrix"] != true || len(configs) != 2 {
		t.Fatalf("--json features %v", features)
	}
	first := configs[0].(map[string]any)
	if first["m"] != 16.0 || first["a_type"] != "f16" || first["result_type"] != "f32" || first["scope"] != "subgroup" || first["subgroup_matrix"] != true {
		t.Errorf("--json config %v", first)
	}
	if lf := got[1]["features"].(map[string]any); lf["cooperative_matrix"] != false || fmt.Sprint(lf["cooperative_matrix_configs"]) != "[]" {
		t.Errorf("llvmpipe --json features %v", lf)
	}
}

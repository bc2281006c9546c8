package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
		Name: "NVIDIA H200", Vendor: "NVIDIA", DeviceType: "discrete-gpu", DriverName: "NVIDIA",
		DriverVersion: "565.57.1", APIVersion: "1.3.289", DeviceUUID: "00112233-4455-6677-8899-aabbccddeeff",
		MemoryHeaps: []wgpu.MemoryHeap{{Size: 140 << 30, DeviceLocal: true}, {Size: 64 << 30}},
		Limits:      wgpu.Limits{MaxStorageBufferBindingSize: 1<<32 - 1, SubgroupSize: 32, MaxComputeWorkgroupStorageSize: 48 << 10},
		Features:    wgpu.Features{ShaderF16: true, Subgroups: true, TimestampQuery: true},
	}
	lvp := wgpu.AdapterInfo{Name: "llvmpipe", Vendor: "Mesa", DeviceType: "cpu", Limits: wgpu.Limits{SubgroupSize: 8}}
	withAdapters(t, []wgpu.AdapterInfo{h200, lvp}, nil)

	out, _, err := cli(t, "", "devices")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[0] NVIDIA H200 (NVIDIA, discrete-gpu)", "140.0 GiB device-local", "f16 subgroups timestamps",
		"subgroup 32", "48 KiB shared", "[1] llvmpipe (Mesa, cpu)"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
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
	if err == nil || !strings.Contains(err.Error(), "no Vulkan device") || !strings.Contains(err.Error(), "--device cpu") {
		t.Errorf("error = %v", err)
	}
	if exitCode(err) != 1 {
		t.Errorf("exit code %d", exitCode(err))
	}
}

// TestDevicesOnThisMachine lists the real adapters when Vulkan exists (lavapipe
// in CI) and checks the JSON agrees with the library's own enumeration.
func TestDevicesOnThisMachine(t *testing.T) {
	want, err := wgpu.EnumerateAdapters()
	if wgpu.Unavailable(err) {
		t.Skipf("no Vulkan here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := cli(t, "", "devices", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []wgpu.AdapterInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("got %d adapters, library sees %d", len(got), len(want))
	}
	for i := range got {
		if got[i].DeviceUUID != want[i].DeviceUUID || got[i].Name != want[i].Name {
			t.Errorf("adapter %d: %s %s, want %s %s", i, got[i].Name, got[i].DeviceUUID, want[i].Name, want[i].DeviceUUID)
		}
	}
}

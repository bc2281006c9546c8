package wgpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// An f16 override constant is encoded as the nearest half, ties to even.
func TestSpecializationF16(t *testing.T) {
	m := &ShaderModule{label: "m", specs: map[string]specConst{"H": {7, 'f', 16}}}
	for _, c := range []struct {
		in   float64
		want uint16
	}{{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {1e6, 0x7c00}, {math.Inf(-1), 0xfc00},
		{5.960464477539063e-08, 0x0001}, {6.103515625e-05, 0x0400}, {1.00048828125, 0x3c00}, {1.00146484375, 0x3c02}} {
		var ar vk.Arena
		si, err := specialization(&ar, m, map[string]float64{"H": c.in})
		if err != nil {
			t.Fatal(err)
		}
		if si.DataSize != 2 || si.MapEntryCount != 1 || si.PMapEntries.ConstantID != 7 || si.PMapEntries.Size != 2 {
			t.Fatalf("%g: specialization info %+v, want one 2-byte entry for id 7", c.in, si)
		}
		if got := *(*uint16)(si.PData); got != c.want {
			t.Errorf("f16 override %g = %#04x, want %#04x", c.in, got, c.want)
		}
		ar.Release()
	}
}

func TestReflectSPIRV(t *testing.T) {
	specs, entries, err := reflectSPIRV(loadSPIRV(t, "spec"))
	if err != nil {
		t.Fatal(err)
	}
	if !entries["main"] {
		t.Error("entry point main not found")
	}
	want := map[string]specConst{"MUL": {1, 'u', 32}, "ADD": {2, 'f', 32}, "OFF": {3, 'i', 32}, "FLIP": {4, 'b', 32}, "0": {0, 'u', 32}}
	for k, w := range want {
		if specs[k] != w {
			t.Errorf("spec constant %s = %+v, want %+v", k, specs[k], w)
		}
	}
}

func TestVulkanErrorIs(t *testing.T) {
	for _, c := range []struct {
		r    vk.Result
		want error
	}{{vk.ErrorOutOfDeviceMemory, ErrOutOfMemory}, {vk.ErrorOutOfHostMemory, ErrOutOfMemory},
		{vk.ErrorDeviceLost, ErrDeviceLost}, {vk.ErrorFeatureNotPresent, ErrMissingFeature}} {
		err := fmt.Errorf("buffer: %w", check("vkCall", c.r))
		if !errors.Is(err, c.want) || errors.Is(err, ErrBadUsage) {
			t.Errorf("%v: errors.Is(%v) false", err, c.want)
		}
		if !strings.Contains(err.Error(), "vkCall: VK_ERROR_") {
			t.Errorf("message %q", err)
		}
	}
	if check("vkCall", vk.Success) != nil {
		t.Error("VK_SUCCESS is an error")
	}
}

func TestAllocatorSpans(t *testing.T) {
	b := &memBlock{size: 1024, free: []span{{0, 1024}}}
	o1, _ := b.take(100, 64)
	o2, _ := b.take(100, 256)
	o3, _ := b.take(24, 4)
	if o1 != 0 || o2 != 256 || o3 != 100 {
		t.Fatalf("offsets %d %d %d", o1, o2, o3)
	}
	if _, ok := b.take(1024, 1); ok {
		t.Fatal("overcommitted")
	}
	b.give(o2, 100)
	b.give(o1, 100)
	b.give(o3, 24)
	if len(b.free) != 1 || b.free[0] != (span{0, 1024}) || b.used != 0 {
		t.Fatalf("not coalesced: %+v used %d", b.free, b.used)
	}
}

// FuzzReflectSPIRV: arbitrary words never panic the reflection.
func FuzzReflectSPIRV(f *testing.F) {
	for _, name := range []string{"spec", "reduce"} {
		b, err := os.ReadFile("testdata/" + name + ".spv")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w := make([]uint32, len(b)/4)
		for i := range w {
			w[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
		}
		if len(w) > 0 {
			w[0] = 0x07230203
		}
		reflectSPIRV(w)
	})
}

// StateKey is the device UUID where the driver reports one; the all-zero
// UUID names no device, so the key then tells models (ids, name) apart.
func TestStateKey(t *testing.T) {
	real := AdapterInfo{Name: "NVIDIA H200", VendorID: 0x10de, DeviceID: 0x2335,
		DeviceUUID: uuidString([16]uint8{0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})}
	if got := real.StateKey(); got != real.DeviceUUID {
		t.Errorf("StateKey = %q, want the UUID %q", got, real.DeviceUUID)
	}
	zero := uuidString([16]uint8{})
	a := AdapterInfo{Name: "GPU A", VendorID: 0x1002, DeviceID: 0x744c, DeviceUUID: zero}
	keys := map[string]AdapterInfo{}
	for _, info := range []AdapterInfo{a,
		{Name: "GPU B", VendorID: a.VendorID, DeviceID: a.DeviceID, DeviceUUID: zero}, // another name
		{Name: a.Name, VendorID: a.VendorID, DeviceID: 0x73bf, DeviceUUID: zero},      // another device id
		{Name: a.Name, VendorID: 0x8086, DeviceID: a.DeviceID, DeviceUUID: zero},      // another vendor
	} {
		k := info.StateKey()
		if k == zero || strings.Contains(k, "00000000-0000") {
			t.Errorf("%+v: key %q is the zero UUID", info, k)
		}
		if other, ok := keys[k]; ok {
			t.Errorf("%q and %q share the key %q", other.Name, info.Name, k)
		}
		keys[k] = info
	}
	if !strings.HasPrefix(a.StateKey(), "1002-744c-") {
		t.Errorf("key %q", a.StateKey())
	}
}

// LimitsCap lowers each limit it names (an alignment it raises), leaves the
// rest and those it would raise, and refuses what it cannot cap.
func TestCapLimits(t *testing.T) {
	have := Limits{MaxStorageBufferBindingSize: 1 << 30, MaxBufferSize: 1 << 31, MaxComputeWorkgroupStorageSize: 48 << 10,
		MaxComputeInvocationsPerWorkgroup: 1024, MaxStorageBuffersPerShaderStage: 16, MaxPushConstantSize: 256,
		MinStorageBufferOffsetAlignment: 16, MinUniformBufferOffsetAlignment: 64, SubgroupSize: 32, TimestampPeriod: 1}
	got, err := capLimits(have, Limits{MaxComputeWorkgroupStorageSize: 16 << 10, MaxPushConstantSize: 1 << 20,
		MinStorageBufferOffsetAlignment: 256, MinUniformBufferOffsetAlignment: 16, MaxBufferSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	want := have
	want.MaxComputeWorkgroupStorageSize, want.MinStorageBufferOffsetAlignment, want.MaxBufferSize = 16<<10, 256, 1<<20
	if got != want {
		t.Errorf("capped %+v\nwant   %+v", got, want)
	}
	for _, bad := range []Limits{{SubgroupSize: 16}, {MaxSubgroupSize: 16}, {TimestampPeriod: 2}, {MinStorageBufferOffsetAlignment: 96}} {
		if _, err := capLimits(have, bad); !errors.Is(err, ErrLimit) {
			t.Errorf("cap %+v: err = %v, want ErrLimit", bad, err)
		}
	}
}

// TestTimestampPeriod: a driver's timestampPeriod is kept where it is a
// finite positive number of nanoseconds and is 0 (no usable timestamps)
// otherwise, so that AdapterInfo marshals to JSON: RADV on null hardware
// reports +Inf.
func TestTimestampPeriod(t *testing.T) {
	for _, c := range []struct{ in, want float32 }{
		{1, 1}, {0.833, 0.833}, {52.08, 52.08}, {math.SmallestNonzeroFloat32, math.SmallestNonzeroFloat32},
		{0, 0}, {-1, 0}, {float32(math.Inf(1)), 0}, {float32(math.Inf(-1)), 0}, {float32(math.NaN()), 0},
	} {
		if got := timestampPeriod(c.in); got != c.want {
			t.Errorf("timestampPeriod(%v) = %v, want %v", c.in, got, c.want)
		}
		if _, err := json.Marshal(AdapterInfo{Limits: Limits{TimestampPeriod: timestampPeriod(c.in)}}); err != nil {
			t.Errorf("timestampPeriod(%v): %v", c.in, err)
		}
	}
}

package shaders

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// testDev is a device on the first adapter (WGPU_ADAPTER picks another) with
// the validation layer (unless $WGPU_NO_VALIDATION; required under CI,
// prereq.Validation); any message from the layer or driver
// fails the test. Without Vulkan the test skips, unless CI or
// WGPU_REQUIRE_VULKAN is set: then it fails. $WGPU_TEST_RACE_CHECK and
// $WGPU_TEST_STAGED turn on the device's race check and staged transfers.
type testDev struct {
	dev  *wgpu.Device
	info wgpu.AdapterInfo
	f16  bool // shader-f16 enabled
}

func newTestDev(t testing.TB) *testDev {
	t.Helper()
	return newTestDevWith(t)
}

// newTestDevWith is newTestDev with the optional features extra enabled
// where the adapter has them.
func newTestDevWith(t testing.TB, extra ...wgpu.FeatureName) *testDev {
	t.Helper()
	return newTestDevCapped(t, wgpu.Limits{}, extra...)
}

// newTestDevCapped is newTestDevWith on a device whose limits are lowered
// to caps' nonzero fields (wgpu.DeviceDescriptor.LimitsCap).
func newTestDevCapped(t testing.TB, caps wgpu.Limits, extra ...wgpu.FeatureName) *testDev {
	t.Helper()
	var mu sync.Mutex
	var msgs []wgpu.Message
	validation := os.Getenv("WGPU_NO_VALIDATION") == ""
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{Validation: validation, OnMessage: func(m wgpu.Message) {
		mu.Lock()
		msgs = append(msgs, m)
		mu.Unlock()
	}})
	if err == nil {
		var ad *wgpu.Adapter
		if ad, err = inst.RequestAdapter(os.Getenv("WGPU_ADAPTER")); err == nil {
			var feats []wgpu.FeatureName
			if ad.HasFeature(wgpu.FeatureShaderF16) {
				feats = append(feats, wgpu.FeatureShaderF16)
			}
			if ad.HasFeature(wgpu.FeatureTimestampQuery) {
				feats = append(feats, wgpu.FeatureTimestampQuery)
			}
			if ad.HasFeature(wgpu.FeatureSubgroups) {
				feats = append(feats, wgpu.FeatureSubgroups)
			}
			for _, f := range extra {
				if ad.HasFeature(f) {
					feats = append(feats, f)
				}
			}
			race := os.Getenv(raceCheckEnv) != ""
			dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: feats, PipelineCacheDir: "-", LimitsCap: caps, RaceCheck: race,
				StageTransfers: os.Getenv(stagedEnv) != ""})
			if err != nil {
				inst.Close()
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := dev.Close(); err != nil {
					t.Errorf("device close: %v", err)
				}
				inst.Close()
				mu.Lock()
				defer mu.Unlock()
				for _, m := range msgs {
					t.Errorf("Vulkan message: %v", m)
				}
			})
			if race { // before the device closes (cleanups run last first)
				t.Cleanup(func() { checkRaces(t, dev) })
			}
			if validation {
				prereq.Validation(t, inst.ValidationEnabled())
				if inst.ValidationEnabled() {
					prereq.SyncValidation(t, inst.SyncValidationEnabled())
				}
			}
			return &testDev{dev: dev, info: ad.Info(), f16: dev.HasFeature(wgpu.FeatureShaderF16)}
		}
		inst.Close()
	}
	if wgpu.Unavailable(err) {
		prereq.Missing(t, "vulkan", fmt.Errorf("%w (Debian: libvulkan1 mesa-vulkan-drivers)", err))
	}
	t.Fatalf("no Vulkan device: %v", err)
	return nil
}

// buffer makes a storage buffer holding data (at least 16 bytes).
func (d *testDev) buffer(t testing.TB, label string, data []byte) *wgpu.Buffer {
	t.Helper()
	size := max(uint64(len(data)+3)&^3, 16)
	b, err := d.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: label, Size: size,
		Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst})
	if err != nil {
		t.Fatal(err)
	}
	padded := make([]byte, size)
	copy(padded, data)
	if err := d.dev.Queue().WriteBuffer(b, 0, padded); err != nil {
		t.Fatal(err)
	}
	return b
}

// run records one dispatch and submits it.
func (d *testDev) run(t testing.TB, p *Pipeline, bufs map[string]Buf, params Params, groups [3]uint32) {
	t.Helper()
	g, err := p.Bind(bufs)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := p.Push(params)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := d.dev.CreateCommandEncoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	pass := enc.BeginComputePass(nil)
	p.Dispatch(pass, g, pc, groups)
	pass.End()
	cb, err := enc.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.dev.Queue().Submit(cb); err != nil {
		t.Fatal(err)
	}
}

// benchDispatch times one dispatch of p and a wait for it per iteration,
// after one untimed warm-up.
func benchDispatch(b *testing.B, d *testDev, p *Pipeline, bufs map[string]Buf, params Params, groups [3]uint32) {
	b.Helper()
	d.run(b, p, bufs, params, groups)
	if err := d.dev.Queue().WaitIdle(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		d.run(b, p, bufs, params, groups)
		if err := d.dev.Queue().WaitIdle(); err != nil {
			b.Fatal(err)
		}
	}
}

// readF32 reads n float32 values from b.
func (d *testDev) readF32(t testing.TB, b *wgpu.Buffer, n int) []float32 {
	t.Helper()
	raw := make([]byte, (4*n+3)&^3)
	if err := d.dev.Queue().ReadBuffer(b, 0, raw); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// f32Bytes encodes x as little-endian float32.
func f32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// weightBytes encodes x as f16 or f32 weights; for f16, x is rounded in place
// so that references see the stored values.
func weightBytes(x []float32, f16 bool) []byte {
	if !f16 {
		return f32Bytes(x)
	}
	b := make([]byte, 2*len(x))
	for i, v := range x {
		h := float16.Fromfloat32(v)
		x[i] = h.Float32()
		binary.LittleEndian.PutUint16(b[2*i:], h.Bits())
	}
	return b
}

// randF32 is n normal values of the given std, deterministic per seed.
func randF32(seed uint64, n int, mean, std float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(mean + std*r.NormFloat64())
	}
	return x
}

func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// checkClose fails t where got and want differ by more than tol relative to
// max(1, |want|) (a mixed absolute/relative tolerance).
func checkClose(t testing.TB, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			if bad < 5 {
				t.Errorf("%s[%d] = %v, want %v (diff %.3g, tol %.3g)", what, i, got[i], want[i], d, tol)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values out of tolerance", what, bad, len(got))
	}
}

// weightTypes are the weight variants a device can run.
func (d *testDev) weightTypes() []bool {
	if d.f16 {
		return []bool{false, true}
	}
	return []bool{false}
}

// TestAdapter names the adapter the kernel tests run on (and its driver), for
// the logs and for TestKernelsOnVulkanImpls, which checks that each
// implementation it runs is the one the tests saw.
func TestAdapter(t *testing.T) {
	d := newTestDev(t)
	t.Logf("adapter %s, driver %s %s (%s), subgroup %d, %d invocations, %d bytes of workgroup memory", d.info.Name, d.info.DriverName,
		d.info.DriverInfo, d.info.DriverVersion, d.dev.Limits().SubgroupSize, d.dev.Limits().MaxComputeInvocationsPerWorkgroup,
		d.dev.Limits().MaxComputeWorkgroupStorageSize)
}

// TestKernelsOnVulkanImpls runs every kernel test once more on every other
// Vulkan implementation $WGPU_TEST_VULKAN_IMPLS lists (CI: SwiftShader and
// Mesa 25's lavapipe), each in a child process that sees that one only, for
// up to 25 minutes: with a cold shader cache Mesa 25's lavapipe took more
// than 15 here (its LLVM compiles each of TestAttentionShared's pipelines
// in about 10 s).
func TestKernelsOnVulkanImpls(t *testing.T) {
	prereq.RunOnVulkanImpls(t, "^Test", "^TestKernelsOnVulkanImpls$", 25*time.Minute)
}

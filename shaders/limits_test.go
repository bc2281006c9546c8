package shaders

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// smallDevice are the limits of a small GPU, at Vulkan's minimum but for
// the storage buffers a stage (4 there; 8 here, as newer mobile GPUs offer):
// 16 KiB of workgroup memory, 128 invocations, 128 bytes of push constants,
// 256-byte binding offsets, bindings of 128 MiB.
var smallDevice = wgpu.Limits{
	MaxComputeWorkgroupStorageSize: 16 << 10, MaxComputeInvocationsPerWorkgroup: 128,
	MaxComputeWorkgroupSizeX: 128, MaxComputeWorkgroupSizeY: 128, MaxComputeWorkgroupSizeZ: 64,
	MaxStorageBuffersPerShaderStage: 8, MaxPushConstantSize: 128, MinStorageBufferOffsetAlignment: 256,
	MaxStorageBufferBindingSize: 1 << 27, MaxBindGroups: 4,
}

// TestGPT2SmallDevice: on a device lowered to a small GPU's limits
// (wgpu.DeviceDescriptor.LimitsCap), the kernels the host picks for those
// limits give the CPU path's NLLs, GPT-2 and Llama (Qwen3, with its q/k
// norms) alike, every weight type, both kernel sets (before,
// nll_combine.wgsl's fixed 256 invocations were refused). At Vulkan's
// minimum of 4 storage buffers a stage too: the matmul kernels then bind no
// KV cache ("[nokv]", kv_write.wgsl after c_attn), the LM head keeps its
// target logits after the ids and rope_kv_write.wgsl the q/k norms after
// its table (before, the model was refused with wgpu.ErrLimit). At 8 the
// matmul kernels keep their KV cache epilogue.
func TestGPT2SmallDevice(t *testing.T) {
	minimum := smallDevice
	minimum.MaxStorageBuffersPerShaderStage = 4
	ctx := context.Background()
	for _, limits := range []wgpu.Limits{smallDevice, minimum} {
		d := newTestDevCapped(t, limits)
		if l := d.dev.Limits(); l.MaxComputeWorkgroupStorageSize != 16<<10 || l.MinStorageBufferOffsetAlignment < 256 ||
			l.MaxStorageBuffersPerShaderStage != limits.MaxStorageBuffersPerShaderStage {
			t.Fatalf("the device's limits %+v are not the cap's", l)
		}
		for _, set := range []KernelSet{KernelsSoftware, KernelsHardware} {
			t.Setenv(KernelsEnv, string(set))
			for _, m := range []*model.Model{synth.Peaked(synth.TinyConfig(), 7), synth.Peaked(synth.TinyLlamaConfig("qwen3"), 7)} {
				seqs := zipfSeqs(5, 4, m.Config.NPositions, m.Config.VocabSize)
				_, want, err := model.NewCPU(m, 0).LossPerToken(ctx, seqs)
				if err != nil {
					t.Fatal(err)
				}
				for _, f16 := range d.weightTypes() {
					name := fmt.Sprintf("%d storage buffers, %s kernels, %s f16=%v", limits.MaxStorageBuffersPerShaderStage, set, m.Config.Arch, f16)
					tol := 1e-5
					if f16 {
						tol = 3e-4
					}
					g, err := NewGPT2(ctx, d.dev, m.Reader(), f16, nil)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if kv := limits.MaxStorageBuffersPerShaderStage >= kvEpilogueBuffers; g.kvEpilogue() != kv ||
						strings.Contains(g.matmulShared.Name(), "[nokv]") == kv {
						t.Errorf("%s: matmul_shared.wgsl as %s, KV cache epilogue %v; want it %v", name, g.matmulShared.Name(), g.kvEpilogue(), kv)
					}
					p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
					if err == nil {
						_, err = p.Wait(ctx)
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i, x := range p.PerToken() {
						if diff := math.Abs(float64(x) - float64(want[i])); diff > 20*tol*math.Max(1, float64(want[i])) {
							t.Fatalf("%s: target %d: NLL %.7f, CPU %.7f", name, i, x, want[i])
						}
					}
					g.Close()
				}
			}
		}
	}
}

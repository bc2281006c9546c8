package shaders

import (
	"os"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// stagedEnv, set to anything, makes every test device stage its transfers as on a discrete GPU
// (wgpu.DeviceDescriptor.StageTransfers): the weights, tokens and targets are uploaded and the losses read back
// through staging buffers and copies, which the barrier opening each command buffer must order before the
// dispatches. CPU drivers have host-visible memory only, so without it no GPU suite takes those paths.
const stagedEnv = "WGPU_TEST_STAGED"

// stagedTests are the tests TestStagedTransfers runs with staged transfers: the forward passes that upload
// weights and batches and read losses back (one batch, chunked prefill, batches in flight, profiles, top-K
// readback), generation sessions (tokens in, logits out, batch after batch), and the matrix units' self-check
// (its own operands and readback).
const stagedTests = "^(TestAdapter|TestStagedDevice|TestGPT2MatchesCPU|TestGPT2ChunkedPrefill|TestGPT2InFlight|TestGPT2Profile|TestGPT2TopLogprobs|" +
	"TestLlamaChunkedPrefill|TestLlamaSession|TestSessionMatchesCPUGenerator|TestMatrixUnitsSelfCheck)$"

// TestStagedTransfers runs stagedTests again with $WGPU_TEST_STAGED set, once on each implementation of
// $WGPU_TEST_VULKAN_IMPLS, in child processes. Their results must match the CPU's as always, and the validation
// layer must stay silent: SwiftShader's layer (1.3.250 or newer) checks the hazards between a submission's staging
// copies and its dispatches, which Debian 12's does not.
func TestStagedTransfers(t *testing.T) {
	if os.Getenv(stagedEnv) != "" {
		t.Skip("already staging")
	}
	if testing.Short() {
		t.Skip("slow: -short")
	}
	impls := prereq.VulkanImpls(t)
	for i := range impls {
		impls[i] = impls[i].With(stagedEnv, "1")
	}
	prereq.RunOn(t, impls, stagedTests, "", 20*time.Minute, "--- PASS: TestStagedDevice", "--- PASS: TestGPT2MatchesCPU", "--- PASS: TestLlamaSession")
}

// TestStagedDevice checks that $WGPU_TEST_STAGED reaches the test devices: on a CPU driver, whose one memory type
// is host-visible, a buffer the host maps takes a memory block of its own beside a storage buffer's where
// transfers are staged, and shares the storage buffer's block where they are not.
func TestStagedDevice(t *testing.T) {
	d := newTestDev(t)
	if d.info.DeviceType != "cpu" {
		t.Skipf("%s is a %s: its memory types decide", d.info.Name, d.info.DeviceType)
	}
	newBuf := func(usage wgpu.BufferUsage) {
		b, err := d.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "staged", Size: 256, Usage: usage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
	}
	newBuf(wgpu.BufferUsageStorage)
	before := d.dev.MemoryStats().Blocks
	newBuf(wgpu.BufferUsageMapWrite | wgpu.BufferUsageCopySrc)
	added := d.dev.MemoryStats().Blocks - before
	staged := os.Getenv(stagedEnv) != ""
	if want := map[bool]int{false: 0, true: 1}[staged]; added != want {
		t.Errorf("staged %v: a mapped buffer beside a storage buffer added %d memory blocks, want %d", staged, added, want)
	}
}

package backend

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestGPUFeedSoftwareAdapter: a software adapter (lavapipe, SwiftShader)
// gets batches of about softwareBatchFlops of work and one batch in flight,
// so that a cancel waits for one short batch; a hardware GPU keeps the
// memory's budget up to maxGPUBatchTokens and two in flight, its batches
// capped at hardwareBatchFlops only for models of billions of parameters.
func TestGPUFeedSoftwareAdapter(t *testing.T) {
	tiny := synth.TinyConfig() // 2 layers, 16 channels, GPT-2's vocabulary: the LM head is nearly all the work
	perToken := 2 * float64(tiny.VocabSize*tiny.NEmbd+tiny.NLayer*12*tiny.NEmbd*tiny.NEmbd)
	if got := tokenFlops(tiny); got != perToken {
		t.Errorf("tokenFlops(tiny) = %g, want %g (the LM head and the blocks' four matrices)", got, perToken)
	}
	small := synth.GPT2Shape(12, 12, 768)
	large := synth.GPT2Shape(32, 32, 4096) // about 6.6B parameters
	for _, c := range []struct {
		name      string
		software  bool
		cfg       model.Config
		mem       int
		tokens    int
		inFlight  int
		wantSmall bool // the budget is below the memory's
	}{
		{"hardware, large memory", false, tiny, 1 << 20, maxGPUBatchTokens, 2, false},
		{"hardware, small memory", false, tiny, 5000, 5000, 2, false},
		{"hardware, 124M", false, small, 1 << 20, maxGPUBatchTokens, 2, false},
		{"hardware, 6.6B", false, large, 1 << 20, int(hardwareBatchFlops / tokenFlops(large)), 2, true},
		{"software, tiny model", true, tiny, 64 * 1024, int(softwareBatchFlops / perToken), 1, true},
		{"software, memory below the cap", true, tiny, 300, 300, 1, false},
		// Fewer tokens than a window: every batch is one sequence.
		{"software, 124M", true, small, 64 * 1024, int(softwareBatchFlops / tokenFlops(small)), 1, true},
	} {
		f := gpuFeed(c.software, c.cfg, c.mem)
		if f.BatchTokens != c.tokens || f.InFlight != c.inFlight {
			t.Errorf("%s: feed %+v, want %d batch tokens, %d in flight", c.name, f, c.tokens, c.inFlight)
		}
		if c.wantSmall && f.BatchTokens >= min(c.mem, maxGPUBatchTokens) {
			t.Errorf("%s: %d batch tokens, want fewer than the hardware budget %d", c.name, f.BatchTokens, min(c.mem, maxGPUBatchTokens))
		}
	}
	if n := gpuFeed(true, small, 64*1024).BatchTokens; n >= small.NPositions {
		t.Errorf("software batch of GPT-2 124M: %d tokens, want less than a window (one sequence a batch)", n)
	}
	// The tiny model's batch on lavapipe is a few of its 256-position
	// windows (about a second there), not the 64K tokens of a GPU.
	if n := gpuFeed(true, tiny, 64*1024).BatchTokens; n < 256 || n > 4096 {
		t.Errorf("software batch of the tiny model: %d tokens, want a few windows of 256", n)
	}
}

// TestGPUWidths: the GPU pads a batch to the powers of two below 64
// positions, then to multiples of 64, and to the device's positions: a
// window of 2 tokens (--ctx 2) runs 2 rows, not 64; one of 20, 32.
func TestGPUWidths(t *testing.T) {
	for _, c := range []struct{ P, n, want int }{
		{1024, 2, 2}, {1024, 3, 4}, {1024, 20, 32}, {1024, 33, 64}, {1024, 65, 128}, {1024, 1000, 1024},
		{37, 2, 2}, {37, 33, 37}, {2, 2, 2}, {130, 129, 130},
	} {
		f := pipeline.Feed{Widths: gpuWidths(c.P)}
		if got := f.Width(c.n); got != c.want {
			t.Errorf("%d positions: %d tokens padded to %d, want %d (widths %v)", c.P, c.n, got, c.want, f.Widths)
		}
	}
}

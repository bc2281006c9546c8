package pipeline

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// Backend scores batches of sequences for Evaluate: a forward pass and the
// per-target NLL, summed. It says how it wants to be fed (Feed), takes a batch
// and delivers its sums later (Submit, then Pending.Wait), so that a device can
// run one batch while the host prepares the next. CPU and GPU are the two
// backends of this package.
type Backend interface {
	// Name names the device for results ("cpu x2", a GPU's name and driver).
	Name() string
	// Feed says how batches should be shaped for this backend.
	Feed() Feed
	// Submit starts scoring b and may return before the work is done. Evaluate
	// keeps at most Feed().InFlight batches submitted and not yet waited for.
	// An error that wraps ErrBatchTooLarge means b does not fit the backend's
	// memory and a smaller batch may.
	Submit(ctx context.Context, b Batch) (Pending, error)
	// Close releases the backend's resources. Batches not waited for are lost.
	Close() error
	// Describe says what the backend computes on and how, for a result's
	// config and provenance and a checkpoint's run identity.
	Describe() BackendInfo
}

// SetupTimer is a Backend that does work once per device, driver, batch
// shape or process besides scoring its batches (a GPU compiles pipelines,
// tunes its kernels and checks its matrix units), and says how long that
// took: what makes a first run slower than the next.
type SetupTimer interface {
	// SetupTimes is that work's wall time since the backend was made.
	SetupTimes() SetupTimes
}

// SetupTimes is a SetupTimer's work by kind.
type SetupTimes struct {
	Compile time.Duration // GPU pipelines made for the batches
	Tune    time.Duration // the autotuner's rounds, their pipelines included
	Check   time.Duration // the matrix units' self-check, its pipelines included
}

// Add is s plus o, field by field.
func (s SetupTimes) Add(o SetupTimes) SetupTimes {
	return SetupTimes{Compile: s.Compile + o.Compile, Tune: s.Tune + o.Tune, Check: s.Check + o.Check}
}

// Sub is s minus o, field by field: the work between two readings.
func (s SetupTimes) Sub(o SetupTimes) SetupTimes {
	return SetupTimes{Compile: s.Compile - o.Compile, Tune: s.Tune - o.Tune, Check: s.Check - o.Check}
}

// Total is the three added.
func (s SetupTimes) Total() time.Duration { return s.Compile + s.Tune + s.Check }

// SetupOf is b's SetupTimes; zero for a backend that is no SetupTimer.
func SetupOf(b Backend) SetupTimes {
	if t, ok := b.(SetupTimer); ok {
		return t.SetupTimes()
	}
	return SetupTimes{}
}

// BackendInfo describes a backend (Backend.Describe).
type BackendInfo struct {
	// Precision is the weight type it computes with: "f16" or "f32" on a
	// GPU, "f32" or "bf16" (its bf16 mode) on the CPU; on several devices
	// theirs, or each one's joined with " + " where they differ.
	Precision string
	// Threads is the CPU path's goroutines; 0 on GPUs.
	Threads int
	// Device names the device precisely, its kernel set included; on several
	// devices, every one in Device.Parts.
	Device DeviceInfo
}

// Batch is what a backend scores in one go: sequences padded to Width
// positions. Width is one of Feed().Widths (the smallest that holds the
// longest sequence), or the longest sequence's length when Widths is empty.
type Batch struct {
	Seqs  []model.Sequence
	Width int
	// Index is the batch's number in the run, from 0, counting on from
	// where a resumed run's checkpoint stopped (State.Batches): a backend
	// over several devices (--device all) picks the device by it, so that a
	// resumed run scores each batch where an uninterrupted one does.
	Index int
	// PerToken asks for every target's NLL as well as the sums: the Pending
	// then implements PerTokenPending. Off, it costs nothing.
	PerToken bool
	// TopLogprobs, with PerToken, asks for every target position's
	// TopLogprobs highest log-probabilities too: the Pending then implements
	// TopLogprobsPending.
	TopLogprobs int
	// Progress, when set, may be called by a backend that can tell how far a
	// batch has got, with the batch's targets done so far (in proportion to
	// the work done; at most its targets, never decreasing), from the
	// goroutine that calls Submit or Wait while they run. The CPU calls it
	// after each layer; a GPU batch is one command buffer and reports nothing.
	Progress func(done int)
}

// Pending is a submitted batch.
type Pending interface {
	// Wait blocks until the batch is scored and returns the sums of NLL over
	// every scored target. It may be called more than once.
	Wait(ctx context.Context) (model.LossSums, error)
}

// PerTokenPending is the Pending of a batch submitted with Batch.PerToken.
type PerTokenPending interface {
	Pending
	// PerToken is, after Wait, every target's NLL (float32, as the backend
	// computed it) in the batch's target order: sequences in order, each
	// one's targets by position.
	PerToken() []float32
}

// TopLogprobsPending is the Pending of a batch submitted with
// Batch.TopLogprobs K.
type TopLogprobsPending interface {
	Pending
	// TopLogprobs is, after Wait, K log-probabilities per target, in the order
	// of PerToken: of each target's position, the K highest over the
	// vocabulary, highest first (ties: lower id first; a NaN logit below
	// every number, NaNs tied).
	TopLogprobs() []TokenLogprob
}

// Feed is how a backend wants to be fed.
type Feed struct {
	// Widths are the padded batch widths (ascending) the backend is built for;
	// empty means any width (a batch is as wide as its longest sequence).
	Widths []int
	// BatchTokens bounds a batch's padded size, len(Seqs) x Width, from the
	// backend's memory (a batch holds at least one sequence); 0 means
	// DefaultBatchTokens.
	BatchTokens int
	// InFlight is how many batches may be submitted before the first is waited
	// for; less than 1 means 1.
	InFlight int
}

// Width is the padded width of a batch whose longest sequence has n tokens:
// the smallest of Widths that holds n, else n.
func (f Feed) Width(n int) int {
	if i, ok := slices.BinarySearch(f.Widths, n); ok || i < len(f.Widths) {
		return f.Widths[i]
	}
	return n
}

// ErrBatchTooLarge marks a Submit or Wait error that says the batch did not fit
// the backend's memory: Evaluate then halves its batches and goes on.
var ErrBatchTooLarge = errors.New("batch too large for the device's memory")

// Done is a Pending whose result is known when Submit returns: what a
// backend that scores synchronously (the CPU) returns.
type Done struct {
	Sums model.LossSums
	NLL  []float32      // with Batch.PerToken
	Top  []TokenLogprob // with Batch.TopLogprobs
	Err  error
}

// Wait returns the sums and error.
func (d Done) Wait(context.Context) (model.LossSums, error) { return d.Sums, d.Err }

// PerToken returns the per-target NLLs.
func (d Done) PerToken() []float32 { return d.NLL }

// TopLogprobs returns the top log-probabilities.
func (d Done) TopLogprobs() []TokenLogprob { return d.Top }

package shaders

import "time"

// SetupTimes is the wall time a model has spent, since NewGPT2, on work
// done once per device, driver, batch shape or process rather than on its
// batches: what makes a first run slower than the next. Each is host time
// that kept a batch from being submitted.
type SetupTimes struct {
	// Compile is the making of the pipelines a batch's (or a generation
	// session's) recording needs, before its first recording (makePipelines):
	// from the driver's shader cache after the first run on a device and
	// driver, compiled before it.
	Compile time.Duration
	// Tune is the autotuner's rounds, the compiling of their candidates
	// included: the first batch of each shape on a device and driver whose
	// tuning file lacks it (TuneAuto), every shape with TuneRedo.
	Tune time.Duration
	// Check is the decision whether to use the matrix units, their
	// self-check included (the first use of a configuration on a device and
	// driver; later ones read its verdict).
	Check time.Duration
}

// SetupTimes reports the model's SetupTimes so far.
func (g *GPT2) SetupTimes() SetupTimes {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.setup
}

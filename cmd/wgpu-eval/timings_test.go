package main

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestSetupNote: the note on a run's first-use work appears where that work
// took a second and a tenth of the run or more, names its parts of 0.05 s or
// more, and gives the batches' own speed.
func TestSetupNote(t *testing.T) {
	for _, c := range []struct {
		seconds float64
		tm      *pipeline.Timings
		want    string
	}{
		{10, nil, ""},
		{10, &pipeline.Timings{Compile: 0.5, Tune: 0.4, Score: 9.1}, ""}, // under a second
		{100, &pipeline.Timings{Compile: 2, Tune: 7, Score: 91}, ""},     // under a tenth
		{40, &pipeline.Timings{Compile: 12, Tune: 18, Check: 0.04, Score: 10}, "note: 30.0 s of the run went to work done once per device, driver and batch shape (compiling GPU pipelines 12.0 s, tuning the kernels 18.0 s), which later runs find cached; the batches alone took 10.0 s, 50000 tok/s"},
		{3, &pipeline.Timings{Check: 3}, "note: 3.0 s of the run went to work done once per device, driver and batch shape (the matrix units' self-check 3.0 s), which later runs find cached"},
	} {
		r := &pipeline.Result{Seconds: c.seconds, Tokens: 500000, Timings: c.tm}
		if got := setupNote(r); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.tm, got, c.want)
		}
	}
}

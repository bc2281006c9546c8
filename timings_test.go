package wgpueval

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestTimings: a result's timings are disjoint parts of the run: they add
// up to no more than the wall time of the Evaluate call measured around it,
// and the setup work and the batches to no less than Seconds. A second run
// of the same Evaluator loads nothing; on the CPU there is no setup work,
// and on a GPU the second run of the same batch shapes compiles no
// pipelines where the first did. The JSON has every part.
func TestTimings(t *testing.T) {
	for _, dev := range []Device{DeviceCPU, GPU(0)} {
		t.Run(string(dev), func(t *testing.T) {
			if dev != DeviceCPU {
				if _, err := backend.Devices(); err != nil {
					if wgpu.Unavailable(err) {
						prereq.Missing(t, "vulkan", err)
					}
					t.Fatal(err)
				}
			}
			ev, err := Open(context.Background(), tinyModel(t), Options{Device: dev, Offline: true, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Close()
			for run := range 2 {
				start := time.Now()
				res, err := ev.Evaluate(context.Background(), Text("speech", dataText), EvalOptions{Ctx: 16, NoTokenCache: true})
				wall := time.Since(start).Seconds()
				if err != nil {
					t.Fatal(err)
				}
				tm := res.Timings
				if tm == nil {
					t.Fatal("no timings")
				}
				sum := tm.Tokenize + tm.Load + tm.Setup() + tm.Score
				if sum > wall {
					t.Errorf("run %d: the timings %+v add up to %.6f s, more than the %.6f s Evaluate took", run, *tm, sum, wall)
				}
				if tm.Setup()+tm.Score < res.Seconds-1e-9 || tm.Score > res.Seconds {
					t.Errorf("run %d: setup %.6f s and score %.6f s, for %.6f s of scoring", run, tm.Setup(), tm.Score, res.Seconds)
				}
				if tm.Tokenize <= 0 || tm.Score <= 0 {
					t.Errorf("run %d: %+v, want the tokenizing and the scoring timed", run, *tm)
				}
				if loaded := tm.Load > 0; loaded != (run == 0) {
					t.Errorf("run %d: load %v s", run, tm.Load)
				}
				if dev == DeviceCPU && tm.Setup() != 0 {
					t.Errorf("run %d on the cpu: setup work %+v", run, *tm)
				}
				if compiled := tm.Compile > 0; dev != DeviceCPU && compiled != (run == 0) {
					t.Errorf("run %d on a GPU: compile %v s, want pipelines made in the first run only", run, tm.Compile)
				}
				b, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				var back struct {
					Timings map[string]float64 `json:"timings"`
				}
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				if keys := slices.Sorted(maps.Keys(back.Timings)); !slices.Equal(keys, []string{"check", "compile", "load", "score", "tokenize", "tune"}) {
					t.Errorf("the JSON's timings have %q", keys)
				}
			}
		})
	}
}

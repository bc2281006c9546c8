package model_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestLoadProgressStartsAtZero: loading reports (0, total) before the first
// tensor, so that a display's rate counts from the start (a first report
// after the first tensors made a bar read "4.5 TB/s"), then grows to total.
func TestLoadProgressStartsAtZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	if err := synth.WriteSafetensors(dir, synth.Random(synth.TinyConfig(), 3), "F16"); err != nil {
		t.Fatal(err)
	}
	ck, err := model.OpenCheckpoint(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for _, load := range []struct {
		name string
		run  func(model.LoadOptions) error
	}{
		{"LoadCPU", func(o model.LoadOptions) error { _, err := model.LoadCPU(context.Background(), ck, 1, o); return err }},
		{"LoadReader", func(o model.LoadOptions) error { _, err := model.LoadReader(context.Background(), ck, o); return err }},
	} {
		var seen [][2]int64
		if err := load.run(model.LoadOptions{Progress: func(done, total int64) { seen = append(seen, [2]int64{done, total}) }}); err != nil {
			t.Fatal(err)
		}
		if len(seen) < 2 || seen[0][0] != 0 || seen[len(seen)-1][0] != seen[0][1] {
			t.Errorf("%s: reports %v: want (0, total) first and total last", load.name, seen)
		}
	}
}

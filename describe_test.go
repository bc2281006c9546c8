package wgpueval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// describedBackend scores on the CPU but describes itself as info (as
// --device all's backend over two f16 GPUs does) and fails its batch
// number failAt (from 1; 0: none).
type describedBackend struct {
	pipeline.Backend
	info   pipeline.BackendInfo
	calls  int
	failAt int
}

func (d *describedBackend) Describe() pipeline.BackendInfo { return d.info }

func (d *describedBackend) Submit(ctx context.Context, b pipeline.Batch) (pipeline.Pending, error) {
	if d.calls++; d.calls == d.failAt {
		return nil, errors.New("device lost")
	}
	return d.Backend.Submit(ctx, b)
}

// TestEvaluateRecordsDescribe: a result's config and provenance and a
// checkpoint's run identity take the precision, threads and device from the
// backend's description, whatever its type: a switch on *backend.CPU and
// *backend.GPU said f32 and named no adapter for --device all's.
func TestEvaluateRecordsDescribe(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	cpu, err := ev.prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gpu := func(adapter string) pipeline.DeviceInfo {
		return pipeline.DeviceInfo{Kind: "gpu", Name: adapter + " (f16)", Adapter: adapter, Vendor: "v", Kernels: "hardware"}
	}
	info := pipeline.BackendInfo{Precision: "f16", Device: pipeline.DeviceInfo{Kind: "gpu", Name: "A (f16) + B (f16)",
		Adapter: "A + B", Vendor: "v", Kernels: "hardware", Parts: []pipeline.DeviceInfo{gpu("A"), gpu("B")}}}
	fake := &describedBackend{Backend: cpu, info: info}
	ev.backend = fake

	text := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent\nMade glorious summer by this sun of York;\n", 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true}
	r, err := ev.Evaluate(context.Background(), Named(text), opt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config == nil || r.Config.Precision != "f16" || r.Config.Threads != 0 {
		t.Errorf("config %+v, want precision f16 and no threads", r.Config)
	}
	if d := r.Provenance.Device; d.Adapter != "A + B" || len(d.Parts) != 2 || d.Parts[0].Adapter != "A" || d.Parts[1].Adapter != "B" {
		t.Errorf("provenance device %+v, want adapters A and B", d)
	}

	// An interrupted run's checkpoint keeps the described precision.
	opt.Checkpoint = filepath.Join(t.TempDir(), "run.ckpt")
	fake.calls, fake.failAt = 0, 3
	if _, err := ev.Evaluate(context.Background(), Named(text), opt); err == nil || !strings.Contains(err.Error(), "device lost") {
		t.Fatalf("err = %v, want the device's", err)
	}
	ck, err := runfile.LoadRunCheckpoint(opt.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Run.Precision != "f16" || ck.State.Sums.Count == 0 {
		t.Errorf("checkpoint run %+v with %d targets, want precision f16 and the batches before the failure", ck.Run, ck.State.Sums.Count)
	}
}

// tuningBackend describes itself as a GPU whose autotuner picks tiles as
// batches come: before the first, only the defaults.
type tuningBackend struct {
	pipeline.Backend
	batches int
}

func (b *tuningBackend) Describe() pipeline.BackendInfo {
	tiles := map[string]string{"default": "128x128x8/8x8"}
	if b.batches > 0 {
		tiles["f16 N2304 K768 M64"] = "64x64x16/4x4"
	}
	return pipeline.BackendInfo{Precision: "f16", Device: pipeline.DeviceInfo{Kind: "gpu", Name: "A (f16)", Adapter: "A",
		Kernels: "hardware", MatmulTiles: tiles}}
}

func (b *tuningBackend) Submit(ctx context.Context, batch pipeline.Batch) (pipeline.Pending, error) {
	b.batches++
	return b.Backend.Submit(ctx, batch)
}

// TestProvenanceNamesTunedTiles: a result's provenance describes the
// device as it ran, with the tiles the autotuner picked during the run
// (device.matmul_tiles). It was taken before the first batch, so it named
// only the defaults, and a run's JSON could not explain a surprising
// figure by the tiles.
func TestProvenanceNamesTunedTiles(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	cpu, err := ev.prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ev.backend = &tuningBackend{Backend: cpu}
	text := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent\n", 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ev.Evaluate(context.Background(), Named(text), EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Provenance.Device.MatmulTiles["f16 N2304 K768 M64"]; got != "64x64x16/4x4" {
		t.Errorf("provenance tiles %v, want the tuned shape's 64x64x16/4x4", r.Provenance.Device.MatmulTiles)
	}
}

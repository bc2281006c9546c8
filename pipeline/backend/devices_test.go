package backend

import (
	"context"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

func TestParseDevice(t *testing.T) {
	for in, want := range map[string]DeviceSpec{"auto": {"auto", -1}, "CPU": {"cpu", -1}, "gpu": {"gpu", -1}, "Gpu:2": {"gpu", 2}, " ALL ": {"all", -1}} {
		if got, err := ParseDevice(in); err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "gpu:", "gpu:-1", "tpu", "gpu:x", "gpu:1:2"} {
		if _, err := ParseDevice(bad); err == nil {
			t.Errorf("ParseDevice(%q) accepted", bad)
		}
	}
	for in, want := range map[string]Precision{"": PrecisionAuto, "auto": PrecisionAuto, "F16": PrecisionF16, "f32": PrecisionF32, "BF16": PrecisionBF16} {
		if got, err := ParsePrecision(in); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParsePrecision("fp8"); err == nil {
		t.Error("ParsePrecision(fp8) accepted")
	}
}

// Open's CPU path packs a Checkpoint's weights with one copy
// (model.NewCPUOwned) and a caller's Model with NewCPU, leaving the Model
// usable; both score the same bits.
func TestOpenCPUOwnership(t *testing.T) {
	ctx := context.Background()
	m := synth.Random(synth.TinyConfig(), 5)
	dir := t.TempDir()
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	ck, err := model.OpenCheckpoint(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	seqs := []model.Sequence{{Tokens: []int32{50256, 464, 2068, 7586, 21831, 18045}, First: 1}}
	var sums []model.LossSums
	for _, src := range []model.TensorReader{m.Reader(), ck} {
		b, err := Open(ctx, DeviceSpec{"cpu", -1}, src, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Submit(ctx, pipeline.Batch{Seqs: seqs})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
		b.Close()
	}
	if m.Weights.Layers[0].QKVW == nil {
		t.Error("Open consumed the caller's Model")
	}
	if sums[0] != sums[1] {
		t.Errorf("loss from the Model %+v, from the checkpoint %+v", sums[0], sums[1])
	}
}

// PrecisionBF16 opens the CPU's bf16 mode (PortableBF16: the portable
// kernels) from a Checkpoint and from a Model alike, auto meaning the CPU;
// a GPU device refuses it.
func TestOpenBF16(t *testing.T) {
	ctx := context.Background()
	m := synth.Peaked(synth.TinyConfig(), 6)
	dir := t.TempDir()
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	ck, err := model.OpenCheckpoint(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	seqs := []model.Sequence{{Tokens: []int32{50256, 464, 2068, 7586, 21831, 18045}, First: 1}}
	ref, err := model.NewCPUBF16(m, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Threads: 2, Precision: PrecisionBF16, PortableBF16: true}
	for _, c := range []struct {
		kind string
		src  model.TensorReader
	}{{"cpu", m.Reader()}, {"cpu", ck}, {"auto", m.Reader()}} {
		b, err := Open(ctx, DeviceSpec{c.kind, -1}, c.src, opt)
		if err != nil {
			t.Fatal(err)
		}
		cpu, ok := b.(*CPU)
		if !ok || cpu.Precision() != "bf16" {
			t.Fatalf("%s: backend %T, want the CPU in bf16", c.kind, b)
		}
		p, err := b.Submit(ctx, pipeline.Batch{Seqs: seqs})
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s %T: sums %+v, want model.NewCPUBF16 %+v", c.kind, c.src, got, want)
		}
		b.Close()
	}
	if b, err := Open(ctx, DeviceSpec{"gpu", -1}, m.Reader(), opt); err == nil {
		b.Close()
		t.Error("a GPU device accepted precision bf16")
	}
}

// TestOpenCPURefusesMatrixUnitsOn: matrix units required on the cpu device,
// asked for or reached by auto without a GPU, are an error that says so,
// not a silent CPU run.
func TestOpenCPURefusesMatrixUnitsOn(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 3)
	_, err := Open(context.Background(), DeviceSpec{Kind: "cpu", Index: -1}, m.Reader(), Options{MatrixUnits: MatrixUnitsOn})
	if err == nil || !strings.Contains(err.Error(), "matrix units required (on), but device cpu runs on the cpu") {
		t.Errorf("err = %v", err)
	}
	b, err := Open(context.Background(), DeviceSpec{Kind: "cpu", Index: -1}, m.Reader(), Options{MatrixUnits: MatrixUnitsAuto})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// TestValidationEnv: $WGPU_EVAL_VALIDATION 1 turns the validation layer on
// whatever Options say, 0 and unset leave it to Options.Validation, and any
// other value is an error naming the variable and what it takes.
func TestValidationEnv(t *testing.T) {
	for _, c := range []struct {
		env       string
		opt, want bool
	}{{"", false, false}, {"", true, true}, {"0", false, false}, {"0", true, true}, {"1", false, true}, {"1", true, true}} {
		t.Setenv(ValidationEnv, c.env)
		if got, err := validation(Options{Validation: c.opt}); err != nil || got != c.want {
			t.Errorf("$%s=%q, Options.Validation %v: %v, %v; want %v", ValidationEnv, c.env, c.opt, got, err, c.want)
		}
	}
	for _, bad := range []string{"yes", "true", " 1", "2"} {
		t.Setenv(ValidationEnv, bad)
		if _, err := validation(Options{Validation: true}); err == nil || !strings.Contains(err.Error(), ValidationEnv) || !strings.Contains(err.Error(), "want 1") {
			t.Errorf("$%s=%q: %v, want an error naming the variable", ValidationEnv, bad, err)
		}
		if err := CheckDevice(DeviceSpec{Kind: "auto", Index: -1}); err == nil {
			t.Errorf("$%s=%q: CheckDevice(auto) passed", ValidationEnv, bad)
		}
	}
}

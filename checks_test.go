package wgpueval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestOpenRefusesMatrixUnitsWithoutThem: MatrixUnitsOn on a Vulkan adapter
// whose features show no matrix units (lavapipe, a CPU implementation) is
// refused by Open as an *OptionError of MatrixUnits, before the model is
// looked for, rather than by Evaluate once the weights are on the device.
// It needs Vulkan (skipped without it, unless $WGPU_REQUIRE_VULKAN or CI).
func TestOpenRefusesMatrixUnitsWithoutThem(t *testing.T) {
	infos, err := backend.Devices()
	if err != nil || len(infos) == 0 {
		if err == nil || wgpu.Unavailable(err) {
			prereq.Missing(t, "vulkan", err)
		}
		t.Fatal(err)
	}
	index := -1
	for i, info := range infos {
		if noMatrixUnits(info, PrecisionAuto) != "" {
			index = i
			break
		}
	}
	if index < 0 {
		t.Skip("every adapter here has matrix units: nothing to refuse")
	}
	for _, model := range []string{tinyModel(t), filepath.Join(t.TempDir(), "no-such-model")} {
		ev, err := Open(context.Background(), model, Options{Device: GPU(index), MatrixUnits: MatrixUnitsOn, Offline: true})
		if err == nil {
			ev.Close()
		}
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != "MatrixUnits" || oe.Value != "on" || !strings.Contains(oe.Reason, infos[index].Name) {
			t.Errorf("%s on gpu:%d (%s) with matrix units on: %v, want an OptionError of MatrixUnits naming the adapter",
				filepath.Base(model), index, infos[index].Name, err)
		}
	}
	// Auto and off open there (no weights load yet).
	for _, mu := range []MatrixUnits{MatrixUnitsAuto, MatrixUnitsOff} {
		ev, err := Open(context.Background(), tinyModel(t), Options{Device: GPU(index), MatrixUnits: mu, Offline: true})
		if err != nil {
			t.Errorf("matrix units %q: %v", mu, err)
			continue
		}
		ev.Close()
	}
}

// TestNoMatrixUnits: the features that rule the matrix units out, each
// named, and an adapter that has them all passes.
func TestNoMatrixUnits(t *testing.T) {
	good := wgpu.AdapterInfo{Name: "gpu", DeviceType: "discrete-gpu", Features: wgpu.Features{ShaderF16: true, Subgroups: true, CooperativeMatrix: true,
		CooperativeMatrixConfigs: []wgpu.CooperativeMatrixConfig{
			{M: 16, N: 16, K: 16, AType: wgpu.ComponentF16, ResultType: wgpu.ComponentF32, SubgroupMatrix: true}}}}
	if why := noMatrixUnits(good, PrecisionAuto); why != "" {
		t.Errorf("an adapter with matrix units: %q", why)
	}
	for _, c := range []struct {
		edit func(*wgpu.AdapterInfo)
		want string
	}{
		{func(a *wgpu.AdapterInfo) { a.DeviceType = "cpu" }, "CPU implementation"},
		{func(a *wgpu.AdapterInfo) { a.Features.ShaderF16 = false }, "no shader-f16"},
		{func(a *wgpu.AdapterInfo) { a.Features.Subgroups = false }, "no subgroup"},
		{func(a *wgpu.AdapterInfo) { a.Features.CooperativeMatrix = false }, "VK_KHR_cooperative_matrix"},
		{func(a *wgpu.AdapterInfo) { a.Features.CooperativeMatrixConfigs[0].M = 32 }, "configuration of 8 or 16"},
		{func(a *wgpu.AdapterInfo) { a.Features.CooperativeMatrixConfigs[0].ResultType = wgpu.ComponentF16 }, "configuration of 8 or 16"},
	} {
		a := good
		a.Features.CooperativeMatrixConfigs = append([]wgpu.CooperativeMatrixConfig(nil), good.Features.CooperativeMatrixConfigs...)
		c.edit(&a)
		if why := noMatrixUnits(a, PrecisionAuto); !strings.Contains(why, c.want) {
			t.Errorf("%+v: %q, want %q", a, why, c.want)
		}
	}
}

// TestEvaluateChecksOutputFoldersFirst: an output file (Checkpoint,
// PerToken, PerDocument, JSON) in a folder that does not exist, or that is
// a folder, is refused by Evaluate as an *OptionError of its field before
// the weights load.
func TestEvaluateChecksOutputFoldersFirst(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "no-such-folder", "out")
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opt    EvalOptions
		option string
		want   string
	}{
		{EvalOptions{Checkpoint: missing}, "Checkpoint", "does not exist"},
		{EvalOptions{PerToken: missing}, "PerToken", "does not exist"},
		{EvalOptions{JSON: missing}, "JSON", "does not exist"},
		{EvalOptions{Mode: ModeDocuments, PerDocument: missing}, "PerDocument", "does not exist"},
		{EvalOptions{JSON: filepath.Join(file, "r.json")}, "JSON", "is not a folder"},
		{EvalOptions{PerToken: tmp}, "PerToken", "is a folder"},
	} {
		c.opt.Ctx = 16
		_, err := ev.Evaluate(context.Background(), Text("speech", dataText), c.opt)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || !strings.Contains(oe.Reason, c.want) {
			t.Errorf("%+v: %v, want an OptionError of %s (%q)", c.opt, err, c.option, c.want)
		}
		if ev.backend != nil {
			t.Fatalf("%s: the weights were loaded before the error", c.option)
		}
	}
	// The same files in a folder that exists are written.
	dir := t.TempDir()
	opt := EvalOptions{Ctx: 16, Checkpoint: filepath.Join(dir, "c"), PerToken: filepath.Join(dir, "p"), JSON: filepath.Join(dir, "r.json")}
	if _, err := ev.Evaluate(context.Background(), Text("speech", dataText), opt); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{opt.PerToken, opt.JSON} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

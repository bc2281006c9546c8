package wgpueval

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEvaluateRefusesClobberingOutputs: an output path that names the
// corpus, a model file or another output is an *OptionError of that output,
// before anything is scored, and every file is left as it was; distinct
// paths are written.
func TestEvaluateRefusesClobberingOutputs(t *testing.T) {
	dir := tinyModel(t)
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	files := ev.Files()
	for _, name := range []string{"config.json", "model.safetensors"} {
		if !slices.Contains(files, filepath.Join(dir, name)) {
			t.Errorf("Files() = %v: no %s", files, name)
		}
	}
	out := t.TempDir()
	text := filepath.Join(out, "c.txt")
	want := []byte("Now is the winter of our discontent\nMade glorious summer by this sun of York;\n")
	if err := os.WriteFile(text, want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(text, filepath.Join(out, "link.txt")); err != nil {
		t.Fatal(err)
	}
	config, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	r := func(name string) string { return filepath.Join(out, name) }
	for _, c := range []struct {
		name  string
		opt   EvalOptions
		field string
		says  string
	}{
		{"json on the corpus", EvalOptions{JSON: text}, "JSON", "the corpus"},
		{"per-token on the corpus through a link", EvalOptions{PerToken: r("link.txt")}, "PerToken", "the corpus"},
		{"json on the model's config", EvalOptions{JSON: filepath.Join(dir, "config.json")}, "JSON", "the model's config.json"},
		{"checkpoint on the weights", EvalOptions{Checkpoint: filepath.Join(dir, "model.safetensors")}, "Checkpoint", "the model's model.safetensors"},
		{"json and per-token on one path", EvalOptions{JSON: r("o.x"), PerToken: r("o.x")}, "PerToken", "the JSON result"},
		{"checkpoint on the result", EvalOptions{JSON: r("ck"), Checkpoint: r("ck")}, "Checkpoint", "the JSON result"},
		{"per-token on the checkpoint's log", EvalOptions{Checkpoint: r("run"), PerToken: r("run.pertoken")}, "PerToken", "the checkpoint keeps beside it"},
		{"per-document on the per-token file", EvalOptions{Mode: ModeDocuments, PerToken: r("p"), PerDocument: r("./p")}, "PerDocument", "the per-token file"},
	} {
		_, err := ev.Evaluate(context.Background(), Named(text), c.opt)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != c.field || !strings.Contains(oe.Reason, c.says) {
			t.Errorf("%s: err = %v, want an *OptionError of %s saying %q", c.name, err, c.field, c.says)
		}
		if ev.backend != nil {
			t.Fatalf("%s: the weights were loaded before the error", c.name)
		}
	}
	if got, _ := os.ReadFile(text); !bytes.Equal(got, want) {
		t.Errorf("the corpus changed: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "config.json")); !bytes.Equal(got, config) {
		t.Error("config.json changed")
	}
	for _, name := range []string{"o.x", "ck", "p"} {
		if _, err := os.Lstat(r(name)); err == nil {
			t.Errorf("%s was written by a refused run", name)
		}
	}
	res, err := ev.Evaluate(context.Background(), Named(text), EvalOptions{Ctx: 16, NoTokenCache: true, JSON: r("r.json"), PerToken: r("r.ptk")})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r.json", "r.ptk"} {
		if fi, err := os.Stat(r(name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written (%v) for a run of %d tokens", name, err, res.Tokens)
		}
	}
}

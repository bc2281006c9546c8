package clobber

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corpus := write("corpus.txt")
	config := write("config.json")
	if err := os.Symlink(corpus, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(config, filepath.Join(dir, "hard.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "sublink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub", "new.json"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	inputs := []File{{"the corpus", "corpus.txt"}, {"the model's config.json", config}}

	for _, c := range []struct {
		name    string
		outputs []File
		want    string // "" for no clash, else the Role of the clashing other file
	}{
		{"distinct", []File{{"--json", "r.json"}, {"--per-token", "r.ptk"}}, ""},
		{"same name as the corpus", []File{{"--json", "corpus.txt"}}, "the corpus"},
		{"absolute name of the corpus", []File{{"--json", corpus}}, "the corpus"},
		{"through a symbolic link", []File{{"--per-token", "link.txt"}}, "the corpus"},
		{"through a hard link", []File{{"--json", "hard.json"}}, "the model's config.json"},
		{"through ./ and ..", []File{{"--json", "sub/../config.json"}}, "the model's config.json"},
		{"two new outputs on one path", []File{{"--json", "o.x"}, {"--per-token", "./o.x"}}, "--json"},
		{"new outputs through a linked folder", []File{{"--json", "sub/n.json"}, {"--checkpoint", "sublink/n.json"}}, "--json"},
		{"a dangling link and its target", []File{{"--json", "dangling"}, {"--checkpoint", "sub/new.json"}}, "--json"},
		{"stdout twice", []File{{"--json", "-"}, {"--per-token", "-"}}, ""},
		{"a device twice", []File{{"--json", os.DevNull}, {"--per-token", os.DevNull}}, ""},
		{"empty paths", []File{{"--json", ""}, {"--per-token", ""}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.outputs, inputs)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Check: %v, want no clash", err)
				}
				return
			}
			var cl *Clash
			if !errors.As(err, &cl) {
				t.Fatalf("Check: %v, want a *Clash with %s", err, c.want)
			}
			if cl.Other.Role != c.want {
				t.Errorf("clash with %q, want %q (%v)", cl.Other.Role, c.want, err)
			}
			if cl.Input != strings.HasPrefix(c.want, "the ") {
				t.Errorf("Input = %v for %v", cl.Input, err)
			}
		})
	}
}

func TestClashMessage(t *testing.T) {
	in := (&Clash{Output: File{"--json", "c.txt"}, Other: File{"the corpus", "c.txt"}, Input: true}).Error()
	if want := "--json c.txt is the corpus (c.txt): it would be overwritten"; !strings.HasPrefix(in, want) {
		t.Errorf("got %q, want it to start %q", in, want)
	}
	out := (&Clash{Output: File{"--per-token", "o.x"}, Other: File{"--json", "o.x"}}).Error()
	if want := "--json o.x and --per-token o.x name the same file"; !strings.HasPrefix(out, want) {
		t.Errorf("got %q, want it to start %q", out, want)
	}
}

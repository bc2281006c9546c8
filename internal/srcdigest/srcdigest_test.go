package srcdigest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module writes a module root with files (path: content) and returns it.
func module(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestDigest: the digest changes with what decides a cache's content (a
// source file of the trees, one below a deep tree, a new file, a module's
// version) and not with the rest (tests, testdata, folders below a flat tree,
// the generated file, other modules, line ends).
func TestDigest(t *testing.T) {
	spec := Spec{Trees: []string{"tok/...", "corpus"}, Modules: []string{"example.com/a"}, Generated: "corpus/zgen.go"}
	base := map[string]string{
		"go.mod":                    "module m\n\ngo 1.26\n\nrequire (\n\texample.com/a v1.2.0\n\texample.com/b v0.1.0\n)\n",
		"tok/tok.go":                "package tok\n\nfunc A() int { return 1 }\n",
		"tok/internal/ucd/ucd.go":   "package ucd\n\nconst V = 16\n",
		"tok/tok_test.go":           "package tok\n",
		"tok/testdata/x.go":         "package x\n",
		"corpus/cache.go":           "package corpus\n",
		"corpus/zgen.go":            "package corpus\n\nconst code = \"x\"\n",
		"corpus/sub/sub.go":         "package sub\n",
		"corpus/cache_test.go":      "package corpus\n",
		"elsewhere/elsewhere.go":    "package elsewhere\n",
		"corpus/testdata/README.md": "data\n",
	}
	digest := func(files map[string]string) string {
		t.Helper()
		d, err := spec.Digest(module(t, files))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for p, c := range base {
			m[p] = c
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	want := digest(base)
	if len(want) != 64 || strings.Trim(want, "0123456789abcdef") != "" {
		t.Fatalf("digest %q is not a hex sha256", want)
	}
	for name, files := range map[string]map[string]string{
		"a tree's file":            with("tok/tok.go", "package tok\n\nfunc A() int { return 2 }\n"),
		"a file below a deep tree": with("tok/internal/ucd/ucd.go", "package ucd\n\nconst V = 17\n"),
		"a flat tree's file":       with("corpus/cache.go", "package corpus // v2\n"),
		"a new file":               with("corpus/merge.go", "package corpus\n"),
		"a file gone":              with("tok/internal/ucd/ucd.go", ""),
		"a module's version":       with("go.mod", strings.Replace(base["go.mod"], "a v1.2.0", "a v1.3.0", 1)),
	} {
		if digest(files) == want {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	for name, files := range map[string]map[string]string{
		"a test":                   with("tok/tok_test.go", "package tok // more tests\n"),
		"testdata":                 with("tok/testdata/x.go", "package x // changed\n"),
		"below a flat tree":        with("corpus/sub/sub.go", "package sub // changed\n"),
		"the generated file":       with("corpus/zgen.go", "package corpus\n\nconst code = \"y\"\n"),
		"another module's version": with("go.mod", strings.Replace(base["go.mod"], "b v0.1.0", "b v0.2.0", 1)),
		"another folder":           with("elsewhere/elsewhere.go", "package elsewhere // changed\n"),
		"\\r\\n line ends":         with("tok/tok.go", strings.ReplaceAll(base["tok/tok.go"], "\n", "\r\n")),
		"a require line":           with("go.mod", "module m\n\nrequire example.com/a v1.2.0\n"),
	} {
		if got := digest(files); got != want {
			t.Errorf("%s: the digest changed", name)
		}
	}
}

// TestDigestErrors: a tree without Go files (renamed away) and a module
// go.mod does not require are errors, not a digest of less.
func TestDigestErrors(t *testing.T) {
	root := module(t, map[string]string{"go.mod": "module m\n\nrequire example.com/a v1.2.0\n", "tok/tok.go": "package tok\n"})
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Trees: []string{"tok", "gone/..."}}, "gone/..."},
		{Spec{Trees: []string{"tok"}, Modules: []string{"example.com/b"}}, "requires no version of example.com/b"},
	} {
		if _, err := c.spec.Digest(root); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.spec, err, c.want)
		}
	}
}

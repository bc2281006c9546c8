package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestInsecureSkipVerify: a hub whose ETags are neither a sha256 nor a git
// sha1 (so nothing can check the files) is refused, and the error names
// --insecure-skip-verify; with the flag, the same model is used.
func TestInsecureSkipVerify(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		file, ok := strings.CutPrefix(r.URL.Path, "/org/tiny/resolve/main/")
		if !ok {
			file, ok = strings.CutPrefix(r.URL.Path, "/org/tiny/resolve/0123456789abcdef0123456789abcdef01234567/")
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(file)))
		if !ok || err != nil {
			w.Header().Set("X-Error-Code", "EntryNotFound")
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
		w.Header().Set("ETag", `"unverifiable-`+file+`"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	}))
	defer s.Close()
	t.Setenv("HF_ENDPOINT", s.URL)
	t.Setenv("HF_HUB_OFFLINE", "")
	data := runText(t, 8)
	args := []string{"--model", "org/tiny", "--data", data, "--ctx", "16", "--device", "cpu", "--quiet"}
	if _, _, err := cli(t, "", args...); err == nil || !strings.Contains(err.Error(), "--insecure-skip-verify") {
		t.Fatalf("unverifiable files: err = %v, want a refusal naming --insecure-skip-verify", err)
	}
	out, stderr, err := cli(t, "", append(args, "--insecure-skip-verify")...)
	if err != nil || !strings.Contains(out, "NLL") {
		t.Fatalf("with --insecure-skip-verify: %v\n%s%s", err, out, stderr)
	}
}

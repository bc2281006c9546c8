package hub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePythonCache lays files out at commit in cache as huggingface_hub does
// (blobs named by etag, relative snapshot symlinks, refs/main), and returns the
// repo's folder.
func writePythonCache(t *testing.T, cache, repo, commit string, files map[string]fakeFile) string {
	t.Helper()
	dir := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	for name, ff := range files {
		blob := filepath.Join(dir, "blobs", ff.etag())
		link := filepath.Join(dir, "snapshots", commit, name)
		for _, d := range []string{filepath.Dir(blob), filepath.Dir(link)} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(blob, ff.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../../blobs/"+ff.etag(), link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refs", "main"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A snapshot that Python filled with the model alone (AutoModel fetches
// config.json and the weights, no tokenizer file) gets its tokenizer files
// from the hub at its commit, once; offline, or with the hub out of reach, it
// is used as it is.
func TestLocateCompletesPythonSnapshotWithoutTokenizer(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/m", repo)
	files := repo.commits[commitA]
	modelOnly := map[string]fakeFile{"config.json": files["config.json"], "model.safetensors": files["model.safetensors"]}

	cache := t.TempDir()
	writePythonCache(t, cache, "org/m", commitA, modelOnly)
	c := &Client{Endpoint: f.hub.URL, CacheDir: cache}
	snap, err := c.Locate(context.Background(), "org/m")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "vocab.json", files["vocab.json"])
	checkSnapshotFile(t, snap, "merges.txt", files["merges.txt"])
	if _, err := os.Stat(filepath.Join(cache, "models--org--m", ".no_exist", commitA, "tokenizer.json")); err != nil {
		t.Errorf("tokenizer.json not recorded as absent: %v", err)
	}
	for _, r := range f.requests() {
		if r.path == "/org/m/resolve/main/config.json" || r.path == "/repos/"+files["model.safetensors"].etag() {
			t.Errorf("request %v: the cached snapshot's commit and weights need no request", r)
		}
	}
	n := len(f.requests())
	if _, err := c.Locate(context.Background(), "org/m"); err != nil {
		t.Fatal(err)
	}
	if m := len(f.requests()); m != n {
		t.Errorf("second Locate made %d requests, want none", m-n)
	}

	// Offline, and with no hub to answer: the snapshot as it is.
	for _, c := range []*Client{
		{Endpoint: f.hub.URL, CacheDir: t.TempDir(), Offline: true},
		{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir()},
	} {
		n := len(f.requests())
		writePythonCache(t, c.CacheDir, "org/m", commitA, modelOnly)
		snap, err := c.Locate(context.Background(), "org/m")
		if err != nil || snap != filepath.Join(c.CacheDir, "models--org--m", "snapshots", commitA) {
			t.Errorf("offline %v: Locate = %s, %v; want the snapshot", c.Offline, snap, err)
		}
		if m := len(f.requests()); m != n {
			t.Errorf("offline %v: %d requests to the hub", c.Offline, m-n)
		}
	}
}

// Offline, a snapshot that lacks a shard (a download broken off, here or in
// Python) is named with what it lacks, not reported as absent.
func TestLocateOfflineNamesMissingShard(t *testing.T) {
	cache := t.TempDir()
	idx := `{"metadata":{},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`
	writePythonCache(t, cache, "org/big", commitA, map[string]fakeFile{
		"config.json":                      {data: []byte(`{"model_type":"gpt2"}`)},
		"model.safetensors.index.json":     {data: []byte(idx)},
		"model-00001-of-00002.safetensors": {data: weights(100, 1), lfs: true},
	})
	c := &Client{Endpoint: "http://127.0.0.1:1", CacheDir: cache, Offline: true}
	_, err := c.Locate(context.Background(), "org/big")
	if err == nil || !strings.Contains(err.Error(), "lacks model-00002-of-00002.safetensors") ||
		!strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Fatalf("err = %v, want it to name the missing shard and offline mode", err)
	}
}

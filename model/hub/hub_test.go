package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
)

const (
	commitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"
	commitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2"
)

// weights returns n deterministic bytes standing in for a safetensors file.
func weights(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

// tinyRepo is a model repo at commitA: config, LFS weights, vocab and merges;
// no tokenizer.json, tokenizer_config.json or generation_config.json.
func tinyRepo() *fakeRepo {
	return &fakeRepo{
		refs: map[string]string{"main": commitA},
		commits: map[string]map[string]fakeFile{commitA: {
			"config.json":       {data: []byte(`{"model_type":"gpt2","n_layer":2}`)},
			"model.safetensors": {data: weights(40000, 1), lfs: true},
			"vocab.json":        {data: []byte(`{"!":0}`)},
			"merges.txt":        {data: []byte("#version: 0.2\n")},
		}},
	}
}

func (f *fakeHub) client(t *testing.T) *Client {
	return &Client{Endpoint: f.hub.URL + "/", CacheDir: t.TempDir()}
}

// checkSnapshotFile asserts that the snapshot holds file as huggingface_hub
// lays it out: a relative symlink to ../../blobs/ETAG with the right content.
func checkSnapshotFile(t *testing.T, snap, file string, want fakeFile) {
	t.Helper()
	path := filepath.Join(snap, file)
	target, err := os.Readlink(path)
	if err != nil {
		t.Errorf("%s: %v (want a symlink)", file, err)
		return
	}
	if wantTarget := "../../blobs/" + want.etag(); target != wantTarget {
		t.Errorf("%s -> %s, want -> %s", file, target, wantTarget)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.data) {
		t.Errorf("%s: content differs (err %v)", file, err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestLocateDownloadsIntoPythonCacheLayout(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/tiny", repo)
	c := f.client(t)
	c.Token = fakeToken
	var lastDone, lastTotal int64
	c.Progress = func(file string, done, total int64) {
		if file == "model.safetensors" {
			lastDone, lastTotal = done, total
		}
	}
	snap, err := c.Locate(context.Background(), "org/tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.CacheDir, "models--org--tiny")
	if want := filepath.Join(dir, "snapshots", commitA); snap != want {
		t.Fatalf("Locate = %s, want %s", snap, want)
	}
	if ref, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err != nil || string(ref) != commitA {
		t.Errorf("refs/main = %q (%v), want the bare commit hash", ref, err)
	}
	files := repo.commits[commitA]
	for name, ff := range files {
		checkSnapshotFile(t, snap, name, ff)
	}
	for _, absent := range []string{"tokenizer.json", "tokenizer_config.json", "generation_config.json"} {
		if exists(filepath.Join(snap, absent)) {
			t.Errorf("%s in the snapshot, but the repo has none", absent)
		}
		if !exists(filepath.Join(dir, ".no_exist", commitA, absent)) {
			t.Errorf(".no_exist/%s/%s missing", commitA, absent)
		}
	}
	if n := int64(len(files["model.safetensors"].data)); lastDone != n || lastTotal != n {
		t.Errorf("last progress of model.safetensors (%d, %d), want (%d, %d)", lastDone, lastTotal, n, n)
	}
	reqs := f.requests()
	sawCDN := false
	for _, r := range reqs {
		switch r.server {
		case "hub":
			if r.auth != "Bearer "+fakeToken {
				t.Errorf("%s %s on the hub carried Authorization %q, want the token", r.method, r.path, r.auth)
			}
		case "cdn":
			sawCDN = true
			if r.auth != "" {
				t.Errorf("the token leaked to the CDN: %s %s", r.method, r.path)
			}
		}
		// Only the first request names the branch; then the commit it resolved to.
		if r.server == "hub" && r != reqs[0] && !strings.Contains(r.path, "/resolve/"+commitA+"/") {
			t.Errorf("%s %s does not ask for the resolved commit", r.method, r.path)
		}
	}
	if !sawCDN {
		t.Error("the LFS file did not come from the CDN")
	}
	// A second run uses the cache alone.
	snap2, err := c.Locate(context.Background(), "org/tiny")
	if err != nil || snap2 != snap {
		t.Fatalf("second Locate = %s, %v", snap2, err)
	}
	if n := len(f.requests()); n != len(reqs) {
		t.Errorf("second Locate made %d requests, want none", n-len(reqs))
	}
}

func TestLocateRevisions(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	repo.refs["v1"] = commitB
	repo.refs["refs/pr/1"] = commitB
	repo.commits[commitB] = map[string]fakeFile{
		"config.json":       {data: []byte(`{"n_layer":3}`)},
		"model.safetensors": {data: weights(5000, 2), lfs: true},
	}
	f.addRepo("org/tiny", repo)
	c := f.client(t)
	dir := filepath.Join(c.CacheDir, "models--org--tiny")
	ctx := context.Background()

	snap, err := c.Locate(ctx, "org/tiny@v1")
	if err != nil || snap != filepath.Join(dir, "snapshots", commitB) {
		t.Fatalf("@v1: %s, %v", snap, err)
	}
	checkSnapshotFile(t, snap, "config.json", repo.commits[commitB]["config.json"])
	if ref, _ := os.ReadFile(filepath.Join(dir, "refs", "v1")); string(ref) != commitB {
		t.Errorf("refs/v1 = %q, want %s", ref, commitB)
	}

	n := len(f.requests())
	snap, err = c.Locate(ctx, "org/tiny@refs/pr/1")
	if err != nil || snap != filepath.Join(dir, "snapshots", commitB) {
		t.Fatalf("@refs/pr/1: %s, %v", snap, err)
	}
	if first := f.requests()[n]; !strings.Contains(first.path, "/resolve/refs%2Fpr%2F1/config.json") {
		t.Errorf("@refs/pr/1 asked for %s, want the revision escaped as one path segment", first.path)
	}
	if ref, _ := os.ReadFile(filepath.Join(dir, "refs", "refs", "pr", "1")); string(ref) != commitB {
		t.Errorf("refs/refs/pr/1 = %q, want %s", ref, commitB)
	}

	snap, err = c.Locate(ctx, "org/tiny@"+commitA)
	if err != nil || snap != filepath.Join(dir, "snapshots", commitA) {
		t.Fatalf("@commit: %s, %v", snap, err)
	}
	if exists(filepath.Join(dir, "refs", commitA)) {
		t.Error("a ref file was written for a commit hash")
	}
	// A commit hash with a complete snapshot needs no network.
	n = len(f.requests())
	if _, err := c.Locate(ctx, "org/tiny@"+commitA); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != n {
		t.Error("a cached commit hash made requests")
	}

	_, err = c.Locate(ctx, "org/tiny@nope")
	if err == nil || !strings.Contains(err.Error(), `revision "nope" not found`) {
		t.Errorf("unknown revision: err = %v", err)
	}
}

func TestLocateRejectsCorruptContent(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/tiny", repo)
	f.corrupt = true
	c := f.client(t)
	_, err := c.Locate(context.Background(), "org/tiny")
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") || !strings.Contains(err.Error(), "model.safetensors") {
		t.Fatalf("err = %v, want a sha256 mismatch on model.safetensors", err)
	}
	dir := filepath.Join(c.CacheDir, "models--org--tiny")
	if exists(filepath.Join(dir, "snapshots", commitA, "model.safetensors")) {
		t.Error("corrupt weights were linked into the snapshot")
	}
	blob := filepath.Join(dir, "blobs", repo.commits[commitA]["model.safetensors"].etag())
	if exists(blob) || exists(blob+".incomplete") {
		t.Error("corrupt weights left in blobs")
	}
	// Fixed upstream: the next run succeeds.
	f.mu.Lock()
	f.corrupt = false
	f.mu.Unlock()
	snap, err := c.Locate(context.Background(), "org/tiny")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "model.safetensors", repo.commits[commitA]["model.safetensors"])
}

func TestLocateResumesInterruptedDownload(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/tiny", repo)
	want := repo.commits[commitA]["model.safetensors"]
	f.abortAfter = 12345
	c := f.client(t)
	c.Reconnects = -1 // the next Locate resumes
	if _, err := c.Locate(context.Background(), "org/tiny"); err == nil {
		t.Fatal("Locate succeeded through a dropped connection")
	}
	part := filepath.Join(c.CacheDir, "models--org--tiny", "blobs", want.etag()+".incomplete")
	info, err := os.Stat(part)
	if err != nil || info.Size() == 0 || info.Size() > 12345 {
		t.Fatalf("partial blob: %v, %v; want 1..12345 bytes", info, err)
	}
	n := len(f.requests())
	snap, err := c.Locate(context.Background(), "org/tiny")
	if err != nil {
		t.Fatal(err)
	}
	var cdnGets []request
	for _, r := range f.requests()[n:] {
		if r.server == "cdn" && r.method == "GET" {
			cdnGets = append(cdnGets, r)
		}
	}
	if wantRange := "bytes=" + strconv.FormatInt(info.Size(), 10) + "-"; len(cdnGets) != 1 || cdnGets[0].rng != wantRange {
		t.Errorf("resume requests %+v, want one GET with Range %s", cdnGets, wantRange)
	}
	checkSnapshotFile(t, snap, "model.safetensors", want)
	if exists(part) {
		t.Error(".incomplete left behind")
	}
}

func TestLocateCancelKeepsPartialBlob(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/tiny", repo)
	c := f.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Progress = func(file string, done, total int64) {
		if file == "model.safetensors" && done > 0 {
			cancel()
		}
	}
	_, err := c.Locate(ctx, "org/tiny")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	etag := repo.commits[commitA]["model.safetensors"].etag()
	if !exists(filepath.Join(c.CacheDir, "models--org--tiny", "blobs", etag+".incomplete")) {
		t.Error("cancelling dropped the partial blob")
	}
}

func TestLocateOffline(t *testing.T) {
	f := newFakeHub(t)
	f.addRepo("org/tiny", tinyRepo())
	online := f.client(t)
	offline := &Client{Endpoint: f.hub.URL, CacheDir: online.CacheDir, Offline: true}

	_, err := offline.Locate(context.Background(), "org/tiny")
	if err == nil || !strings.Contains(err.Error(), "org/tiny@main") || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") {
		t.Fatalf("err = %v, want one naming org/tiny@main and offline mode", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Fatalf("offline Locate made %d requests", n)
	}
	snap, err := online.Locate(context.Background(), "org/tiny")
	if err != nil {
		t.Fatal(err)
	}
	n := len(f.requests())
	got, err := offline.Locate(context.Background(), "org/tiny")
	if err != nil || got != snap {
		t.Fatalf("offline after download: %s, %v; want %s", got, err, snap)
	}
	if len(f.requests()) != n {
		t.Error("offline Locate made requests")
	}
	if _, err := offline.Locate(context.Background(), "org/tiny@v9"); err == nil {
		t.Error("offline Locate of an uncached revision succeeded")
	}
}

// A cache written by Python's huggingface_hub (built here by hand, as it lays
// files out) is used without a single request.
func TestLocateUsesPythonWrittenCache(t *testing.T) {
	f := newFakeHub(t)
	cache := t.TempDir()
	// As AutoTokenizer and AutoModel leave it: a tokenizer, config and weights.
	dir := writePythonCache(t, cache, "openai-community/gpt2", commitB, map[string]fakeFile{
		"config.json":       {data: []byte(`{"n_layer":12}`)},
		"model.safetensors": {data: weights(3000, 9), lfs: true},
		"vocab.json":        {data: []byte(`{"!":0}`)},
		"merges.txt":        {data: []byte("#version: 0.2\n")},
	})
	c := &Client{Endpoint: f.hub.URL, CacheDir: cache}
	snap, err := c.Locate(context.Background(), "openai-community/gpt2")
	if err != nil || snap != filepath.Join(dir, "snapshots", commitB) {
		t.Fatalf("Locate = %s, %v", snap, err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("Locate made %d requests, want none", n)
	}
}

func TestLocateMissingFiles(t *testing.T) {
	f := newFakeHub(t)
	noConfig := tinyRepo()
	delete(noConfig.commits[commitA], "config.json")
	f.addRepo("org/noconfig", noConfig)
	pickle := tinyRepo()
	delete(pickle.commits[commitA], "model.safetensors")
	pickle.commits[commitA]["pytorch_model.bin"] = fakeFile{data: weights(100, 3), lfs: true}
	f.addRepo("org/pickle", pickle)
	noWeights := tinyRepo()
	delete(noWeights.commits[commitA], "model.safetensors")
	f.addRepo("org/noweights", noWeights)
	c := f.client(t)
	for _, tc := range []struct{ id, want string }{
		{"org/noconfig", "config.json not found in org/noconfig"},
		{"org/pickle", "pytorch_model.bin"},
		{"org/noweights", "no model.safetensors"},
		{"org/absent", "repo org/absent not found"},
	} {
		_, err := c.Locate(context.Background(), tc.id)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to say %q", tc.id, err, tc.want)
		}
	}
}

func TestLocateGatedRepo(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	repo.gated = true
	f.addRepo("org/gated", repo)
	c := f.client(t)
	_, err := c.Locate(context.Background(), "org/gated")
	if err == nil || !strings.Contains(err.Error(), "gated") || !strings.Contains(err.Error(), "HF_TOKEN is not set") ||
		!strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v, want a gated-repo error with the status and the HF_TOKEN hint", err)
	}
	// A token that gives no access is named by where it came from: a stale
	// one in the file huggingface-cli login writes is not HF_TOKEN's.
	c.Token, c.TokenFrom = "hf_stale", "/home/u/.cache/huggingface/token"
	if _, err := c.Locate(context.Background(), "org/gated"); err == nil || !strings.Contains(err.Error(), "the token sent (/home/u/.cache/huggingface/token)") {
		t.Errorf("with a stale token from a file: err = %v, want it to name the file", err)
	}
	c.Token, c.TokenFrom = fakeToken, ""
	if _, err := c.Locate(context.Background(), "org/gated"); err != nil {
		t.Fatalf("with the token: %v", err)
	}
}

func TestLocateShardedWeights(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	files := repo.commits[commitA]
	delete(files, "model.safetensors")
	files["model.safetensors.index.json"] = fakeFile{data: []byte(`{"metadata":{},"weight_map":{
		"wte":"model-00001-of-00002.safetensors","h.0":"model-00001-of-00002.safetensors",
		"h.1":"model-00002-of-00002.safetensors"}}`)}
	files["model-00001-of-00002.safetensors"] = fakeFile{data: weights(2000, 4), lfs: true}
	files["model-00002-of-00002.safetensors"] = fakeFile{data: weights(3000, 5), lfs: true}
	f.addRepo("org/sharded", repo)
	c := f.client(t)
	snap, err := c.Locate(context.Background(), "org/sharded")
	if err != nil {
		t.Fatal(err)
	}
	for name, ff := range files {
		checkSnapshotFile(t, snap, name, ff)
	}
	n := len(f.requests())
	if _, err := c.Locate(context.Background(), "org/sharded"); err != nil || len(f.requests()) != n {
		t.Errorf("second Locate of a sharded snapshot: %v, %d requests", err, len(f.requests())-n)
	}
}

// TestLocateShardsNeedSpace: the shards not yet cached are sized before any
// is downloaded (a partial one counts its rest only), and refused all
// together when the cache's file system cannot hold them.
func TestLocateShardsNeedSpace(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	files := repo.commits[commitA]
	delete(files, "model.safetensors")
	files["model.safetensors.index.json"] = fakeFile{data: []byte(`{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`)}
	first, second := fakeFile{data: weights(2000, 4), lfs: true}, fakeFile{data: weights(3000, 5), lfs: true}
	files["model-00001-of-00002.safetensors"] = first
	files["model-00002-of-00002.safetensors"] = second
	f.addRepo("org/sharded", repo)
	c := f.client(t)
	blobs := filepath.Join(c.CacheDir, "models--org--sharded", "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	const partial = 100
	if err := os.WriteFile(filepath.Join(blobs, second.etag()+download.IncompleteSuffix), second.data[:partial], 0o644); err != nil {
		t.Fatal(err)
	}
	want := int64(len(first.data) + len(second.data) - partial)

	var asked []int64
	old := checkSpace
	t.Cleanup(func() { checkSpace = old })
	free := want - 1
	checkSpace = func(dir string, need int64, what, hint string) error {
		if dir != blobs {
			t.Errorf("space checked in %s, want the blobs folder %s", dir, blobs)
		}
		asked = append(asked, need)
		if need > free {
			return fmt.Errorf("%w: %s needs %d (%s)", download.ErrNoSpace, what, need, hint)
		}
		return nil
	}
	_, err := c.Locate(context.Background(), "org/sharded")
	if !errors.Is(err, download.ErrNoSpace) || !strings.Contains(err.Error(), "2 shards") || !strings.Contains(err.Error(), "HF_HUB_CACHE") {
		t.Fatalf("shards past the free space: %v", err)
	}
	if len(asked) != 1 || asked[0] != want {
		t.Errorf("needs asked %v, want [%d]: both shards, the partial one less its %d bytes", asked, want, partial)
	}
	for _, r := range f.requests() {
		if r.server == "cdn" && r.method == http.MethodGet && (r.path == "/repos/"+first.etag() || r.path == "/repos/"+second.etag()) {
			t.Errorf("a shard was downloaded before the refusal: %s", r.path)
		}
	}
	free = want
	snap, err := c.Locate(context.Background(), "org/sharded")
	if err != nil {
		t.Fatalf("shards that fit: %v", err)
	}
	for name, ff := range files {
		checkSnapshotFile(t, snap, name, ff)
	}
}

// TestLocateShardFailureResumes: a shard the CDN fails to serve fails Locate
// with its name; the next Locate fetches that shard alone.
func TestLocateShardFailureResumes(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	files := repo.commits[commitA]
	delete(files, "model.safetensors")
	files["model.safetensors.index.json"] = fakeFile{data: []byte(`{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`)}
	files["model-00001-of-00002.safetensors"] = fakeFile{data: weights(2000, 4), lfs: true}
	second := fakeFile{data: weights(3000, 5), lfs: true}
	files["model-00002-of-00002.safetensors"] = second
	f.addRepo("org/sharded", repo)
	f.cdnFail = map[string]int{second.etag(): http.StatusInternalServerError}
	c := f.client(t)
	if _, err := c.Locate(context.Background(), "org/sharded"); err == nil ||
		!strings.Contains(err.Error(), "model-00002-of-00002.safetensors") || !strings.Contains(err.Error(), "500") {
		t.Fatalf("err = %v, want one naming the failed shard and the status", err)
	}
	f.mu.Lock()
	f.cdnFail = nil
	f.mu.Unlock()
	n := len(f.requests())
	snap, err := c.Locate(context.Background(), "org/sharded")
	if err != nil {
		t.Fatal(err)
	}
	for name, ff := range files {
		checkSnapshotFile(t, snap, name, ff)
	}
	for _, r := range f.requests()[n:] {
		if r.server == "cdn" && r.method == http.MethodGet && r.path != "/repos/"+second.etag() {
			t.Errorf("second Locate fetched %s again", r.path)
		}
	}
}

// A renamed repo answers with a relative redirect, which is followed; the cache
// folder is named after the id the user gave, as in huggingface_hub.
func TestLocateFollowsRenamedRepo(t *testing.T) {
	f := newFakeHub(t)
	f.addRepo("openai-community/gpt2", tinyRepo())
	f.renamed["gpt2"] = "openai-community/gpt2"
	c := f.client(t)
	snap, err := c.Locate(context.Background(), "gpt2")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(c.CacheDir, "models--gpt2", "snapshots", commitA); snap != want {
		t.Errorf("Locate = %s, want %s", snap, want)
	}
}

func TestLocateLocalPaths(t *testing.T) {
	c := &Client{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir(), Offline: true}
	dir := t.TempDir()
	file := filepath.Join(dir, "gpt2_124M.bin")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, file} {
		if got, err := c.Locate(context.Background(), p); err != nil || got != p {
			t.Errorf("Locate(%s) = %s, %v; want it as is", p, got, err)
		}
	}
	missing := filepath.Join(dir, "nope", "model")
	_, err := c.Locate(context.Background(), missing)
	if err == nil || !strings.Contains(err.Error(), "no such file or folder") {
		t.Errorf("missing path: err = %v", err)
	}
}

func TestLocateUnreachableHub(t *testing.T) {
	// Port 1 on the loopback refuses connections at once.
	c := &Client{Endpoint: "http://127.0.0.1:1", CacheDir: t.TempDir()}
	_, err := c.Locate(context.Background(), "org/tiny")
	if err == nil || !strings.Contains(err.Error(), "cannot reach the hub http://127.0.0.1:1") ||
		!strings.Contains(err.Error(), "org/tiny@main") {
		t.Errorf("err = %v, want one saying the hub is unreachable and naming the id", err)
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct{ in, repo, rev string }{
		{"gpt2", "gpt2", "main"},
		{"gpt2-medium", "gpt2-medium", "main"},
		{"openai-community/gpt2", "openai-community/gpt2", "main"},
		{"org/name@v1.0", "org/name", "v1.0"},
		{"org/name@refs/pr/12", "org/name", "refs/pr/12"},
		{"a/b_c.d@" + commitA, "a/b_c.d", commitA},
	} {
		repo, rev, err := ParseID(tc.in)
		if err != nil || repo != tc.repo || rev != tc.rev {
			t.Errorf("ParseID(%q) = %q, %q, %v; want %q, %q", tc.in, repo, rev, err, tc.repo, tc.rev)
		}
	}
	for _, bad := range []string{
		"", "@main", "org/", "/name", "a/b/c", "org/name@", "org/na me", "org/-name", "org/name.",
		"org--x/name", "org/na..me", "org/name.git", "org/name@../../etc", "org/name@a//b", `org/name@a\b`,
		"./model", "~/models/gpt2", "org/" + strings.Repeat("x", 97),
	} {
		if _, _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted a malformed id", bad)
		}
	}
}

func TestFromEnv(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"HF_ENDPOINT", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE",
		"TRANSFORMERS_OFFLINE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("HF_HOME", home)
	t.Setenv("HOME", home)

	c := FromEnv()
	if c.Endpoint != DefaultEndpoint || c.Token != "" || c.Offline || c.CacheDir != filepath.Join(home, "hub") {
		t.Errorf("defaults with HF_HOME: %+v", c)
	}
	t.Setenv("HF_HOME", "")
	if got, want := FromEnv().CacheDir, filepath.Join(home, ".cache", "huggingface", "hub"); got != want {
		t.Errorf("CacheDir with nothing set = %s, want %s", got, want)
	}
	t.Setenv("HF_HOME", home)
	if err := os.WriteFile(filepath.Join(home, "token"), []byte("hf_from_file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := FromEnv(); c.Token != "hf_from_file" || c.TokenFrom != filepath.Join(home, "token") {
		t.Errorf("token from HF_HOME/token = %q from %q", c.Token, c.TokenFrom)
	}

	t.Setenv("HF_ENDPOINT", "http://mirror.example/")
	t.Setenv("HF_TOKEN", "hf_env")
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_HUB_CACHE", filepath.Join(home, "elsewhere"))
	c = FromEnv()
	if c.Endpoint != "http://mirror.example" || c.Token != "hf_env" || c.TokenFrom != "HF_TOKEN" || !c.Offline || c.CacheDir != filepath.Join(home, "elsewhere") {
		t.Errorf("from env: %+v", c)
	}
	t.Setenv("HF_HUB_OFFLINE", "0")
	if FromEnv().Offline {
		t.Error("HF_HUB_OFFLINE=0 turned offline mode on")
	}
}

func TestHubErrorsWrapHTTPError(t *testing.T) {
	f := newFakeHub(t)
	c := f.client(t)
	_, err := c.Locate(context.Background(), "org/absent")
	var he *download.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 || he.ErrorCode != "RepoNotFound" ||
		!strings.Contains(err.Error(), f.hub.URL+"/org/absent/resolve/main/config.json") {
		t.Errorf("err = %v, want a wrapped *download.HTTPError (401 RepoNotFound) naming the URL", err)
	}
}

// TestLocateReconnectsDroppedDownload: a CDN connection dropped mid-file is
// resumed within the same Locate, from where it broke, and the blob checks out.
func TestLocateReconnectsDroppedDownload(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/tiny", repo)
	want := repo.commits[commitA]["model.safetensors"]
	f.abortAfter = 12345
	c := f.client(t)
	snap, err := c.Locate(context.Background(), "org/tiny")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "model.safetensors", want)
	var rngs []string
	for _, r := range f.requests() {
		if r.server == "cdn" && r.method == "GET" {
			rngs = append(rngs, r.rng)
		}
	}
	if len(rngs) != 2 || rngs[0] != "" || rngs[1] != "bytes=12345-" {
		t.Errorf("CDN GETs with Range %q, want a whole one and bytes=12345-", rngs)
	}
}

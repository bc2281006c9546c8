package hub

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
)

// The hub token goes only to the hub's own scheme, host and port: a GET that
// the hub redirects to another port of the same host (which Go's client
// treats as the same host) arrives there without it.
func TestTokenNotSentToAnotherPort(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	repo.gated = true
	f.addRepo("org/gated", repo)
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "not here", http.StatusForbidden)
	}))
	defer other.Close()
	if !strings.HasPrefix(other.URL, "http://127.0.0.1:") || !strings.HasPrefix(f.hub.URL, "http://127.0.0.1:") {
		t.Fatalf("want both on 127.0.0.1: %s %s", other.URL, f.hub.URL)
	}
	f.mu.Lock()
	f.getRedirect = other.URL
	f.mu.Unlock()
	c := f.client(t)
	c.Token = fakeToken
	_, err := c.Locate(context.Background(), "org/gated")
	if err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("err = %v, want the redirected GET of config.json refused", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the redirect target was never asked")
	}
	for _, a := range seen {
		if a != "" {
			t.Errorf("the redirect target on another port got Authorization %q", a)
		}
	}
	// The hub itself did get the token.
	for _, r := range f.requests() {
		if r.server == "hub" && r.auth != "Bearer "+fakeToken {
			t.Errorf("hub request %s %s without the token", r.method, r.path)
		}
	}
}

// Several downloads of one repo into one cache at once all succeed: a lock
// per blob (as huggingface_hub takes) makes the others wait for the first and
// then find the blob; before, they shared one .incomplete file and all but
// one failed to rename it.
func TestLocateConcurrentDownloadsIntoOneCache(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/model", repo)
	f.mu.Lock()
	f.cdnDelay = 200 * time.Millisecond
	f.mu.Unlock()
	cache := t.TempDir()
	const n = 4
	snaps := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &Client{Endpoint: f.hub.URL, CacheDir: cache}
			snaps[i], errs[i] = c.Locate(context.Background(), "org/model")
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("download %d: %v", i, errs[i])
			continue
		}
		for name, ff := range repo.commits[commitA] {
			checkSnapshotFile(t, snaps[i], name, ff)
		}
	}
	gets := 0
	for _, r := range f.requests() {
		if r.server == "cdn" && r.method == http.MethodGet {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("%d downloads of the weights, want 1", gets)
	}
}

// A non-LFS file (config.json) whose content does not match its git blob
// sha1 ETag is refused and not cached.
func TestLocateRejectsWrongGitBlob(t *testing.T) {
	f := newFakeHub(t)
	f.addRepo("org/model", tinyRepo())
	f.mu.Lock()
	f.corruptSmall = true
	f.mu.Unlock()
	c := f.client(t)
	_, err := c.Locate(context.Background(), "org/model")
	if err == nil || !strings.Contains(err.Error(), "config.json") || !strings.Contains(err.Error(), "sha1") {
		t.Fatalf("err = %v, want a git sha1 mismatch naming config.json", err)
	}
	blobs, _ := filepath.Glob(filepath.Join(c.CacheDir, "*", "blobs", "*"))
	if len(blobs) != 0 {
		t.Errorf("blobs left in the cache: %v", blobs)
	}
	// Served correctly, it is cached.
	f.mu.Lock()
	f.corruptSmall = false
	f.mu.Unlock()
	if _, err := c.Locate(context.Background(), "org/model"); err != nil {
		t.Fatal(err)
	}
}

// cachedBlobs lists what the cache holds under blobs/, partial files included.
func cachedBlobs(t *testing.T, c *Client) []string {
	t.Helper()
	blobs, err := filepath.Glob(filepath.Join(c.CacheDir, "*", "blobs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return blobs
}

// A file whose ETag is neither a sha256 nor a git blob sha1 cannot be
// checked: it is refused, with an error naming the file, the ETag and the way
// to accept it anyway, before it is downloaded; with InsecureSkipVerify it is
// used. Before, such a file was used unchecked.
func TestLocateRefusesUnverifiableETag(t *testing.T) {
	for _, tc := range []struct {
		file string
		ff   fakeFile
	}{
		{"config.json", fakeFile{data: []byte(`{"n_layer":2}`), tag: "cfg-v1"}},
		// An S3-style multipart etag as an LFS file's X-Linked-Etag.
		{"model.safetensors", fakeFile{data: weights(3000, 9), lfs: true, tag: "0123abcd-4"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := newFakeHub(t)
			repo := tinyRepo()
			repo.commits[commitA][tc.file] = tc.ff
			f.addRepo("org/model", repo)
			c := f.client(t)
			_, err := c.Locate(context.Background(), "org/model")
			if err == nil {
				t.Fatal("Locate used a file it cannot verify")
			}
			for _, want := range []string{tc.file, `"` + tc.ff.tag + `"`, "cannot be verified", "InsecureSkipVerify", "--insecure-skip-verify"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			for _, b := range cachedBlobs(t, c) {
				if strings.Contains(b, tc.ff.tag) {
					t.Errorf("%s in the cache", b)
				}
			}
			for _, r := range f.requests() {
				if r.method == http.MethodGet && (strings.HasSuffix(r.path, "/"+tc.file) || strings.HasSuffix(r.path, "/"+tc.ff.tag)) {
					t.Errorf("%s was downloaded: %s %s", tc.file, r.server, r.path)
				}
			}
			c.InsecureSkipVerify = true
			snap, err := c.Locate(context.Background(), "org/model")
			if err != nil {
				t.Fatal(err)
			}
			checkSnapshotFile(t, snap, tc.file, tc.ff)
		})
	}
}

// A download reads no more than the size the hub's HEAD announced: a CDN that
// sends the content and then junk, without Content-Length, is cut off.
// Before, everything it sent was written to disk.
func TestLocateCapsDownloadAtAnnouncedSize(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/model", repo)
	f.mu.Lock()
	f.cdnChunked, f.cdnJunk = true, true
	f.mu.Unlock()
	c := f.client(t)
	_, err := c.Locate(context.Background(), "org/model")
	if err == nil || !strings.Contains(err.Error(), "model.safetensors") || !strings.Contains(err.Error(), "sent more than the 40000 bytes it announced") {
		t.Fatalf("err = %v, want model.safetensors cut off at the 40000 bytes announced", err)
	}
	for _, b := range cachedBlobs(t, c) {
		if strings.Contains(b, repo.commits[commitA]["model.safetensors"].etag()) {
			t.Errorf("%s left in the cache", b)
		}
	}
	// Chunked but no more than announced: fine.
	f.mu.Lock()
	f.cdnJunk = false
	f.mu.Unlock()
	snap, err := c.Locate(context.Background(), "org/model")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "model.safetensors", repo.commits[commitA]["model.safetensors"])
}

// An LFS file whose size neither the HEAD (X-Linked-Size) nor the GET
// (Content-Length) announces is refused; one the GET announces downloads.
func TestLocateRefusesLFSFileOfUnknownSize(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/model", repo)
	f.mu.Lock()
	f.noLinkedSize, f.cdnChunked = true, true
	f.mu.Unlock()
	c := f.client(t)
	_, err := c.Locate(context.Background(), "org/model")
	if err == nil || !strings.Contains(err.Error(), "model.safetensors") || !strings.Contains(err.Error(), "announced no size") {
		t.Fatalf("err = %v, want model.safetensors refused for want of a size", err)
	}
	f.mu.Lock()
	f.cdnChunked = false
	f.mu.Unlock()
	snap, err := c.Locate(context.Background(), "org/model")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "model.safetensors", repo.commits[commitA]["model.safetensors"])
}

// A download whose data stops gives up after Client.StallTimeout, saying that
// it stalled and resumes; the next Locate resumes it. Before, it waited
// forever.
func TestLocateStalledDownloadResumes(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/model", repo)
	f.mu.Lock()
	f.cdnStallAfter = 10000
	f.mu.Unlock()
	c := f.client(t)
	c.StallTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.Locate(ctx, "org/model")
	if !errors.Is(err, download.ErrStalled) || !strings.Contains(err.Error(), "model.safetensors") || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("err = %v, want model.safetensors stalled, to resume", err)
	}
	want := repo.commits[commitA]["model.safetensors"]
	part := filepath.Join(c.CacheDir, "models--org--model", "blobs", want.etag()+download.IncompleteSuffix)
	if info, err := os.Stat(part); err != nil || info.Size() != 10000 {
		t.Fatalf("partial blob %v, %v; want the 10000 bytes that came", info, err)
	}
	f.mu.Lock()
	f.cdnStallAfter = 0
	f.mu.Unlock()
	n := len(f.requests())
	snap, err := c.Locate(ctx, "org/model")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "model.safetensors", want)
	for _, r := range f.requests()[n:] {
		if r.server == "cdn" && r.method == http.MethodGet && r.rng != "bytes=10000-" {
			t.Errorf("resumed with Range %q, want bytes=10000-", r.rng)
		}
	}
}

// A hub answering 429 and a CDN answering 503 are asked again after the
// Retry-After they send; one that asks for more than Client.MaxRetryWait is
// reported at once, and cancelling ends the wait. Before, the first 429 was
// an error.
func TestLocateRetriesRateLimits(t *testing.T) {
	f := newFakeHub(t)
	repo := tinyRepo()
	f.addRepo("org/model", repo)
	f.mu.Lock()
	f.hubBusy, f.cdnBusy, f.retryAfter = 2, 2, "0"
	f.mu.Unlock()
	c := f.client(t)
	snap, err := c.Locate(context.Background(), "org/model")
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshotFile(t, snap, "model.safetensors", repo.commits[commitA]["model.safetensors"])
	f.mu.Lock()
	if f.busyAnswers != 4 {
		t.Errorf("%d busy answers sent, want 4", f.busyAnswers)
	}
	f.hubBusy, f.retryAfter = 1000, "120"
	f.mu.Unlock()

	c = f.client(t)
	c.MaxRetryWait = time.Second
	n := len(f.requests())
	_, err = c.Locate(context.Background(), "org/model")
	var he *download.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusTooManyRequests || !strings.Contains(err.Error(), "config.json") ||
		!strings.Contains(err.Error(), "retry after 120 s") {
		t.Fatalf("err = %v, want a 429 on config.json saying retry after 120 s", err)
	}
	if got := len(f.requests()) - n; got != 1 {
		t.Errorf("%d requests, want 1 (no retry before the time asked)", got)
	}

	f.mu.Lock()
	f.retryAfter = "30"
	f.mu.Unlock()
	c = f.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Locate(ctx, "org/model"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v", d)
	}
}

// A safetensors index larger than maxIndexBytes (a wrong or hostile file) is
// refused by its size, not read whole into memory. The file is sparse.
func TestReadShardsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors.index.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(maxIndexBytes + 1)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readShards(path); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("readShards: %v, want an error about its size", err)
	}
	good := `{"weight_map": {"a": "model-00002-of-00002.safetensors", "b": "model-00001-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}}`
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	shards, err := readShards(path)
	if err != nil || strings.Join(shards, " ") != "model-00001-of-00002.safetensors model-00002-of-00002.safetensors" {
		t.Fatalf("readShards: %q, %v", shards, err)
	}
}

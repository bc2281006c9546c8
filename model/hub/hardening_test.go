package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

package hub

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
)

// waits collects Client.Waiting reports and fails the test on one made after
// the call it belongs to has returned.
type waits struct {
	t      *testing.T
	mu     sync.Mutex
	got    []Wait
	closed bool
	more   chan struct{} // a report arrived
}

func newWaits(t *testing.T) *waits { return &waits{t: t, more: make(chan struct{}, 1000)} }

func (w *waits) add(x Wait) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.t.Errorf("report after the call returned: %v", x)
	}
	w.got = append(w.got, x)
	w.more <- struct{}{}
}

// wait blocks until n reports of kind have arrived (or fails after a generous
// limit). Reports of other kinds may come first: a fake server can be slow to
// answer on a busy machine.
func (w *waits) wait(n int, kind WaitKind) {
	deadline := time.After(20 * time.Second)
	for len(ofKind(w.list(), kind)) < n {
		select {
		case <-w.more:
		case <-deadline:
			w.t.Fatalf("only %d Wait reports of kind %s: %v", len(ofKind(w.list(), kind)), kind, w.list())
		}
	}
}

func ofKind(ws []Wait, kind WaitKind) []Wait {
	var out []Wait
	for _, w := range ws {
		if w.Kind == kind {
			out = append(out, w)
		}
	}
	return out
}

// close marks the call returned and gives the reports made.
func (w *waits) close() []Wait {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return append([]Wait(nil), w.got...)
}

func (w *waits) list() []Wait {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Wait(nil), w.got...)
}

// checkSeries checks reports of one wait: the kind, host and file asked for,
// and a silence that grows by about the interval each time.
func checkSeries(t *testing.T, all []Wait, kind WaitKind, host, file string, interval time.Duration) []Wait {
	t.Helper()
	got := ofKind(all, kind)
	if len(got) < 2 {
		t.Fatalf("%d reports, want at least 2: %v", len(got), got)
	}
	for i, w := range got {
		if w.Kind != kind || w.Host != host || w.File != file {
			t.Errorf("report %d = %s %q %q (%v), want kind %s, host %s, file %s", i, w.Kind, w.Host, w.File, w, kind, host, file)
		}
		if w.Silence < interval {
			t.Errorf("report %d after %v of silence, before the interval %v", i, w.Silence, interval)
		}
		if i > 0 && w.Silence <= got[i-1].Silence {
			t.Errorf("report %d: silence %v does not grow from %v", i, w.Silence, got[i-1].Silence)
		}
	}
	return got
}

// stallServer answers nothing until its client goes away.
func stallServer(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); s.Close() })
	return s
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// A hub that never answers is reported, with host, file and time waited, every
// interval, until the user gives up; nothing is reported after Locate returns.
func TestWaitingForSilentHub(t *testing.T) {
	s := stallServer(t)
	w := newWaits(t)
	c := &Client{Endpoint: s.URL, CacheDir: t.TempDir(), Waiting: w.add, WaitInterval: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Locate(ctx, "org/model"); errc <- err }()
	w.wait(3, WaitAnswer)
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	got := checkSeries(t, w.close(), WaitAnswer, hostOf(t, s.URL), "config.json", 10*time.Millisecond)
	if got[0].Timeout != time.Minute {
		t.Errorf("timeout %v, want download.DefaultClient's minute for response headers", got[0].Timeout)
	}
	msg := got[0].String()
	for _, part := range []string{hostOf(t, s.URL), "config.json", "to answer", "gives up after 1m0s"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
}

// The reports go on until the client's own timeout ends the request, and say
// when that is.
func TestWaitingUntilTimeout(t *testing.T) {
	s := stallServer(t)
	w := newWaits(t)
	const timeout = 300 * time.Millisecond
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = timeout
	c := &Client{Endpoint: s.URL, CacheDir: t.TempDir(), HTTP: &http.Client{Transport: tr},
		Waiting: w.add, WaitInterval: 20 * time.Millisecond}
	_, err := c.Locate(context.Background(), "org/model")
	if err == nil || !strings.Contains(err.Error(), "cannot reach the hub") {
		t.Errorf("err = %v, want the hub unreachable", err)
	}
	got := checkSeries(t, w.close(), WaitAnswer, hostOf(t, s.URL), "config.json", 20*time.Millisecond)
	for _, x := range got {
		if x.Timeout != timeout {
			t.Errorf("report %+v: timeout %v, want %v", x, x.Timeout, timeout)
		}
	}
	if last := got[len(got)-1]; last.Silence > 2*timeout {
		t.Errorf("last report after %v, long after the %v timeout", last.Silence, timeout)
	}
}

// A download whose data stops is reported as such, with the bytes so far and
// the stall timeout that ends it.
func TestWaitingForStalledData(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	body := []byte(`{"n_layer": 1}`)
	etag := fakeFile{data: body}.etag()
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Repo-Commit", commit)
		w.Header().Set("ETag", `"`+etag+`"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		w.Write(body[:5])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); s.Close() })
	w := newWaits(t)
	c := &Client{Endpoint: s.URL, CacheDir: t.TempDir(), Waiting: w.add, WaitInterval: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Locate(ctx, "org/model"); errc <- err }()
	// On a busy machine a report can come between the response's headers and
	// its first 5 bytes (at 0 bytes); the 5 bytes then start a new silence.
	// The series checked is the one after them.
	after5 := func(ws []Wait) []Wait {
		var out []Wait
		for _, x := range ofKind(ws, WaitData) {
			if x.Done == 5 {
				out = append(out, x)
			}
		}
		return out
	}
	for deadline := time.Now().Add(20 * time.Second); len(after5(w.list())) < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d reports after the first 5 bytes: %v", len(after5(w.list())), w.list())
		}
		select {
		case <-w.more:
		case <-time.After(time.Second):
		}
	}
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	got := checkSeries(t, after5(w.close()), WaitData, hostOf(t, s.URL), "config.json", 10*time.Millisecond)
	for _, x := range got {
		if x.Done != 5 || x.Timeout != download.DefaultStallTimeout {
			t.Errorf("report %+v: want 5 bytes done and the default stall timeout", x)
		}
	}
	if msg := got[0].String(); !strings.Contains(msg, "sent nothing more of config.json") || !strings.Contains(msg, "at 5 bytes") ||
		!strings.Contains(msg, "gives up after 1m0s") || !strings.Contains(msg, "a rerun resumes") {
		t.Errorf("message %q", msg)
	}
}

// Waiting for another download of the same file (its lock) is reported, and
// ends when that download does.
func TestWaitingForLock(t *testing.T) {
	f := newFakeHub(t)
	cfg := fakeFile{data: []byte(`{"n_layer": 1}`)}
	f.addRepo("org/model", &fakeRepo{refs: map[string]string{"main": commitA},
		commits: map[string]map[string]fakeFile{commitA: {"config.json": cfg,
			"model.safetensors": {data: []byte("weights"), lfs: true}}}})
	dir := t.TempDir()
	lock := filepath.Join(dir, ".locks", "models--org--model", cfg.etag()+".lock")
	unlock, err := lockFile(context.Background(), lock)
	if err != nil {
		t.Fatal(err)
	}
	w := newWaits(t)
	c := &Client{Endpoint: f.hub.URL, CacheDir: dir, Waiting: w.add, WaitInterval: 10 * time.Millisecond}
	errc := make(chan error, 1)
	go func() { _, err := c.Locate(context.Background(), "org/model"); errc <- err }()
	w.wait(2, WaitLock)
	unlock()
	if err := <-errc; err != nil {
		t.Fatalf("Locate after the lock was released: %v", err)
	}
	got := checkSeries(t, w.close(), WaitLock, "", "config.json", 10*time.Millisecond)
	if got[0].Lock != lock || !strings.Contains(got[0].String(), "another download of config.json") {
		t.Errorf("report %+v (%q), want lock %s", got[0], got[0].String(), lock)
	}
}

// Without a Waiting callback nothing is watched (and nothing breaks).
func TestNoWaitingCallback(t *testing.T) {
	var c Client
	w := c.watch(Wait{Kind: WaitAnswer}, "http://example.invalid/")
	if w != nil {
		t.Fatal("a waiter without a callback")
	}
	w.active(WaitData, 1, 0)
	w.stop()
}

package download

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// flood writes data, then garbage in chunks (no Content-Length: chunked
// encoding) until the client goes away or limit bytes have gone.
func flood(w http.ResponseWriter, r *http.Request, data []byte, limit int) {
	w.Write(data)
	w.(http.Flusher).Flush()
	junk := bytes.Repeat([]byte{0xee}, 32<<10)
	for sent := len(data); sent < limit && r.Context().Err() == nil; sent += len(junk) {
		if _, err := w.Write(junk); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// A chunked 206 answer reads no more than its Content-Range announces: a
// server that keeps sending does not fill the disk.
func TestFileCapsBodyAtContentRange(t *testing.T) {
	data, sum := content(1000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes 100-999/1000")
		w.WriteHeader(http.StatusPartialContent)
		flood(w, r, data[100:], 8<<20)
	}))
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(dest+IncompleteSuffix, data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	err := File(context.Background(), s.URL+"/f", dest, Options{SHA256: sum})
	if err == nil || !strings.Contains(err.Error(), "sent more than the 1000 bytes it announced") || !strings.Contains(err.Error(), s.URL+"/f") {
		t.Fatalf("err = %v, want the URL and \"sent more than the 1000 bytes it announced\"", err)
	}
	assertMissing(t, dest)
	assertMissing(t, dest+IncompleteSuffix)
}

// Options.Size (the size a HEAD announced) caps a body that announces none, and
// a response announcing another size is refused before its body is read.
func TestFileCapsBodyAtOptionsSize(t *testing.T) {
	data, _ := content(1000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/lying" {
			w.Header().Set("Content-Length", "5000")
			w.Write(append(data, make([]byte, 4000)...))
			return
		}
		flood(w, r, data, 8<<20)
	}))
	defer s.Close()
	dir := t.TempDir()
	var last int64
	err := File(context.Background(), s.URL+"/chunked", filepath.Join(dir, "a"), Options{Size: 1000,
		Progress: func(done, total int64) { last = total }})
	if err == nil || !strings.Contains(err.Error(), "sent more than the 1000 bytes it announced") {
		t.Fatalf("err = %v, want \"sent more than the 1000 bytes it announced\"", err)
	}
	if last != 1000 {
		t.Errorf("progress total %d, want Options.Size 1000", last)
	}
	assertMissing(t, filepath.Join(dir, "a"+IncompleteSuffix))
	err = File(context.Background(), s.URL+"/lying", filepath.Join(dir, "b"), Options{Size: 1000})
	if err == nil || !strings.Contains(err.Error(), "announces 5000 bytes, not the 1000 expected") {
		t.Fatalf("err = %v, want a size mismatch", err)
	}
	assertMissing(t, filepath.Join(dir, "b"+IncompleteSuffix))
}

// A body whose size nothing announces is read up to Options.MaxSize, or
// refused when MaxSize is negative; one within the cap downloads.
func TestFileUnannouncedSize(t *testing.T) {
	data, sum := content(3000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/endless" {
			flood(w, r, data, 8<<20)
			return
		}
		w.Write(data[:1000]) // chunked: no Content-Length
		w.(http.Flusher).Flush()
		w.Write(data[1000:])
	}))
	defer s.Close()
	dir := t.TempDir()
	if err := File(context.Background(), s.URL+"/small", filepath.Join(dir, "ok"), Options{SHA256: sum, MaxSize: 5000}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "ok")); !bytes.Equal(got, data) {
		t.Fatal("file differs from the source")
	}
	err := File(context.Background(), s.URL+"/endless", filepath.Join(dir, "capped"), Options{MaxSize: 5000})
	if err == nil || !strings.Contains(err.Error(), "sent more than 5000 bytes without announcing a size") {
		t.Fatalf("err = %v, want the 5000-byte cap", err)
	}
	assertMissing(t, filepath.Join(dir, "capped"+IncompleteSuffix))
	err = File(context.Background(), s.URL+"/small", filepath.Join(dir, "refused"), Options{MaxSize: -1})
	if err == nil || !strings.Contains(err.Error(), "announced no size") || !strings.Contains(err.Error(), s.URL+"/small") {
		t.Fatalf("err = %v, want a refusal naming the URL", err)
	}
	assertMissing(t, filepath.Join(dir, "refused"+IncompleteSuffix))
}

// trickler sends head, then one byte every gap until told to stop sending
// slowly; a later request (Range) is served normally.
type trickler struct {
	data []byte
	head int
	gap  time.Duration
	mu   sync.Mutex
	fast bool
	rngs []string
}

func (tr *trickler) serve(w http.ResponseWriter, r *http.Request) {
	tr.mu.Lock()
	fast := tr.fast
	tr.rngs = append(tr.rngs, r.Header.Get("Range"))
	tr.mu.Unlock()
	if fast {
		http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(tr.data))
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(tr.data)))
	w.Write(tr.data[:tr.head])
	w.(http.Flusher).Flush()
	for i := tr.head; i < len(tr.data); i++ {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(tr.gap):
		}
		w.Write(tr.data[i : i+1])
		w.(http.Flusher).Flush()
	}
}

// A body that stops, or trickles slower than StallMinBytes per StallTimeout,
// fails with ErrStalled and keeps the partial file, which a later call
// resumes.
func TestFileStalledBodyTimesOutAndResumes(t *testing.T) {
	for _, tc := range []struct {
		name string
		gap  time.Duration
	}{
		{"silent", time.Hour},
		{"trickle", 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, sum := content(5000)
			tr := &trickler{data: data, head: 1500, gap: tc.gap}
			s := httptest.NewServer(http.HandlerFunc(tr.serve))
			defer s.Close()
			dest := filepath.Join(t.TempDir(), "file.bin")
			start := time.Now()
			err := File(context.Background(), s.URL, dest, Options{SHA256: sum, StallTimeout: 200 * time.Millisecond})
			if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "resume") || !strings.Contains(err.Error(), s.URL) {
				t.Fatalf("err = %v, want ErrStalled naming the URL and saying it resumes", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("gave up after %v", d)
			}
			info, err := os.Stat(dest + IncompleteSuffix)
			if err != nil || info.Size() < 1500 || info.Size() >= 5000 {
				t.Fatalf("partial file %v, %v: want the bytes that arrived kept", info, err)
			}
			tr.mu.Lock()
			tr.fast = true
			tr.mu.Unlock()
			if err := File(context.Background(), s.URL, dest, Options{SHA256: sum, StallTimeout: 200 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, dest); !bytes.Equal(got, data) {
				t.Fatal("resumed file differs from the source")
			}
			tr.mu.Lock()
			defer tr.mu.Unlock()
			if want := "bytes=" + strconv.FormatInt(info.Size(), 10) + "-"; len(tr.rngs) != 2 || tr.rngs[1] != want {
				t.Errorf("Range headers %q, want the second %q", tr.rngs, want)
			}
		})
	}
}

// A body that keeps arriving is not timed out, however long it takes.
func TestFileSlowButSteadyBodyIsNotStalled(t *testing.T) {
	data, sum := content(80 << 10)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		for i := 0; i < len(data); i += 2 << 10 {
			w.Write(data[i : i+2<<10])
			w.(http.Flusher).Flush()
			time.Sleep(25 * time.Millisecond)
		}
	}))
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "file.bin")
	// 40 pieces 25 ms apart: a second in all, over three times the timeout.
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum, StallTimeout: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

// busy answers the first n requests with status and Retry-After (when not
// empty), and then serves data.
type busy struct {
	n          int
	status     int
	retryAfter string
	data       []byte
	mu         sync.Mutex
	count      int
}

func (b *busy) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.count++
	count := b.count
	b.mu.Unlock()
	if count <= b.n {
		if b.retryAfter != "" {
			w.Header().Set("Retry-After", b.retryAfter)
		}
		http.Error(w, "slow down", b.status)
		return
	}
	http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(b.data))
}

func (b *busy) requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count
}

// 429 and 503 are retried after the Retry-After the server asks for (seconds
// or an HTTP date; no header: a backoff capped at MaxWait), a bounded number
// of times.
func TestFileRetriesRateLimits(t *testing.T) {
	data, sum := content(2000)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name       string
		n, status  int
		retryAfter string
		retry      Retry
		requests   int
		ok         bool
	}{
		{"429 seconds", 2, http.StatusTooManyRequests, "0", Retry{}, 3, true},
		{"429 date", 1, http.StatusTooManyRequests, past, Retry{}, 2, true},
		{"503 backoff", 2, http.StatusServiceUnavailable, "", Retry{MaxWait: 20 * time.Millisecond}, 3, true},
		{"bounded", 100, http.StatusTooManyRequests, "0", Retry{}, DefaultRetries + 1, false},
		{"max 1", 100, http.StatusTooManyRequests, "0", Retry{Max: 1}, 2, false},
		{"off", 100, http.StatusTooManyRequests, "0", Retry{Max: -1}, 1, false},
		{"too long", 100, http.StatusTooManyRequests, "120", Retry{MaxWait: time.Second}, 1, false},
		{"500 not retried", 100, http.StatusInternalServerError, "0", Retry{}, 1, false},
		{"502 backoff", 1, http.StatusBadGateway, "", Retry{MaxWait: 20 * time.Millisecond}, 2, true},
		{"504 backoff", 2, http.StatusGatewayTimeout, "", Retry{MaxWait: 20 * time.Millisecond}, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &busy{n: tc.n, status: tc.status, retryAfter: tc.retryAfter, data: data}
			s := httptest.NewServer(http.HandlerFunc(b.serve))
			defer s.Close()
			dest := filepath.Join(t.TempDir(), "file.bin")
			err := File(context.Background(), s.URL, dest, Options{SHA256: sum, Retry: tc.retry})
			if got := b.requests(); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if got := readFile(t, dest); !bytes.Equal(got, data) {
					t.Fatal("file differs from the source")
				}
				return
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != tc.status {
				t.Fatalf("err = %v, want an *HTTPError %d", err, tc.status)
			}
			if tc.status == http.StatusTooManyRequests && !strings.Contains(err.Error(), "retry after "+tc.retryAfter) {
				t.Errorf("err = %v, want the server's Retry-After", err)
			}
		})
	}
}

// Cancelling ctx ends a wait for Retry-After at once.
func TestFileRetryWaitEndsWithContext(t *testing.T) {
	data, _ := content(100)
	b := &busy{n: 100, status: http.StatusTooManyRequests, retryAfter: "30", data: data}
	s := httptest.NewServer(http.HandlerFunc(b.serve))
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := File(ctx, s.URL, filepath.Join(t.TempDir(), "f"), Options{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), s.URL) {
		t.Fatalf("err = %v, want the URL and context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v", d)
	}
}

func TestRetryWait(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	resp := func(status int, after string) *http.Response {
		h := http.Header{}
		if after != "" {
			h.Set("Retry-After", after)
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	for _, tc := range []struct {
		status  int
		after   string
		attempt int
		r       Retry
		want    time.Duration
		ok      bool
	}{
		{429, "7", 0, Retry{}, 7 * time.Second, true},
		{503, "60", 0, Retry{}, time.Minute, true},
		{429, "61", 0, Retry{}, 0, false}, // longer than DefaultMaxRetryWait
		{429, now.Add(30 * time.Second).Format(http.TimeFormat), 0, Retry{}, 30 * time.Second, true},
		{429, now.Add(-time.Hour).Format(http.TimeFormat), 0, Retry{}, 0, true},
		{429, "", 0, Retry{}, time.Second, true},
		{429, "", 2, Retry{}, 4 * time.Second, true},
		{429, "", 3, Retry{MaxWait: 5 * time.Second}, 5 * time.Second, true},
		{429, "soon", 1, Retry{}, 2 * time.Second, true}, // malformed: as if absent
		{429, "-3", 0, Retry{}, time.Second, true},
		{429, "99999999999999999", 0, Retry{}, 0, false},
		{429, "1", DefaultRetries, Retry{}, 0, false},
		{429, "1", 2, Retry{Max: 2}, 0, false},
		{500, "1", 0, Retry{}, 0, false},
		{502, "", 1, Retry{}, 2 * time.Second, true},
		{504, "3", 0, Retry{}, 3 * time.Second, true},
		{404, "", 0, Retry{}, 0, false},
	} {
		got, ok := tc.r.wait(resp(tc.status, tc.after), tc.attempt, now)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%d Retry-After %q attempt %d %+v: %v, %v; want %v, %v", tc.status, tc.after, tc.attempt, tc.r, got, ok, tc.want, tc.ok)
		}
	}
}

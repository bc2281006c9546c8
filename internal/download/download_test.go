package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// content returns n deterministic bytes and their sha256.
func content(n int) ([]byte, string) {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// server serves data with Range support (http.ServeContent) and records the
// Range and Authorization header of every request.
type server struct {
	*httptest.Server
	data        []byte
	ignoreRange bool
	mu          sync.Mutex
	ranges      []string
	auths       []string
}

func newServer(t *testing.T, data []byte) *server {
	s := &server{data: data}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	s.mu.Unlock()
	if s.ignoreRange {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
		w.Write(s.data)
		return
	}
	http.ServeContent(w, r, "f", time.Time{}, bytes.NewReader(s.data))
}

func (s *server) requests() (ranges, auths []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...), append([]string(nil), s.auths...)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertMissing(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists (err %v), want it absent", path, err)
	}
}

func TestFileCreatesDirsChecksAndReportsProgress(t *testing.T) {
	data, sum := content(3000)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "a", "b", "file.bin")
	var last, total int64 = -1, 0
	calls := 0
	err := File(context.Background(), s.URL+"/f", dest, Options{
		SHA256: strings.ToUpper(sum), // hex case does not matter
		Progress: func(done, tot int64) {
			if done < last {
				t.Errorf("progress went back from %d to %d", last, done)
			}
			last, total = done, tot
			calls++
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatalf("content differs: %d bytes, want %d", len(got), len(data))
	}
	if last != 3000 || total != 3000 || calls < 2 {
		t.Errorf("last progress (%d, %d) after %d calls, want (3000, 3000) after >= 2", last, total, calls)
	}
	assertMissing(t, dest+IncompleteSuffix)
}

func TestFileResumesWithRange(t *testing.T) {
	data, sum := content(5000)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(dest+IncompleteSuffix, data[:1234], 0o644); err != nil {
		t.Fatal(err)
	}
	var first int64 = -1
	err := File(context.Background(), s.URL, dest, Options{SHA256: sum, Progress: func(done, total int64) {
		if first < 0 {
			first = done
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ranges, _ := s.requests()
	if len(ranges) != 1 || ranges[0] != "bytes=1234-" {
		t.Errorf("Range headers %q, want one \"bytes=1234-\"", ranges)
	}
	if first != 1234 {
		t.Errorf("first progress %d, want the resumed prefix 1234", first)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("resumed file differs from the source")
	}
}

// The checksum covers the resumed prefix too: a corrupt prefix is caught,
// and the file is fetched once more from its start in the same call (the
// prefix an earlier call left was what was wrong).
func TestFileResumeWithCorruptPrefixFailsChecksum(t *testing.T) {
	data, sum := content(2000)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	bad := append([]byte(nil), data[:700]...)
	bad[10] ^= 0xff
	if err := os.WriteFile(dest+IncompleteSuffix, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatalf("a corrupt prefix, then the whole file: %v", err)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("the file fetched again differs from the source")
	}
	if ranges, _ := s.requests(); len(ranges) != 2 || ranges[0] != "bytes=700-" || ranges[1] != "" {
		t.Errorf("Range headers %q, want the resume, then the whole file", ranges)
	}
	assertMissing(t, dest+IncompleteSuffix)
}

// A file whose content fails the check (sha256, or Verify) from its start
// is deleted and not asked for again: only a resumed one is.
func TestFileCheckFailsOnce(t *testing.T) {
	data, sum := content(2000)
	for _, c := range []struct {
		name string
		opt  Options
		want string
	}{
		{"sha256", Options{SHA256: strings.Repeat("0", len(sum))}, "sha256 mismatch"},
		{"verify", Options{Verify: func(string) error { return errors.New("not the file wanted") }}, "not the file wanted"},
	} {
		s := newServer(t, data)
		dest := filepath.Join(t.TempDir(), "file.bin")
		err := File(context.Background(), s.URL, dest, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		if ranges, _ := s.requests(); len(ranges) != 1 {
			t.Errorf("%s: %d requests, want 1", c.name, len(ranges))
		}
		assertMissing(t, dest)
		assertMissing(t, dest+IncompleteSuffix)
	}
	// Verify sees the complete file before it is renamed into place.
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	var seen []byte
	err := File(context.Background(), s.URL, dest, Options{SHA256: sum, Verify: func(p string) error {
		if p != dest+IncompleteSuffix {
			t.Errorf("Verify(%s), want the partial file %s", p, dest+IncompleteSuffix)
		}
		seen, _ = os.ReadFile(p)
		assertMissing(t, dest)
		return nil
	}})
	if err != nil || !bytes.Equal(seen, data) {
		t.Errorf("Verify saw %d bytes (err %v), want the whole file", len(seen), err)
	}
}

func TestFileRestartsWhenServerIgnoresRange(t *testing.T) {
	data, sum := content(4000)
	s := newServer(t, data)
	s.ignoreRange = true
	dest := filepath.Join(t.TempDir(), "file.bin")
	// A stale partial that is not even a prefix of the file: it must be dropped.
	if err := os.WriteFile(dest+IncompleteSuffix, bytes.Repeat([]byte{7}, 1500), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("file differs from the source")
	}
	// The 200 answer to the Range request is the whole file: it is used as is.
	if ranges, _ := s.requests(); len(ranges) != 1 || ranges[0] != "bytes=1500-" {
		t.Errorf("Range headers %q, want one request with bytes=1500-", ranges)
	}
}

// A 206 for another offset than asked is not appended: the download starts over.
func TestFileRestartsOnMisplacedRange(t *testing.T) {
	data, sum := content(2000)
	var ranges []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ranges = append(ranges, r.Header.Get("Range"))
		if r.Header.Get("Range") != "" {
			w.Header().Set("Content-Range", "bytes 10-1999/2000")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[10:])
			return
		}
		w.Write(data)
	}))
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(dest+IncompleteSuffix, data[:500], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if len(ranges) != 2 || ranges[0] != "bytes=500-" || ranges[1] != "" {
		t.Errorf("Range headers %q, want bytes=500- then a plain request", ranges)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("file differs from the source")
	}
}

func TestFileAlreadyCompletePartial416(t *testing.T) {
	data, sum := content(1000)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(dest+IncompleteSuffix, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	ranges, _ := s.requests()
	if len(ranges) != 1 || ranges[0] != "bytes=1000-" {
		t.Errorf("Range headers %q, want one \"bytes=1000-\"", ranges)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("file differs from the source")
	}
}

// A partial longer than the remote file gets 416 with another size: start over.
func TestFilePartialLongerThanRemote(t *testing.T) {
	data, sum := content(1000)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(dest+IncompleteSuffix, make([]byte, 1500), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("file differs from the source")
	}
}

func TestFileChecksumMismatchDeletesPartial(t *testing.T) {
	data, _ := content(1000)
	_, other := content(999)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	err := File(context.Background(), s.URL, dest, Options{SHA256: other})
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") || !strings.Contains(err.Error(), other) {
		t.Fatalf("err = %v, want a sha256 mismatch naming %s", err, other)
	}
	assertMissing(t, dest)
	assertMissing(t, dest+IncompleteSuffix)
}

func TestFileHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{http.StatusNotFound, "not found"},
		{http.StatusUnauthorized, "HF_TOKEN"},
		{http.StatusForbidden, "gated"},
		{http.StatusInternalServerError, "500"},
	} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Error-Code", "SomeCode")
			http.Error(w, "no", tc.code)
		}))
		dest := filepath.Join(t.TempDir(), "file.bin")
		url := s.URL + "/some/file"
		err := File(context.Background(), url, dest, Options{})
		s.Close()
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != tc.code || he.ErrorCode != "SomeCode" {
			t.Errorf("%d: err = %v, want an *HTTPError with that status and X-Error-Code", tc.code, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, url) || !strings.Contains(msg, strconv.Itoa(tc.code)) || !strings.Contains(msg, tc.want) {
			t.Errorf("%d: message %q lacks the URL, the status or %q", tc.code, msg, tc.want)
		}
		if IsNotFound(err) != (tc.code == http.StatusNotFound) {
			t.Errorf("%d: IsNotFound = %v", tc.code, IsNotFound(err))
		}
		assertMissing(t, dest)
	}
}

// A redirect to another host is followed, Range survives it, and Authorization
// does not reach the other host.
func TestFileFollowsRedirectWithoutLeakingAuth(t *testing.T) {
	data, sum := content(3000)
	cdn := newServer(t, data)
	// The CDN is addressed by another host name so that Go's client treats it as
	// a different host.
	cdnURL := strings.Replace(cdn.URL, "127.0.0.1", "localhost", 1) + "/blob"
	var hubAuth string
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hubAuth = r.Header.Get("Authorization")
		http.Redirect(w, r, cdnURL, http.StatusFound)
	}))
	defer hub.Close()
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(dest+IncompleteSuffix, data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer secret")
	if err := File(context.Background(), hub.URL+"/resolve", dest, Options{Header: h, SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if hubAuth != "Bearer secret" {
		t.Errorf("hub got Authorization %q, want the token", hubAuth)
	}
	ranges, auths := cdn.requests()
	if len(ranges) != 1 || ranges[0] != "bytes=100-" || auths[0] != "" {
		t.Errorf("CDN got Range %q and Authorization %q, want bytes=100- and none", ranges, auths)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("file differs from the source")
	}
}

// Cancelling keeps the partial file; the next call resumes it.
func TestFileCancelKeepsPartialForResume(t *testing.T) {
	data, sum := content(1 << 20)
	s := newServer(t, data)
	dest := filepath.Join(t.TempDir(), "file.bin")
	ctx, cancel := context.WithCancel(context.Background())
	err := File(ctx, s.URL, dest, Options{SHA256: sum, Progress: func(done, total int64) {
		if done > 0 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertMissing(t, dest)
	info, err := os.Stat(dest + IncompleteSuffix)
	if err != nil || info.Size() == 0 || info.Size() >= int64(len(data)) {
		t.Fatalf("partial file: %v, %v; want a strict non-empty prefix", info, err)
	}
	kept := info.Size()
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	ranges, _ := s.requests()
	if want := "bytes=" + strconv.FormatInt(kept, 10) + "-"; ranges[len(ranges)-1] != want {
		t.Errorf("second request Range %q, want %q", ranges[len(ranges)-1], want)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("resumed file differs from the source")
	}
}

// A connection that breaks midway is an error that keeps the partial file.
func TestFileTruncatedBodyKeepsPartial(t *testing.T) {
	data, _ := content(100000)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:40000])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "file.bin")
	err := File(context.Background(), s.URL, dest, Options{Reconnects: -1})
	if err == nil || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("err = %v, want an interrupted-download error", err)
	}
	assertMissing(t, dest)
	if got := readFile(t, dest+IncompleteSuffix); !bytes.Equal(got, data[:len(got)]) || len(got) == 0 {
		t.Fatalf("partial file of %d bytes is not a non-empty prefix of the source", len(got))
	}
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in          string
		start, size int64
		ok          bool
	}{
		{"bytes 100-199/1000", 100, 1000, true},
		{"bytes 0-0/*", 0, -1, true},
		{"bytes */1000", -1, 1000, true},
		{"bytes */*", 0, 0, false},
		{"items 0-1/2", 0, 0, false},
		{"bytes x-1/2", 0, 0, false},
		{"bytes 1-2/-5", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, size, ok := parseContentRange(tc.in)
		if ok != tc.ok || (ok && (start != tc.start || size != tc.size)) {
			t.Errorf("parseContentRange(%q) = %d, %d, %v; want %d, %d, %v", tc.in, start, size, ok, tc.start, tc.size, tc.ok)
		}
	}
}

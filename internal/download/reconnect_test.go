package download

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dropServer serves data honouring "Range: bytes=N-", but breaks every
// connection after at most chunk bytes of its body (never when chunk is 0);
// ignoreRange makes it answer every request with the whole file from 0.
type dropServer struct {
	data        []byte
	chunk       int
	ignoreRange bool
	mu          sync.Mutex
	ranges      []string
}

func (s *dropServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	s.mu.Unlock()
	start := 0
	if rng := r.Header.Get("Range"); rng != "" && !s.ignoreRange {
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rng, "bytes="), "-"))
		if err != nil || v > len(s.data) {
			http.Error(w, "bad range", http.StatusBadRequest)
			return
		}
		start = v
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(s.data)-1, len(s.data)))
		w.Header().Set("Content-Length", strconv.Itoa(len(s.data)-start))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
	}
	body := s.data[start:]
	if s.chunk > 0 && len(body) > s.chunk {
		w.Write(body[:s.chunk])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	w.Write(body)
}

// TestFileReconnectsBrokenBody: a connection that breaks off every 30,000
// bytes is resumed within one call (Range from where it broke), and the
// file's sha256 still covers the whole; a server that breaks at the same
// place every time is given up on after Options.Reconnects tries without
// progress, the partial file kept.
func TestFileReconnectsBrokenBody(t *testing.T) {
	data, sum := content(100000)
	s := &dropServer{data: data, chunk: 30000}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dest := filepath.Join(t.TempDir(), "file.bin")
	if err := File(context.Background(), srv.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dest); !bytes.Equal(got, data) {
		t.Fatal("content differs")
	}
	want := []string{"", "bytes=30000-", "bytes=60000-", "bytes=90000-"}
	if fmt.Sprint(s.ranges) != fmt.Sprint(want) {
		t.Errorf("requests' Range %q, want %q", s.ranges, want)
	}

	stuck := &dropServer{data: data, chunk: 30000, ignoreRange: true}
	srv2 := httptest.NewServer(stuck)
	defer srv2.Close()
	dest = filepath.Join(t.TempDir(), "file.bin")
	start := time.Now()
	err := File(context.Background(), srv2.URL, dest, Options{SHA256: sum, Reconnects: 1})
	if err == nil || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("err = %v, want an interrupted-download error", err)
	}
	// The first break brought data; then one reconnect without progress.
	if len(stuck.ranges) != 3 || time.Since(start) > 10*time.Second {
		t.Errorf("%d requests in %v, want 3", len(stuck.ranges), time.Since(start))
	}
	if got := readFile(t, dest+IncompleteSuffix); !bytes.Equal(got, data[:30000]) {
		t.Errorf("partial file of %d bytes, want the 30000 sent", len(got))
	}
}

package corpus

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A TinyShakespeare server that does not answer, or stops sending, is named
// through Options.Waiting every WaitInterval until the user gives up.
func TestTinyShakespeareSaysWhatItWaitsFor(t *testing.T) {
	for _, c := range []struct {
		name  string
		body  bool // send headers and a few bytes, then stall
		wants []string
	}{
		{"no answer", false, []string{"waiting", "to answer", "gives up after 1m0s"}},
		{"no more data", true, []string{"has sent nothing more", "at 5 bytes", "a rerun resumes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.body {
					w.Header().Set("Content-Length", "1115394")
					w.Write([]byte("First"))
					w.(http.Flusher).Flush()
				}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer s.Close()
			defer close(release)
			t.Setenv(TinyShakespeareEnv, "")
			msgs := make(chan string, 100)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := Load(ctx, TinyShakespeare, Options{URL: s.URL + "/input.txt", CacheDir: t.TempDir(),
					Waiting: func(msg string) { msgs <- msg }, WaitInterval: 10 * time.Millisecond})
				errc <- err
			}()
			host := strings.TrimPrefix(s.URL, "http://")
			// Messages of the other kind may come first: the server can be slow to
			// answer on a busy machine.
			for seen := 0; seen < 2; {
				select {
				case msg := <-msgs:
					if !strings.Contains(msg, c.wants[1]) {
						continue
					}
					seen++
					for _, want := range append([]string{"tinyshakespeare", host}, c.wants...) {
						if !strings.Contains(msg, want) {
							t.Errorf("message %q lacks %q", msg, want)
						}
					}
				case err := <-errc:
					t.Fatalf("Load returned %v before saying what it waits for", err)
				case <-time.After(20 * time.Second):
					t.Fatal("nothing said while the server was silent")
				}
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		})
	}
}

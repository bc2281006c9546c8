package download

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// roundTrip is an http.RoundTripper from a function: these tests need URLs
// (https, default ports) that no local server can have.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Authorization follows a redirect only to the same scheme, host and port:
// Go's client compares host names alone, so the hub token went to another
// port of the same host and from https to plain http.
func TestRedirectKeepsCredentialsOnOrigin(t *testing.T) {
	for _, c := range []struct {
		from, to string
		keep     bool
	}{
		{"https://hub.test/a", "http://hub.test/a", false},            // downgrade to plain http
		{"https://hub.test/a", "https://hub.test:8443/a", false},      // another port
		{"http://127.0.0.1:5000/a", "http://127.0.0.1:5001/a", false}, // another port
		{"https://hub.test/a", "https://cdn.test/a", false},           // another host
		{"https://hub.test/a", "https://hub.test:443/b", true},        // the default port spelled out
		{"https://hub.test/a", "/b", true},                            // relative
	} {
		var mu sync.Mutex
		var auth, cookie []string
		client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			cookie = append(cookie, r.Header.Get("Cookie"))
			n := len(auth)
			mu.Unlock()
			if n == 1 {
				return &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {c.to}},
					Body: http.NoBody, Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, ContentLength: 2, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
		})}
		h := http.Header{"Authorization": {"Bearer secret"}, "Cookie": {"session=secret"}}
		dest := filepath.Join(t.TempDir(), "f")
		if err := File(context.Background(), c.from, dest, Options{Header: h, Client: client}); err != nil {
			t.Fatalf("%s -> %s: %v", c.from, c.to, err)
		}
		if len(auth) != 2 || auth[0] != "Bearer secret" {
			t.Fatalf("%s -> %s: requests' Authorization %q", c.from, c.to, auth)
		}
		if got := auth[1] != "" || cookie[1] != ""; got != c.keep {
			t.Errorf("%s -> %s: Authorization %q, Cookie %q after the redirect; want kept %v", c.from, c.to, auth[1], cookie[1], c.keep)
		}
	}
}

package hub

import (
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
)

// DefaultWaitInterval is Client.WaitInterval when it is zero.
const DefaultWaitInterval = 5 * time.Second

// WaitKind is what a Wait is waiting for.
type WaitKind string

// The kinds of Wait.
const (
	// WaitAnswer: a request sent, no response headers yet.
	WaitAnswer WaitKind = "answer"
	// WaitData: a download whose body has stopped arriving.
	WaitData WaitKind = "data"
	// WaitLock: another process (or goroutine) downloading the same file.
	WaitLock WaitKind = "lock"
)

// Wait reports that a file has made no progress for a while: the hub or its CDN
// is silent, or another download of the same file holds its lock. Client.Waiting
// receives one after Client.WaitInterval of silence and then one every
// WaitInterval until the silence ends, the request gives up, or ctx ends.
type Wait struct {
	Kind WaitKind
	Host string // the server waited for (host:port as in the URL); "" for WaitLock
	File string // the file in the repo, e.g. "config.json"
	// Lock is the lock file held by the other download (WaitLock only).
	Lock string
	// Silence is how long nothing has arrived.
	Silence time.Duration
	// Done is the bytes of File on disk so far (WaitData only).
	Done int64
	// Timeout is when the request gives up: for WaitAnswer, the HTTP
	// client's response-header timeout or its overall timeout; for WaitData,
	// the stall timeout (Client.StallTimeout), after which a download that
	// brings (almost) nothing gives up, to resume on the next run. 0 when
	// nothing but ctx ends it.
	Timeout time.Duration
}

// String says in one line what is awaited, for how long, and until when.
func (w Wait) String() string {
	silence := w.Silence.Round(time.Second)
	if w.Silence < time.Second {
		silence = w.Silence.Round(time.Millisecond)
	}
	limit := "no time limit; Ctrl-C stops"
	if w.Timeout > 0 {
		limit = fmt.Sprintf("gives up after %v", w.Timeout)
		if w.Kind == WaitData {
			limit += " without data"
		}
	}
	if w.Kind == WaitData {
		limit += ", a rerun resumes"
	}
	switch w.Kind {
	case WaitData:
		return fmt.Sprintf("hub: %s has sent nothing more of %s for %v (at %d bytes; %s)", w.Host, w.File, silence, w.Done, limit)
	case WaitLock:
		return fmt.Sprintf("hub: waiting %v for another download of %s to finish (lock %s)", silence, w.File, w.Lock)
	}
	return fmt.Sprintf("hub: waiting %v for %s to answer for %s (%s)", silence, w.Host, w.File, limit)
}

// waiter reports silence on one file to Client.Waiting, saying what it is
// waiting for. A nil *waiter (no Waiting callback) does nothing.
type waiter struct {
	mu    sync.Mutex
	w     Wait // what the next report says, but for Silence
	watch *download.Watch
}

// watch starts reporting silence from now on: the reports say what w says,
// with the host of rawURL (when not empty) and the silence filled in.
func (c *Client) watch(w Wait, rawURL string) *waiter {
	if c.Waiting == nil {
		return nil
	}
	if u, err := url.Parse(rawURL); err == nil && rawURL != "" {
		w.Host = u.Host
	}
	wt := &waiter{w: w}
	report := c.Waiting
	wt.watch = download.NewWatch(c.waitInterval(), func(silence time.Duration) {
		wt.mu.Lock()
		rep := wt.w
		wt.mu.Unlock()
		rep.Silence = silence
		report(rep)
	})
	return wt
}

func (c *Client) waitInterval() time.Duration {
	if c.WaitInterval > 0 {
		return c.WaitInterval
	}
	return DefaultWaitInterval
}

// active records that done bytes have arrived, switching to kind (the answer
// came; now the data is awaited).
func (w *waiter) active(kind WaitKind, done int64, timeout time.Duration) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.w.Kind, w.w.Done, w.w.Timeout = kind, done, timeout
	w.mu.Unlock()
	w.watch.Touch()
}

// stop ends the reports; none is made after it returns.
func (w *waiter) stop() {
	if w == nil {
		return
	}
	w.watch.Stop()
}

package download

import (
	"net/http"
	"sync"
	"time"
)

// Watch reports silence: once interval passes without a Touch, report is
// called with how long nothing has happened, and again every interval while
// the silence lasts. report runs on a goroutine of its own and never after Stop
// returns. A nil *Watch (what NewWatch returns for a nil report) does nothing.
type Watch struct {
	report   func(silence time.Duration)
	interval time.Duration

	mu   sync.Mutex
	last time.Time

	quit chan struct{}
	done chan struct{}
}

// NewWatch starts a Watch; the silence counts from now. interval must be
// positive.
func NewWatch(interval time.Duration, report func(silence time.Duration)) *Watch {
	if report == nil {
		return nil
	}
	w := &Watch{report: report, interval: interval, last: time.Now(), quit: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *Watch) loop() {
	defer close(w.done)
	t := time.NewTimer(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.quit:
			return
		case now := <-t.C:
			w.mu.Lock()
			silence := now.Sub(w.last)
			w.mu.Unlock()
			next := w.interval - silence // something happened since the timer was set
			if silence >= w.interval {
				w.report(silence)
				next = w.interval
			}
			t.Reset(next)
		}
	}
}

// Touch says something happened: the silence starts again.
func (w *Watch) Touch() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
}

// Stop ends the reports; none is made after it returns. Stop may be called once.
func (w *Watch) Stop() {
	if w == nil {
		return
	}
	close(w.quit)
	<-w.done
}

// HeaderTimeout is how long a request made with c waits for the response
// headers: its transport's ResponseHeaderTimeout or its own Timeout, whichever
// is shorter (nil c: DefaultClient's); 0 when nothing but the request's
// context ends the wait.
func HeaderTimeout(c *http.Client) time.Duration {
	if c == nil {
		c = DefaultClient
	}
	d := c.Timeout
	if t, ok := c.Transport.(*http.Transport); ok && t.ResponseHeaderTimeout > 0 && (d == 0 || t.ResponseHeaderTimeout < d) {
		d = t.ResponseHeaderTimeout
	}
	return d
}

package download

import (
	"sync"
	"testing"
	"time"
)

// A Watch reports a silence once it reaches the interval and then every
// interval, restarts it on Touch, and reports nothing once Stop returns.
func TestWatch(t *testing.T) {
	const interval = 10 * time.Millisecond
	var mu sync.Mutex
	stopped := false
	reports := make(chan time.Duration, 1000)
	w := NewWatch(interval, func(s time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			t.Errorf("report of %v after Stop", s)
		}
		reports <- s
	})
	next := func() time.Duration {
		select {
		case s := <-reports:
			if s < interval {
				t.Errorf("report after %v, before the interval %v", s, interval)
			}
			return s
		case <-time.After(20 * time.Second):
			t.Fatal("no report")
			return 0
		}
	}
	a, b, c := next(), next(), next()
	if !(a < b && b < c) {
		t.Errorf("silence does not grow: %v %v %v", a, b, c)
	}
	touched := time.Now()
	w.Touch()
	// A report made before the Touch counts from the start, which came before
	// the Touch; those made after it count from it, so one soon reports no
	// more silence than the time since the Touch.
	for s := next(); s > time.Since(touched); s = next() {
	}
	w.Stop()
	mu.Lock()
	stopped = true
	mu.Unlock()
}

// A Watch without a report is nil, and a nil Watch does nothing.
func TestWatchNil(t *testing.T) {
	w := NewWatch(time.Millisecond, nil)
	if w != nil {
		t.Fatal("a Watch without a report")
	}
	w.Touch()
	w.Stop()
}

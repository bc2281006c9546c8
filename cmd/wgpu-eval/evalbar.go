package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// evalBar is the evaluation's progress line. The library reports once per
// batch (thousands of tokens, seconds apart); between reports the line is
// redrawn every second with the count extrapolated from the rate so far, never
// past the next report's likely value, so it moves steadily and its ETA counts
// down.
type evalBar struct {
	w     io.Writer
	every time.Duration

	mu          sync.Mutex
	start       time.Time // first report
	first       int64     // tokens done at the first report (a resumed run starts above 0)
	done, total int64
	at          time.Time // last report
	step        int64     // tokens between the last two reports
	stop        chan struct{}
	wg          sync.WaitGroup
}

func newEvalBar(w io.Writer) *evalBar { return &evalBar{w: w, every: time.Second} }

// report records done of total tokens at now; the first call starts the redraws.
func (b *evalBar) report(now time.Time, done, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		b.start, b.first, b.at = now, done, now
		b.stop = make(chan struct{})
		b.wg.Add(1)
		go b.loop(b.stop, b.every)
	} else if done > b.done {
		b.step = done - b.done
	}
	if done > b.done || b.done == 0 {
		b.done, b.at = done, now
	}
	b.total = total
	b.draw(now)
}

func (b *evalBar) loop(stop <-chan struct{}, every time.Duration) {
	defer b.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			b.mu.Lock()
			b.draw(now)
			b.mu.Unlock()
		}
	}
}

// close stops the redraws and clears the line.
func (b *evalBar) close() {
	b.mu.Lock()
	stop := b.stop
	b.stop = nil
	b.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	b.wg.Wait()
	fmt.Fprint(b.w, "\r\033[K")
}

// note prints msg on a line of its own, clearing the progress line first,
// and draws the line again below it.
func (b *evalBar) note(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprint(b.w, "\r\033[K"+msg+"\n")
	if !b.start.IsZero() {
		b.draw(time.Now())
	}
}

func (b *evalBar) draw(now time.Time) { fmt.Fprint(b.w, "\r\033[K"+b.line(now)) }

// line is the progress line at now: percentage, bar, tokens, rate and ETA.
func (b *evalBar) line(now time.Time) string {
	done, rate := b.estimate(now)
	var s strings.Builder
	s.WriteString("eval ")
	if b.total > 0 {
		frac := min(float64(done)/float64(b.total), 1)
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(&s, "%3.0f%% |%s%s| %d/%d tok", 100*frac, strings.Repeat("█", n), strings.Repeat(" ", width-n), done, b.total)
	} else {
		fmt.Fprintf(&s, "%d tok", done)
	}
	fmt.Fprintf(&s, "  %s", clock(now.Sub(b.start)))
	if rate > 0 {
		fmt.Fprintf(&s, "  %.0f tok/s", rate)
		if b.total > 0 {
			fmt.Fprintf(&s, "  ETA %s", clock(time.Duration(float64(b.total-done)/rate*float64(time.Second))))
		}
	} else {
		s.WriteString("  (rate after the first batch)")
	}
	return s.String()
}

// estimate returns the tokens probably done at now and the rate so far (0
// before the first batch has finished).
func (b *evalBar) estimate(now time.Time) (int64, float64) {
	elapsed := b.at.Sub(b.start).Seconds()
	if b.done <= b.first || elapsed <= 0 {
		return b.done, 0
	}
	rate := float64(b.done-b.first) / elapsed
	done := b.done + int64(rate*now.Sub(b.at).Seconds())
	step := b.step
	if step <= 0 {
		step = b.done - b.first
	}
	limit := b.done + step - 1 // not past the next report
	if b.total > 0 {
		limit = min(limit, b.total-1)
	}
	return max(min(done, limit), b.done), rate
}

// clock formats d as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

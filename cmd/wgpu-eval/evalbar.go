package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
)

// evalState is how far the evaluation has got, from the library's reports:
// what the bar (evalBar) and the log lines (evalLog) show.
type evalState struct {
	start       time.Time // first report
	first       int64     // tokens done at the first report (a resumed run starts above 0)
	done, total int64
	at          time.Time // last report that moved done
	step        int64     // tokens between the last two reports that moved done
	scored      int64     // targets of the batches finished
	nllSum      float64   // their NLL sum
}

// record notes the report p at now and says whether it was the first.
// done never goes back (a report of less is ignored), except to a count of
// targets scored (Done == Scored): a cancelled run's last report, which
// drops the batch cut short that reports inside it had counted in part, so
// that the last line shows what the result counts.
func (s *evalState) record(now time.Time, p wgpueval.Progress) bool {
	first := s.start.IsZero()
	switch {
	case first:
		s.start, s.first, s.done, s.at = now, p.Done, p.Done, now
	case p.Done > s.done:
		s.step = p.Done - s.done
		s.done, s.at = p.Done, now
	case p.Done < s.done && p.Done == p.Scored:
		s.done, s.at = p.Done, now
	}
	s.total = p.Total
	if p.Scored >= s.scored {
		s.scored, s.nllSum = p.Scored, p.NLLSum
	}
	return first
}

// rate is the tokens per second so far: 0 until done has moved.
func (s *evalState) rate() float64 {
	elapsed := s.at.Sub(s.start).Seconds()
	if s.done <= s.first || elapsed <= 0 {
		return 0
	}
	return float64(s.done-s.first) / elapsed
}

// estimate returns the tokens probably done at now, extrapolated from the
// last report at the rate so far but never as far as the next report's likely
// value, and that rate (0 before done has moved).
func (s *evalState) estimate(now time.Time) (int64, float64) {
	rate := s.rate()
	if rate == 0 {
		return s.done, 0
	}
	done := s.done + int64(rate*now.Sub(s.at).Seconds())
	step := s.step
	if step <= 0 {
		step = s.done - s.first
	}
	limit := s.done + step - 1 // not past the next report
	if s.total > 0 {
		limit = min(limit, s.total-1)
	}
	return max(min(done, limit), s.done), rate
}

// eta is the time left at now, from the estimate; false without a rate or a
// total, or when all is done.
func (s *evalState) eta(now time.Time) (time.Duration, bool) {
	done, rate := s.estimate(now)
	if rate <= 0 || s.total <= 0 || s.done >= s.total {
		return 0, false
	}
	return time.Duration(float64(s.total-done) / rate * float64(time.Second)), true
}

// mean is the running mean NLL of the batches finished; false before any.
func (s *evalState) mean() (float64, bool) {
	if s.scored <= 0 {
		return 0, false
	}
	return s.nllSum / float64(s.scored), true
}

// evalBar is the evaluation's progress line on a terminal. The library
// reports after each batch (thousands of tokens, seconds apart) and, on the
// CPU, after each layer of one; between reports the line is redrawn every
// second with the count extrapolated from the rate so far, never past the
// next report's likely value, so it moves steadily and its ETA counts down.
// It fits the terminal's width: the bar narrows, the running PPL goes first.
type evalBar struct {
	w     io.Writer
	every time.Duration
	cols  func() int // the terminal's width; nil or <= 0: no limit

	mu sync.Mutex
	evalState
	drawn time.Time // last draw from a report
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newEvalBar(w io.Writer) *evalBar { return &evalBar{w: w, every: time.Second} }

// reportDraws is how often reports redraw the line at most: the CPU reports
// after every layer, which on a small model is thousands of times a second.
const reportDraws = 100 * time.Millisecond

// report records p at now; the first call starts the redraws.
func (b *evalBar) report(now time.Time, p wgpueval.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.record(now, p) {
		b.stop = make(chan struct{})
		b.wg.Add(1)
		go b.loop(b.stop, b.every)
	} else if now.Sub(b.drawn) < reportDraws && p.Done < p.Total {
		return // the ticker draws it
	}
	b.drawn = now
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

// barWidth is the bar's width where the terminal has room; it narrows down
// to minBar, and goes when narrower than that would be needed.
const barWidth, minBar = 30, 10

// line is the progress line at now: percentage, bar, tokens, elapsed time,
// rate, ETA and the running PPL, fitted to the terminal's width.
func (b *evalBar) line(now time.Time) string {
	done, rate := b.estimate(now)
	tail := "  " + clock(now.Sub(b.start))
	if rate > 0 {
		tail += fmt.Sprintf("  %.0f tok/s", rate)
		if eta, ok := b.eta(now); ok {
			tail += "  ETA " + clock(eta)
		}
	} else {
		tail += "  (rate after the first batch)"
	}
	ppl := ""
	if mean, ok := b.mean(); ok {
		ppl = "  PPL " + formatPPL(mean)
	}
	if b.total <= 0 {
		return b.fit(fmt.Sprintf("eval %d tok", done)+tail, ppl)
	}
	frac := min(float64(done)/float64(b.total), 1)
	head := fmt.Sprintf("eval %3.0f%% ", 100*frac)
	counts := fmt.Sprintf("%d/%d tok", done, b.total)
	width := barWidth
	if cols := b.width(); cols > 0 {
		room := cols - 1 - len(head) - len("|| ") - len(counts) - utf8.RuneCountInString(tail)
		if room-len(ppl) < minBar {
			ppl = ""
		}
		width = min(width, room-len(ppl))
	}
	if width < minBar {
		return b.fit(head+counts+tail, ppl)
	}
	n := int(frac * float64(width))
	return head + "|" + strings.Repeat("█", n) + strings.Repeat(" ", width-n) + "| " + counts + tail + ppl
}

// width is the terminal's width, 0 when unknown.
func (b *evalBar) width() int {
	if b.cols == nil {
		return 0
	}
	return b.cols()
}

// fit is s, with extra when it fits too, cut to the terminal's width (a
// line longer than the terminal wraps, and the redraws would pile up).
func (b *evalBar) fit(s, extra string) string {
	cols := b.width()
	if cols <= 0 {
		return s + extra
	}
	if utf8.RuneCountInString(s+extra) < cols {
		return s + extra
	}
	r := []rune(s)
	return string(r[:min(len(r), max(cols-1, 0))])
}

// formatPPL spells the perplexity of a mean NLL with three or four
// significant digits, and no exponent below a million (30.31, 3.412,
// 50257.0, 1.235e+07; see bigPPL).
func formatPPL(mean float64) string {
	ppl := math.Exp(mean)
	switch {
	case ppl < 10:
		return fmt.Sprintf("%.3f", ppl)
	case ppl < 100:
		return fmt.Sprintf("%.2f", ppl)
	case ppl < 1e6:
		return fmt.Sprintf("%.1f", ppl)
	}
	return bigPPL(ppl)
}

// formatPPLFixed spells a perplexity (or its standard error) of a result
// line with three decimals, as far as a million; larger ones (a model far
// from the text: an NLL of 14 nats and more) with four significant digits
// (bigPPL), not a number of hundreds of digits.
func formatPPLFixed(ppl float64) string {
	if ppl < 1e6 {
		return fmt.Sprintf("%.3f", ppl)
	}
	return bigPPL(ppl)
}

// bigPPL spells a large perplexity with four significant digits; one that
// float64 cannot hold (an NLL above 709.78 nats, which results cap at the
// largest float64) as ">1.798e+308".
func bigPPL(ppl float64) string {
	if ppl >= math.MaxFloat64 {
		return fmt.Sprintf(">%.4g", math.MaxFloat64)
	}
	return fmt.Sprintf("%.4g", ppl)
}

// clock formats d as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

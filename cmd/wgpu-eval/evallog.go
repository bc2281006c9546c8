package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
)

// evalLog is the evaluation's progress where stderr is not a terminal (a
// Slurm or Kubernetes log, CI), where a redrawn bar would make one endless
// line: a plain line soon after the evaluation starts (firstLine), then one
// every interval, and a last one when it ends, if lines were due by then
// (a run shorter than firstLine prints none). Each says
//
//	progress: 12,345 / 338,025 tokens (3.7%)  elapsed 6s  2,040 tok/s  ETA 2m40s  NLL 3.412  PPL 30.32
//
// with the mean NLL of the batches finished so far, as llama-perplexity
// prints it per chunk.
type evalLog struct {
	w     io.Writer
	every time.Duration

	mu sync.Mutex
	evalState
	shown bool // the last line shows the state as it is
	stop  chan struct{}
	wg    sync.WaitGroup
}

// progressEvery is the interval of the log lines; progressEnv changes it.
const progressEvery = 10 * time.Second

// progressEnv names the environment variable that sets the interval of the
// log lines (a Go duration: 30s, 1m; 0 for none).
const progressEnv = "WGPU_EVAL_PROGRESS_INTERVAL"

// progressInterval is the log lines' interval that the value of progressEnv
// asks for: progressEvery when empty, 0 (no lines) for "0".
func progressInterval(env string) (time.Duration, error) {
	if env == "" {
		return progressEvery, nil
	}
	d, err := time.ParseDuration(env)
	if err != nil || d < 0 {
		return progressEvery, fmt.Errorf("warning: %s=%q is not a duration such as 30s or 1m (0: no progress lines); using %v", progressEnv, env, progressEvery)
	}
	return d, nil
}

func newEvalLog(w io.Writer, every time.Duration) *evalLog { return &evalLog{w: w, every: every} }

// firstLine is when the first line is due after the evaluation starts.
func (l *evalLog) firstLine() time.Duration { return min(l.every, 2*time.Second) }

// report records p at now; the first call starts the lines.
func (l *evalLog) report(now time.Time, p wgpueval.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.record(now, p) {
		l.stop = make(chan struct{})
		l.wg.Add(1)
		go l.loop(l.stop)
	}
	l.shown = false
}

func (l *evalLog) loop(stop <-chan struct{}) {
	defer l.wg.Done()
	t := time.NewTimer(l.firstLine())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			l.mu.Lock()
			l.print(now)
			l.mu.Unlock()
			t.Reset(l.every)
		}
	}
}

// print writes the line at now. l.mu must be held.
func (l *evalLog) print(now time.Time) {
	fmt.Fprintln(l.w, l.line(now))
	l.shown = true
}

// note prints msg on a line of its own (not inside a progress line being
// written).
func (l *evalLog) note(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, msg)
}

// close stops the lines, with a last one showing where the evaluation ended
// when lines were due and the last one printed is out of date.
func (l *evalLog) close() {
	l.mu.Lock()
	stop := l.stop
	l.stop = nil
	l.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := time.Now(); !l.shown && now.Sub(l.start) >= l.firstLine() {
		l.print(now)
	}
}

// line is the progress line at now: the tokens reported done (not
// extrapolated: a log says what happened), elapsed time, rate, ETA and the
// running mean NLL and PPL.
func (l *evalLog) line(now time.Time) string {
	s := "progress: " + commas(l.done)
	if l.total > 0 {
		s += fmt.Sprintf(" / %s tokens (%.1f%%)", commas(l.total), 100*float64(l.done)/float64(l.total))
	} else {
		s += " tokens"
	}
	s += "  elapsed " + now.Sub(l.start).Round(time.Second).String()
	if rate := l.rate(); rate > 0 {
		s += fmt.Sprintf("  %s tok/s", commas(int64(math.Round(rate))))
		if eta, ok := l.eta(now); ok {
			s += "  ETA " + eta.Round(time.Second).String()
		}
	} else {
		s += "  (rate after the first batch)"
	}
	if mean, ok := l.mean(); ok {
		s += fmt.Sprintf("  NLL %.3f  PPL %s", mean, formatPPL(mean))
	}
	return s
}

// commas spells n with thousands separated by commas: 338,025.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

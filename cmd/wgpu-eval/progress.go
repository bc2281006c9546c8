package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
)

// progress draws progress bars on stderr when it is a terminal and the user did
// not ask for quiet. Bars are keyed by a label (a file being downloaded,
// "tokenize", "eval") so callbacks from the library can be forwarded as they
// come. Where stderr is not a terminal (a log file, a pipe) and not quiet,
// the evaluation's progress is a plain line every interval instead (evalLog)
// and the other bars are not drawn; quiet, nothing is.
type progress struct {
	w        io.Writer
	enabled  bool          // bars: stderr is a terminal
	every    time.Duration // the log lines' interval when not enabled; 0: none
	everyErr error         // a bad progressEnv, printed when the lines start
	cols     func() int    // the terminal's width

	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
	eval *evalBar // the evaluation's line, redrawn every second
	log  *evalLog // the evaluation's log lines
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	p := &progress{w: stderr, bars: map[string]*progressbar.ProgressBar{}}
	if quiet {
		return p
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.enabled = true
		p.cols = func() int {
			w, _, err := term.GetSize(int(f.Fd()))
			if err != nil {
				return 0
			}
			return w
		}
		return p
	}
	p.every, p.everyErr = progressInterval(os.Getenv(progressEnv))
	return p
}

// bytes reports a download of total bytes (total <= 0: unknown) under label.
func (p *progress) bytes(label string, done, total int64) {
	p.update(label, done, total)
}

// report shows one of the library's progress reports: a bar of bytes for a
// download, a weight load, a corpus download or tokenizing, the evaluation's
// line for the targets scored.
func (p *progress) report(r wgpueval.Progress) {
	switch r.Stage {
	case "download", "corpus":
		p.bytes(r.File, r.Done, r.Total)
	case "load", "tokenize":
		p.bytes(r.Stage+" "+r.File, r.Done, r.Total)
	case "eval":
		p.count(r)
	}
}

// count reports the evaluation's progress (an "eval" report: tokens done
// of total, the running NLL sum).
func (p *progress) count(r wgpueval.Progress) {
	p.mu.Lock()
	switch {
	case p.enabled:
		if p.eval == nil {
			p.eval = newEvalBar(p.w)
			p.eval.cols = p.cols
		}
		e := p.eval
		p.mu.Unlock()
		e.report(time.Now(), r)
	case p.every > 0:
		if p.log == nil {
			if p.everyErr != nil {
				fmt.Fprintln(p.w, p.everyErr)
			}
			p.log = newEvalLog(p.w, p.every)
		}
		l := p.log
		p.mu.Unlock()
		l.report(time.Now(), r)
	default:
		p.mu.Unlock()
	}
}

func (p *progress) update(label string, done, total int64) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	bar := p.bars[label]
	if bar == nil {
		if total <= 0 {
			total = -1 // spinner
		}
		opts := []progressbar.Option{ // bytes only: counts go to count
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		}
		opts = append(opts, progressbar.OptionShowBytes(true))
		bar = progressbar.NewOptions64(total, opts...)
		p.bars[label] = bar
	}
	_ = bar.Set64(done)
	if total > 0 && done >= total {
		_ = bar.Finish()
		delete(p.bars, label)
	}
}

// note prints msg on a line of its own (a "still waiting for ..." report of
// the hub client, say): bars being drawn are cleared first, so that msg does
// not land on a bar's line; a download bar is drawn again at its next report,
// the evaluation's line at once. Log lines and msg are written one at a time.
func (p *progress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log != nil {
		p.log.note(msg)
		return
	}
	if p.enabled {
		for _, bar := range p.bars {
			_ = bar.Clear()
		}
		if p.eval != nil {
			p.eval.note(msg)
			return
		}
	}
	fmt.Fprintln(p.w, msg)
}

// close finishes any bar still drawn (also after an error or cancellation),
// and the log lines with one showing where the evaluation ended.
func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eval != nil {
		p.eval.close()
		p.eval = nil
	}
	if p.log != nil {
		p.log.close()
		p.log = nil
	}
	for label, bar := range p.bars {
		_ = bar.Exit()
		delete(p.bars, label)
	}
}

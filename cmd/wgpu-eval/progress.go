package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress draws progress bars on stderr when it is a terminal and the user did
// not ask for quiet; otherwise every method does nothing. Bars are keyed by a
// label (a file being downloaded, "tokenize", "eval") so callbacks from the
// library can be forwarded as they come.
type progress struct {
	w       io.Writer
	enabled bool

	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
	eval *evalBar // the evaluation's line, redrawn every second
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	enabled := false
	if f, ok := stderr.(*os.File); ok && !quiet {
		enabled = term.IsTerminal(int(f.Fd()))
	}
	return &progress{w: stderr, enabled: enabled, bars: map[string]*progressbar.ProgressBar{}}
}

// bytes reports a download of total bytes (total <= 0: unknown) under label.
func (p *progress) bytes(label string, done, total int64) {
	p.update(label, done, total)
}

// count reports done of total tokens scored.
func (p *progress) count(done, total int64) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	if p.eval == nil {
		p.eval = newEvalBar(p.w)
	}
	e := p.eval
	p.mu.Unlock()
	e.report(time.Now(), done, total)
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
// the evaluation's line at once.
func (p *progress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
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

// close finishes any bar still drawn (after an error or cancellation).
func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eval != nil {
		p.eval.close()
		p.eval = nil
	}
	for label, bar := range p.bars {
		_ = bar.Exit()
		delete(p.bars, label)
	}
}

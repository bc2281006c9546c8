package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
)

// screen is what a terminal shows after out: the lines, carriage returns
// moving to the line's start, "\033[K" and "\033[2K" clearing it (from the
// cursor, or all of it), other characters overwriting.
func screen(out string) []string {
	var lines []string
	var line []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], "\033[2K"):
			line, i = nil, i+4
		case strings.HasPrefix(out[i:], "\033[K"):
			line, i = line[:min(col, len(line))], i+3
		case out[i] == '\r':
			col, i = 0, i+1
		case out[i] == '\n':
			lines, line, col, i = append(lines, strings.TrimRight(string(line), " ")), nil, 0, i+1
		default:
			r, n := utf8.DecodeRuneInString(out[i:])
			for len(line) <= col {
				line = append(line, ' ')
			}
			line[col] = r
			col++
			i += n
		}
	}
	return append(lines, strings.TrimRight(string(line), " "))
}

// TestProgressNoteOwnLine: a note (a wait report of the hub client) printed
// while a download bar or the evaluation's line is drawn gets a screen line of
// its own, exactly the message, and the bar is drawn again (the evaluation's
// line at once, the download bar at its next report); a message written
// straight after a bar, as eval's Log did before, lands on the bar's line (the
// check can fail). Without a terminal the message is written alone.
func TestProgressNoteOwnLine(t *testing.T) {
	const msg = "hub: waiting 30s for huggingface.co to answer for model.safetensors (gives up after 1m0s)"
	newProg := func(w *bytes.Buffer) *progress {
		return &progress{w: w, enabled: true, bars: map[string]*progressbar.ProgressBar{}}
	}

	var before bytes.Buffer
	p := newProg(&before)
	p.bytes("model.safetensors", 1<<20, 8<<20)
	fmt.Fprintln(&before, msg)
	if slices.Contains(screen(before.String()), msg) {
		t.Fatalf("a message written after a bar shows on its own line: %q; the check below tests nothing", screen(before.String()))
	}

	var w bytes.Buffer
	p = newProg(&w)
	p.bytes("model.safetensors", 1<<20, 8<<20)
	p.note(msg)
	time.Sleep(150 * time.Millisecond) // past the bar's throttle
	p.bytes("model.safetensors", 2<<20, 8<<20)
	lines := screen(w.String())
	if i := slices.Index(lines, msg); i < 0 || i == len(lines)-1 || !strings.Contains(lines[len(lines)-1], "model.safetensors") {
		t.Errorf("download bar: screen %q; want the message on its own line and the bar below it", lines)
	}
	p.close()

	w.Reset()
	p = newProg(&w)
	p.eval = newEvalBar(&w)
	p.eval.every = time.Hour // no redraws from the ticker in this test
	p.count(wgpueval.Progress{Stage: "eval", Done: 4096, Total: 81920})
	p.note(msg)
	lines = screen(w.String())
	if len(lines) != 2 || lines[0] != msg || !strings.Contains(lines[1], "4096/81920 tok") {
		t.Errorf("evaluation line: screen %q; want the message, then the line", lines)
	}
	p.close()

	w.Reset()
	p = &progress{w: &w, bars: map[string]*progressbar.ProgressBar{}} // not a terminal: no bars
	p.bytes("model.safetensors", 1<<20, 8<<20)
	p.note(msg)
	if w.String() != msg+"\n" {
		t.Errorf("without bars: %q, want the message alone", w.String())
	}
}

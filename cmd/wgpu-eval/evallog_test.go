package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestEvalLogLine: the plain line says the tokens reported (not
// extrapolated), the elapsed time, the rate, the ETA from the estimate, and
// the running mean NLL and PPL; close adds a last line only when the state
// moved since the last one.
func TestEvalLogLine(t *testing.T) {
	var w bytes.Buffer
	l := newEvalLog(&w, time.Hour) // no lines from the timer in this test
	t0 := time.Unix(1000, 0)
	l.report(t0, wgpueval.Progress{Stage: "eval", Total: 81920})
	if got, want := l.line(t0.Add(time.Second)), "progress: 0 / 81,920 tokens (0.0%)  elapsed 1s  (rate after the first batch)"; got != want {
		t.Errorf("before the first batch:\n got %q\nwant %q", got, want)
	}
	l.report(t0.Add(4*time.Second), wgpueval.Progress{Stage: "eval", Done: 8192, Total: 81920, Scored: 8192, NLLSum: 8192 * 3.412})
	if got, want := l.line(t0.Add(5*time.Second)), "progress: 8,192 / 81,920 tokens (10.0%)  elapsed 5s  2,048 tok/s  ETA 35s  NLL 3.412  PPL 30.33"; got != want {
		t.Errorf("after a batch:\n got %q\nwant %q", got, want)
	}
	l.report(t0.Add(6*time.Second), wgpueval.Progress{Stage: "eval", Done: 9000, Total: 81920, Scored: 8192, NLLSum: 8192 * 3.412})
	if got := l.line(t0.Add(6 * time.Second)); !strings.HasPrefix(got, "progress: 9,000 / 81,920 tokens (11.0%)  elapsed 6s  1,500 tok/s") || !strings.HasSuffix(got, "NLL 3.412  PPL 30.33") {
		t.Errorf("inside a batch: %q", got)
	}
	l.report(t0.Add(40*time.Second), wgpueval.Progress{Stage: "eval", Done: 81920, Total: 81920, Scored: 81920, NLLSum: 81920 * 3.5})
	if got, want := l.line(t0.Add(40*time.Second)), "progress: 81,920 / 81,920 tokens (100.0%)  elapsed 40s  2,048 tok/s  NLL 3.500  PPL 33.12"; got != want {
		t.Errorf("at the end:\n got %q\nwant %q", got, want)
	}
	l.close() // lines were due long ago (t0), and none shows the end
	if !strings.HasPrefix(w.String(), "progress: 81,920 / 81,920 tokens (100.0%)") || strings.Count(w.String(), "\n") != 1 {
		t.Errorf("close wrote %q, want the last line", w.String())
	}

	w.Reset()
	l = newEvalLog(&w, time.Hour)
	l.report(time.Now(), wgpueval.Progress{Stage: "eval", Total: 100})
	l.close()
	if w.Len() != 0 {
		t.Errorf("a run shorter than the first line's delay wrote %q", w.String())
	}
}

func TestProgressInterval(t *testing.T) {
	for _, c := range []struct {
		env  string
		want time.Duration
		bad  bool
	}{{"", progressEvery, false}, {"30s", 30 * time.Second, false}, {"0", 0, false}, {"soon", progressEvery, true}, {"-1s", progressEvery, true}} {
		got, err := progressInterval(c.env)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("%q: %v, %v; want %v (an error: %v)", c.env, got, err, c.want, c.bad)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 338025: "338,025", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestEvalBarFitsTerminal: the line is never wider than the terminal (it
// would wrap and the redraws pile up): the bar narrows, then the PPL goes,
// then the bar.
func TestEvalBarFitsTerminal(t *testing.T) {
	b := newEvalBar(&bytes.Buffer{})
	b.every = time.Hour
	t0 := time.Unix(1000, 0)
	b.report(t0, wgpueval.Progress{Stage: "eval", Total: 338025})
	b.report(t0.Add(20*time.Second), wgpueval.Progress{Stage: "eval", Done: 40960, Total: 338025, Scored: 40960, NLLSum: 40960 * 3.3})
	for _, c := range []struct {
		cols     int
		bar, ppl bool
	}{{0, true, true}, {200, true, true}, {80, true, true}, {70, true, false}, {60, false, false}, {30, false, false}} {
		b.cols = func() int { return c.cols }
		l := b.line(t0.Add(21 * time.Second))
		if (c.cols > 0 && utf8.RuneCountInString(l) >= c.cols) || strings.Contains(l, "|") != c.bar || strings.Contains(l, "PPL 27.11") != c.ppl {
			t.Errorf("%d columns: %q (%d); want a bar %v, the PPL %v", c.cols, l, utf8.RuneCountInString(l), c.bar, c.ppl)
		}
	}
	b.close()
}

// progressLine is a plain progress line: tokens done, total, and the rest.
var progressLine = regexp.MustCompile(`^progress: ([0-9,]+) / ([0-9,]+) tokens \(([0-9.]+)%\)  elapsed \S+(.*)$`)

// TestEvalProgressLines: with stderr not a terminal (a buffer here, a log in
// Slurm or Kubernetes), eval prints plain progress lines at the interval of
// WGPU_EVAL_PROGRESS_INTERVAL, with counts that rise to the run's targets,
// the last one with the result's mean NLL to its printed digits; no
// terminal control codes. With the interval 0 it prints none.
func TestEvalProgressLines(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	text := filepath.Join(t.TempDir(), "corpus.txt")
	var sb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&sb, "Line %d of the play, and some words that %s.\n", i, strings.Repeat("follow ", i%5))
	}
	if err := os.WriteFile(text, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	args := []string{"eval", "--model", dir, "--data", text, "--device", "cpu", "--threads", "1", "--ctx", "64", "--json", jsonPath, "--no-token-cache"}

	t.Setenv(progressEnv, "5ms")
	_, stderr, err := cli(t, "", args...)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res pipeline.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(stderr, "\r\033") {
		t.Errorf("terminal control codes in a log: %q", stderr)
	}
	num := func(s string) int {
		n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var lines []string
	prev := -1
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, "progress:") {
			continue
		}
		m := progressLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("progress line %q", line)
		}
		done, total := num(m[1]), num(m[2])
		if done < prev || done > total || total != res.Tokens {
			t.Errorf("%q after %d done; want counts rising to the run's %d targets", line, prev, res.Tokens)
		}
		prev = done
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		t.Fatalf("no progress lines:\n%s", stderr)
	}
	last := lines[len(lines)-1]
	want := fmt.Sprintf("NLL %.3f  PPL %s", res.MeanNLL, formatPPL(res.MeanNLL))
	if !strings.Contains(last, fmt.Sprintf("%s / %s tokens (100.0%%)", commas(int64(res.Tokens)), commas(int64(res.Tokens)))) || !strings.HasSuffix(last, want) {
		t.Errorf("last progress line %q; want all %d targets and the result's %q", last, res.Tokens, want)
	}
	t.Logf("%d progress lines, the last %q", len(lines), last)

	t.Setenv(progressEnv, "0")
	if _, stderr, err = cli(t, "", args...); err != nil || strings.Contains(stderr, "progress:") {
		t.Errorf("interval 0: %v\n%s", err, stderr)
	}
}

// TestEvalLogCancelInsideBatch: the reports inside a CPU batch count part of
// it; a cancel drops that batch, and the library's last report (Done =
// Scored) takes the line back to what the result counts: the last line
// never shows more tokens than "interrupted after N".
func TestEvalLogCancelInsideBatch(t *testing.T) {
	var w bytes.Buffer
	l := newEvalLog(&w, time.Hour)
	t0 := time.Now().Add(-time.Minute) // lines were due long ago
	l.report(t0, wgpueval.Progress{Stage: "eval", Total: 336704})
	l.report(t0.Add(10*time.Second), wgpueval.Progress{Stage: "eval", Done: 73440, Total: 336704, Scored: 73440, NLLSum: 73440 * 8.8663})
	l.report(t0.Add(11*time.Second), wgpueval.Progress{Stage: "eval", Done: 77520, Total: 336704, Scored: 73440, NLLSum: 73440 * 8.8663})
	if got := l.line(t0.Add(11 * time.Second)); !strings.HasPrefix(got, "progress: 77,520 / 336,704 tokens") {
		t.Errorf("inside the batch: %q", got)
	}
	l.report(t0.Add(12*time.Second), wgpueval.Progress{Stage: "eval", Done: 73440, Total: 336704, Scored: 73440, NLLSum: 73440 * 8.8663})
	l.close()
	if got := w.String(); !strings.HasPrefix(got, "progress: 73,440 / 336,704 tokens (21.8%)") || strings.Count(got, "\n") != 1 {
		t.Errorf("close wrote %q, want one line of the 73,440 tokens scored", got)
	}
	// A report inside a batch that says less than one before it (the
	// layers of a smaller batch) still does not take the count back.
	l = newEvalLog(&bytes.Buffer{}, time.Hour)
	l.report(t0, wgpueval.Progress{Stage: "eval", Total: 1000})
	l.report(t0, wgpueval.Progress{Stage: "eval", Done: 600, Total: 1000, Scored: 500})
	l.report(t0, wgpueval.Progress{Stage: "eval", Done: 550, Total: 1000, Scored: 500})
	if l.done != 600 {
		t.Errorf("done %d after a report of less inside a batch, want 600 kept", l.done)
	}
	l.close()
}

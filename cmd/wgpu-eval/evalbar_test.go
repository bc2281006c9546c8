package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
)

// TestEvalBarMovesBetweenBatches: between the library's per-batch reports the
// line advances with the rate so far and shows an ETA, never passing the next
// batch.
func TestEvalBarMovesBetweenBatches(t *testing.T) {
	var w bytes.Buffer
	b := newEvalBar(&w)
	b.every = time.Hour // no redraws from the ticker in this test
	t0 := time.Unix(1000, 0)
	b.report(t0, wgpueval.Progress{Stage: "eval", Done: 0, Total: 81920})
	if l := b.line(t0.Add(time.Second)); !strings.Contains(l, "0/81920 tok") || !strings.Contains(l, "rate after the first batch") {
		t.Errorf("before the first batch: %q", l)
	}
	b.report(t0.Add(4*time.Second), wgpueval.Progress{Stage: "eval", Done: 8192, Total: 81920, Scored: 8192, NLLSum: 8192 * 3.412}) // 2048 tok/s
	var last int64
	for s := 5; s <= 7; s++ {
		done, rate := b.estimate(t0.Add(time.Duration(s) * time.Second))
		if done <= last || done >= 16384 || rate != 2048 {
			t.Errorf("at %ds: %d tokens at %.0f tok/s, want more than %d and fewer than the next batch", s, done, rate, last)
		}
		last = done
	}
	if done, _ := b.estimate(t0.Add(time.Minute)); done != 16383 {
		t.Errorf("a stalled batch: estimate %d, want it held below 16384", done)
	}
	l := b.line(t0.Add(5 * time.Second))
	if !strings.Contains(l, "10240/81920 tok") || !strings.Contains(l, "2048 tok/s") || !strings.Contains(l, "ETA 0:35") || !strings.Contains(l, "PPL 30.33") {
		t.Errorf("line %q", l)
	}
	b.close()
	if !strings.HasSuffix(w.String(), "\r\033[K") {
		t.Errorf("close does not clear the line: %q", w.String())
	}
}

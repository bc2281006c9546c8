package main

import (
	"bytes"
	"math"
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

// TestFormatPPL: perplexities keep three or four significant digits without
// an exponent up to a million, then four significant digits, and one past
// float64 (results cap it at the largest float64) says so.
func TestFormatPPL(t *testing.T) {
	for _, c := range []struct {
		mean        float64
		bar, result string
	}{
		{math.Log(3.41234), "3.412", "3.412"},
		{math.Log(30.3123), "30.31", "30.312"},
		{math.Log(50257), "50257.0", "50257.000"},
		{math.Log(999999), "999999.0", "999999.000"},
		{math.Log(12345678), "1.235e+07", "1.235e+07"},
		{345725, ">1.798e+308", ">1.798e+308"},
	} {
		ppl := min(math.Exp(c.mean), math.MaxFloat64) // as results hold it
		if got := formatPPL(c.mean); got != c.bar {
			t.Errorf("formatPPL(%g) = %q, want %q", c.mean, got, c.bar)
		}
		if got := formatPPLFixed(ppl); got != c.result {
			t.Errorf("formatPPLFixed(%g) = %q, want %q", ppl, got, c.result)
		}
	}
}

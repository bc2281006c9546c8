package wgpueval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after d (a
// deadlock would otherwise hang the test binary until its timeout).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v (deadlock?)", what, d)
	}
}

// closeAtEnd closes ev when the test ends, without hanging the test binary
// where a failed test left a run deadlocked.
func closeAtEnd(t *testing.T, ev *Evaluator) {
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			ev.Close()
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Close at the end of the test did not return")
		}
	})
}

// longText is enough text for several batches of 16 tokens.
var longText = strings.Repeat(dataText, 8)

// TestCloseFromCallback: Close called from the Evaluator's own callbacks
// (Progress during the evaluation, OnScored, OnText) cancels the run and
// returns at once; the run returns its partial result with
// context.Canceled, the device is released as it ends, and the Evaluator
// is closed.
func TestCloseFromCallback(t *testing.T) {
	for _, where := range []string{"progress", "onscored", "load", "ontext"} {
		t.Run(where, func(t *testing.T) {
			var ev *Evaluator
			var closeErr error
			closes := 0
			closeOnce := func() {
				if closes++; closes == 1 {
					closeErr = ev.Close()
				}
			}
			opt := Options{Device: DeviceCPU, Threads: 1, Offline: true}
			switch where {
			case "progress":
				opt.Progress = func(p Progress) {
					if p.Stage == "eval" && p.Scored > 0 {
						closeOnce()
					}
				}
			case "load":
				opt.Progress = func(p Progress) {
					if p.Stage == "load" {
						closeOnce()
					}
				}
			}
			var err error
			ev, err = Open(context.Background(), tinyModel(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			closeAtEnd(t, ev)
			eo := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true}
			if where == "onscored" {
				eo.OnScored = func([]TokenNLL) error { closeOnce(); return nil }
			}
			var res *Result
			var gen *Generation
			within(t, 10*time.Second, "the run whose callback called Close", func() {
				if where == "ontext" {
					gen, err = ev.Generate(context.Background(), "To be, or not to be", GenerateOptions{MaxNewTokens: 20,
						OnText: func(string) { closeOnce() }})
					return
				}
				res, err = ev.Evaluate(context.Background(), Text("speech", longText), eo)
			})
			if closes == 0 || closeErr != nil {
				t.Fatalf("Close called %d times from the callback, returned %v", closes, closeErr)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the run returned %v, want context.Canceled", err)
			}
			switch where {
			case "ontext":
				if gen == nil || gen.StopReason != StopCancelled || len(gen.Tokens) == 0 || len(gen.Tokens) >= 20 {
					t.Errorf("generation %+v, want a cancelled partial one", gen)
				}
			case "load": // cancelled before any batch
				if res != nil && res.Tokens != 0 {
					t.Errorf("result %+v after Close during the load", res)
				}
			default:
				if res == nil || !res.Interrupted || res.Tokens == 0 || res.Tokens >= res.TotalTokens {
					t.Errorf("result %+v, want an interrupted partial one", res)
				}
			}
			var closed bool
			within(t, 5*time.Second, "taking the Evaluator's lock after the run", func() {
				ev.mu.Lock()
				closed = ev.closed
				ev.mu.Unlock()
			})
			if !closed {
				t.Error("the device was not released when the run ended")
			}
			within(t, 5*time.Second, "Close again", func() { err = ev.Close() })
			if err != nil {
				t.Errorf("Close again: %v", err)
			}
			if _, err := ev.Evaluate(context.Background(), Text("x", dataText), EvalOptions{Ctx: 16}); err == nil || !strings.Contains(err.Error(), "closed") {
				t.Errorf("Evaluate after Close: %v", err)
			}
		})
	}
}

// TestCallsFromCallbackRefused: Evaluate, Generate and Prepare called from
// the Evaluator's own callbacks return ErrReentrant at once (they would
// wait for the run calling them), and the run goes on to its full result.
func TestCallsFromCallbackRefused(t *testing.T) {
	var ev *Evaluator
	var inner []error
	call := func(which string) {
		var err error
		switch which {
		case "evaluate":
			_, err = ev.Evaluate(context.Background(), Text("x", dataText), EvalOptions{Ctx: 16})
		case "generate":
			_, err = ev.Generate(context.Background(), "x", GenerateOptions{MaxNewTokens: 1})
		case "prepare":
			_, err = ev.Prepare(context.Background())
		}
		inner = append(inner, err)
	}
	var progressCall string
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Threads: 1, Offline: true, Progress: func(p Progress) {
		if p.Stage == "eval" && p.Done > 0 && progressCall != "" {
			call(progressCall)
			progressCall = ""
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	closeAtEnd(t, ev)
	for _, c := range []struct{ callback, call string }{
		{"progress", "evaluate"}, {"progress", "prepare"}, {"onscored", "generate"}, {"onscored", "evaluate"}, {"ontext", "evaluate"},
	} {
		inner = nil
		opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true}
		switch c.callback {
		case "progress":
			progressCall = c.call
		case "onscored":
			opt.OnScored = func([]TokenNLL) error {
				if len(inner) == 0 {
					call(c.call)
				}
				return nil
			}
		}
		name := c.call + " from " + c.callback
		var res *Result
		var gen *Generation
		within(t, 10*time.Second, name, func() {
			if c.callback == "ontext" {
				gen, err = ev.Generate(context.Background(), "To be", GenerateOptions{MaxNewTokens: 3, OnText: func(string) {
					if len(inner) == 0 {
						call(c.call)
					}
				}})
				return
			}
			res, err = ev.Evaluate(context.Background(), Text("speech", longText), opt)
		})
		if len(inner) != 1 || !errors.Is(inner[0], ErrReentrant) {
			t.Errorf("%s: the inner call returned %v, want ErrReentrant", name, inner)
		}
		if err != nil || c.callback != "ontext" && (res.Interrupted || res.Tokens == 0) || c.callback == "ontext" && len(gen.Tokens) != 3 {
			t.Errorf("%s: the outer run returned %v, %+v, %+v; want it complete", name, err, res, gen)
		}
	}
}

// TestConcurrentCallDuringCallback: a call from another goroutine while a
// callback runs is not mistaken for one from the callback: it waits for
// the run and succeeds.
func TestConcurrentCallDuringCallback(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Threads: 1, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	closeAtEnd(t, ev)
	var other sync.WaitGroup
	var otherErr error
	first := true
	within(t, 20*time.Second, "an Evaluate beside one inside a callback", func() {
		_, err = ev.Evaluate(context.Background(), Text("speech", longText), EvalOptions{
			Ctx: 16, BatchTokens: 16, NoTokenCache: true,
			OnScored: func([]TokenNLL) error {
				if !first {
					return nil
				}
				first = false
				other.Go(func() {
					_, otherErr = ev.Evaluate(context.Background(), Text("x", dataText), EvalOptions{Ctx: 16, NoTokenCache: true})
				})
				// Stay in the callback until the other call has begun (past
				// its check for a call from a callback).
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					ev.runMu.Lock()
					n := len(ev.running)
					ev.runMu.Unlock()
					if n == 2 {
						return nil
					}
				}
				t.Error("the other Evaluate never began")
				return nil
			},
		})
		other.Wait()
	})
	if err != nil || otherErr != nil {
		t.Errorf("the run: %v; the call beside it: %v", err, otherErr)
	}
}

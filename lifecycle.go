package wgpueval

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
)

// ErrClosed is the error (wrapped) of an Evaluator's methods called after
// Close.
var ErrClosed = errors.New("evaluator closed")

// ErrReentrant is the error (wrapped) of Evaluate, Generate and Prepare
// called from one of the Evaluator's own callbacks (Options.Progress and
// Log, EvalOptions.OnScored, GenerateOptions.OnText): they would wait for
// the run that is calling back, which waits for the callback. Close may be
// called from a callback: it cancels the run. (A call made from a callback
// of another Evaluator, at a moment when this one is inside a callback of
// its own on another goroutine, is refused too: Go gives a goroutine no
// identity to tell the two apart by.)
var ErrReentrant = errors.New("called from one of the evaluator's own callbacks, which the run calling it waits for " +
	"(to stop the run from there, call Close or cancel its context)")

// begin registers a call that Close must cancel: it returns ctx with a
// cancel of its own and the function the call defers, or an error once the
// Evaluator is closing.
func (e *Evaluator) begin(ctx context.Context) (context.Context, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.closing {
		cancel()
		return nil, nil, ErrClosed
	}
	if e.running == nil {
		e.running = map[*context.CancelFunc]struct{}{}
	}
	e.running[&cancel] = struct{}{}
	return ctx, func() {
		e.runMu.Lock()
		delete(e.running, &cancel)
		e.runMu.Unlock()
		cancel()
	}, nil
}

// Close releases the device and the model's files. Evaluations and
// generations under way are cancelled first (they return their partial
// results with context.Canceled). Called from another goroutine, Close waits
// for them to return and releases everything before it returns. Called from
// one of the Evaluator's callbacks (Options.Progress, EvalOptions.OnScored,
// ...), it cannot wait for the run that is calling it: it cancels the runs
// and returns nil at once, and the device is released as the run ends (an
// error in that is reported through Options.Log). A GPU's pipeline cache that
// cannot be saved is no error of Close: Options.Log gets a warning.
func (e *Evaluator) Close() error {
	inCallback := e.fromCallback()
	e.runMu.Lock()
	e.closing = true
	e.closeLater = e.closeLater || inCallback
	for cancel := range e.running {
		(*cancel)()
	}
	e.runMu.Unlock()
	if inCallback {
		// The run calling back may hold e.mu until the callback returns;
		// where none does, release now, else its unlock does.
		if !e.mu.TryLock() {
			return nil
		}
		defer e.mu.Unlock()
		return e.release()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.release()
}

// release closes the device and the model's files, once. e.mu must be held.
func (e *Evaluator) release() error {
	if e.closed {
		return nil
	}
	e.closed = true
	errs := []error{e.ck.Close()}
	if e.backend != nil {
		errs = append(errs, e.backend.Close())
	}
	return errors.Join(errs...)
}

// unlock lets go of e.mu. Where Close was called from a callback meanwhile
// (which returned without waiting for e.mu), the device is released then,
// by whoever takes e.mu next: this call, or the holder after it, which
// unlocks too. Taking it again after letting go, rather than releasing
// before, leaves no moment at which a Close from a callback that found e.mu
// held would go unserved.
func (e *Evaluator) unlock() {
	e.mu.Unlock()
	e.runMu.Lock()
	later := e.closeLater
	e.runMu.Unlock()
	if !later || !e.mu.TryLock() {
		return
	}
	defer e.mu.Unlock()
	if err := e.release(); err != nil {
		e.log("close: %v", err)
	}
}

// closingNow reports whether Close has been called.
func (e *Evaluator) closingNow() bool {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	return e.closing
}

// callUser runs call, which calls one of e's user callbacks, counted in
// e.callbacks; fromCallback looks for this function on the stack.
func callUser(e *Evaluator, call func()) {
	e.callbacks.Add(1)
	defer e.callbacks.Add(-1)
	call()
}

// callUserName is callUser's name in stack frames.
var callUserName = runtime.FuncForPC(reflect.ValueOf(callUser).Pointer()).Name()

// fromCallback reports whether the calling goroutine is inside one of e's
// user callbacks: one is in progress, and callUser is on this goroutine's
// stack. (A goroutine inside a callback of another Evaluator, while e is
// inside one of its own on another goroutine, is taken for one too: Go
// gives a goroutine no identity to tell them apart by.)
func (e *Evaluator) fromCallback() bool {
	if e.callbacks.Load() == 0 {
		return false
	}
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs)
		if n < len(pcs) {
			pcs = pcs[:n]
			break
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function == callUserName {
			return true
		}
		if !more {
			return false
		}
	}
}

// report passes p to Options.Progress, as a user callback.
func (e *Evaluator) report(p Progress) {
	if e.opt.Progress != nil {
		callUser(e, func() { e.opt.Progress(p) })
	}
}

// log passes a message to Options.Log, as a user callback.
func (e *Evaluator) log(format string, a ...any) {
	if e.opt.Log != nil {
		msg := fmt.Sprintf(format, a...)
		callUser(e, func() { e.opt.Log(msg) })
	}
}

// onScored is EvalOptions.OnScored called as a user callback; nil for nil.
func (e *Evaluator) onScored(f func([]TokenNLL) error) func([]TokenNLL) error {
	if f == nil {
		return nil
	}
	return func(batch []TokenNLL) (err error) {
		callUser(e, func() { err = f(batch) })
		return err
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// signalError is the cause of a context canceled by a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "canceled by " + signalDesc(e.sig) }

// signalDesc names a signal as a user knows it.
func signalDesc(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return "signal " + sig.String()
}

// Is makes a signalError a context.Canceled, as the context's Err says.
func (e signalError) Is(target error) bool { return target == context.Canceled }

// signalName is how a user sends sig again.
func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "Ctrl-C"
	}
	return sig.String()
}

// signalStatus is the shell's exit status for a process ended by sig: 128 plus
// its number (130 for SIGINT, 143 for SIGTERM).
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// notifyContext is signal.NotifyContext for SIGINT and SIGTERM, except that it
// does not swallow later signals: the first cancels the context (its cause a
// signalError) so the run can stop cleanly, and says so on stderr at once,
// and a second ends the process at
// once with exit, after a line on stderr, in case the run does not stop (a read
// that ignores the context). stop releases the signals.
func notifyContext(parent context.Context, stderr io.Writer, exit func(int), cmd string) (ctx context.Context, stop func()) {
	what := "" // what stopping means for the command
	if cmd == "eval" {
		what = "nothing new starts; work already on the device finishes and is counted; "
	}
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "\nwgpu-eval: %s: stopping (%s%s again exits at once)\n", signalDesc(sig), what, signalName(sig))
			cancel(signalError{sig})
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "\nwgpu-eval: %v again: exiting now\n", sig)
			exit(signalStatus(sig))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// signaled returns the signal that canceled ctx, if one did.
func signaled(ctx context.Context) (os.Signal, bool) {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return se.sig, true
	}
	return nil, false
}

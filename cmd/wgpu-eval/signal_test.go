//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildCLI builds the command into a temporary folder and returns its path.
func buildCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "wgpu-eval")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startCLI starts bin with args and an environment of its own caches; the
// returned channel yields its exit once it ends.
func startCLI(t *testing.T, bin string, env []string, stdin *os.File, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	tmp := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "HOME="+tmp,
		"HF_HUB_CACHE="+filepath.Join(tmp, "hub"), "HF_HUB_OFFLINE=", "HF_TOKEN=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		done <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return cmd, &stderr, done
}

// wantExit waits at most d for the process to end and checks its status.
func wantExit(t *testing.T, done <-chan error, d time.Duration, code int, stderr *bytes.Buffer) {
	t.Helper()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != code {
			t.Errorf("ended with %v, want exit status %d; stderr:\n%s", err, code, stderr)
		}
	case <-time.After(d):
		t.Fatalf("still running %v after the signal; stderr:\n%s", d, stderr)
	}
}

// One SIGTERM during a download stops the run promptly with status 143.
func TestSIGTERMExits143(t *testing.T) {
	bin := buildCLI(t)
	asked := make(chan struct{}, 1)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done() // a hub that never answers
	}))
	defer hub.Close()
	defer hub.CloseClientConnections()
	data := filepath.Join(t.TempDir(), "c.txt")
	os.WriteFile(data, []byte("hello world\n"), 0o644)
	cmd, stderr, done := startCLI(t, bin, []string{"HF_ENDPOINT=" + hub.URL}, nil, "--model", "gpt2", "--data", data, "--quiet")
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatalf("the hub was never asked; stderr:\n%s", stderr)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	wantExit(t, done, 5*time.Second, 143, stderr)
}

// The first SIGTERM ends a run blocked reading a stdin that never ends, with
// status 143: the read honours the signal (it used to ignore it, so only a
// second signal ended the process).
func TestSIGTERMEndsStdinRead(t *testing.T) {
	bin := buildCLI(t)
	dir, _, _ := tinyModel(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() // held open: the read never ends
	cmd, stderr, done := startCLI(t, bin, []string{"HF_HUB_OFFLINE=1"}, r, "--model", dir, "--data", "-", "--quiet")
	r.Close()
	time.Sleep(500 * time.Millisecond) // past signal.Notify and into the read
	cmd.Process.Signal(syscall.SIGTERM)
	wantExit(t, done, 10*time.Second, 143, stderr)
}

// A second signal ends the process at once through exit, with the shell's
// status for it, in case the run does not stop at the first (which only
// cancels the context).
func TestSecondSignalExits(t *testing.T) {
	var stderr bytes.Buffer
	exited := make(chan int, 1)
	ctx, stop := notifyContext(context.Background(), &stderr, func(code int) { exited <- code }, "eval")
	defer stop()
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGTERM did not cancel the context")
	}
	if sig, ok := signaled(ctx); !ok || sig != syscall.SIGTERM {
		t.Errorf("signaled = %v, %v", sig, ok)
	}
	select {
	case code := <-exited:
		t.Fatalf("exit(%d) at the first signal", code)
	default:
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case code := <-exited:
		if code != 143 {
			t.Errorf("exit(%d), want 143", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGTERM did not exit")
	}
	if !strings.Contains(stderr.String(), "again: exiting now") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestStopMessageByCommand: the line a first signal prints speaks of work on
// the device only for eval, which counts it; the other commands just stop.
// The command is found as main finds it (commandOf).
func TestStopMessageByCommand(t *testing.T) {
	for _, c := range []struct {
		args   []string
		device bool
	}{
		{[]string{"--model", "gpt2"}, true},
		{[]string{"eval", "--model", "gpt2"}, true},
		{[]string{"tokenize", "-o", "-"}, false},
		{[]string{"bench"}, false},
		{[]string{"generate", "-p", "x"}, false},
	} {
		var stderr bytes.Buffer
		ctx, stop := notifyContext(context.Background(), &stderr, func(int) {}, commandOf(c.args))
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the SIGTERM did not cancel the context")
		}
		stop()
		line := stderr.String()
		if !strings.Contains(line, "SIGTERM: stopping (") || strings.Contains(line, "on the device") != c.device {
			t.Errorf("%v: %q (about the device's work: want %v)", c.args, line, c.device)
		}
	}
}

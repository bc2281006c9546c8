//go:build unix

package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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

// A second SIGTERM ends a run that does not stop at the first (here, one
// blocked reading a stdin that never ends) at once, with status 143; before,
// every signal after the first was swallowed.
func TestSecondSIGTERMExitsAtOnce(t *testing.T) {
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
	select {
	case err := <-done:
		t.Fatalf("ended at the first signal (%v): the test no longer blocks; stderr:\n%s", err, stderr)
	case <-time.After(300 * time.Millisecond):
	}
	// Go coalesces a signal that arrives before the last one was handled, so
	// under load one more may be needed: repeat until the process ends.
	stopRepeat := make(chan struct{})
	defer close(stopRepeat)
	go func() {
		for {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-stopRepeat:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	wantExit(t, done, 10*time.Second, 143, stderr)
}

//go:build unix

package hub

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// lockHolderEnv makes TestLockHolderProcess hold the lock file it names.
const lockHolderEnv = "WGPU_EVAL_HUB_TEST_HOLD_LOCK"

// TestLockHolderProcess is the child of TestLockOfKilledProcessIsFree: it
// takes the lock, says so, and waits to be killed. It does nothing otherwise.
func TestLockHolderProcess(t *testing.T) {
	path := os.Getenv(lockHolderEnv)
	if path == "" {
		return
	}
	if _, err := lockFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
}

// TestLockOfKilledProcessIsFree: a download lock held by another process
// makes lockFile wait, and is free as soon as that process is killed with
// SIGKILL (no stale lock file to delete by hand).
func TestLockOfKilledProcessIsFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".locks", "models--org--m", "abc.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = lockFile(ctx, path)
	cancel()
	if err == nil {
		t.Fatal("lock taken while another process holds it")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	unlock, err := lockFile(ctx, path)
	if err != nil {
		t.Fatalf("lock of a killed process: %v", err)
	}
	unlock()
}

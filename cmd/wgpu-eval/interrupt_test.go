//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestInterruptSaysHowFar: Ctrl-C during an evaluation ends the command with
// status 130 and, on a line of its own, "interrupted after N of M tokens",
// where M is the number of targets the whole run would have scored (here
// counted from the text's ids: all but the first of each 64-token window);
// --json gets the partial result, marked interrupted, with the same counts;
// the signal is acknowledged on stderr when it arrives.
func TestInterruptSaysHowFar(t *testing.T) {
	bin := buildCLI(t)
	text := strings.Repeat("Now is the winter of our discontent\nMade glorious summer by this sun of York;\n", 1500)
	data := filepath.Join(t.TempDir(), "long.txt")
	if err := os.WriteFile(data, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	n := len(tok.Encode(text))
	wantTotal := n - (n+63)/64

	tmp := t.TempDir()
	cmd := exec.Command(bin, "--model", filepath.Join(goldenDir, "tiny"), "--data", data, "--ctx", "64",
		"--device", "cpu", "--threads", "1", "--no-token-cache", "--json", filepath.Join(tmp, "partial.json"))
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "HOME="+tmp, "HF_HUB_OFFLINE=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	deadline := time.After(60 * time.Second)
	for started := false; !started; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the command ended before evaluating; stderr:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			started = strings.HasPrefix(l, "device: ")
		case <-deadline:
			t.Fatalf("no evaluation started; stderr so far:\n%s", strings.Join(seen, "\n"))
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("ended with %v, want exit status 130", err)
	}
	if !slices.ContainsFunc(seen, func(l string) bool { return strings.Contains(l, "SIGINT (Ctrl-C): stopping (nothing new starts") }) {
		t.Errorf("the signal was not acknowledged; stderr:\n%s", strings.Join(seen, "\n"))
	}
	re := regexp.MustCompile(`^interrupted after (\d+) of (\d+) tokens`)
	for _, l := range seen {
		if m := re.FindStringSubmatch(l); m != nil {
			done, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			t.Log(l)
			if total != wantTotal || done < 0 || done >= total {
				t.Errorf("%q: want N below M = %d", l, wantTotal)
			}
			b, err := os.ReadFile(filepath.Join(tmp, "partial.json"))
			if err != nil {
				t.Fatalf("no partial --json: %v", err)
			}
			var r pipeline.Result
			if err := json.Unmarshal(b, &r); err != nil || !r.Interrupted || r.Tokens != done || r.TotalTokens != wantTotal {
				t.Errorf("partial JSON: interrupted %v, %d of %d tokens (%v); want true, %d of %d", r.Interrupted, r.Tokens, r.TotalTokens, err, done, wantTotal)
			}
			return
		}
	}
	t.Errorf("no line \"interrupted after N of M tokens\"; stderr:\n%s", strings.Join(seen, "\n"))
}

// Package sysmem says how much memory this process may still take, so that
// an allocation sized by input (a corpus, a KV cache, a model's weights) is
// refused with a clear error naming what needs how much, instead of ending in
// a fatal out-of-memory. It imports nothing of this module.
package sysmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Env names an environment variable that, when set to a number of bytes,
// replaces what the system says is available (for tests, and for machines
// whose /proc/meminfo does not tell the truth).
const Env = "WGPU_EVAL_MEMORY_AVAILABLE"

// Available returns the bytes of memory this process may still allocate: the
// smaller of MemAvailable in /proc/meminfo and what the cgroup's limit leaves
// (memory.max - memory.current, or cgroup v1's limit - usage), or the value
// of $WGPU_EVAL_MEMORY_AVAILABLE. ok is false where nothing tells (not Linux).
// A value of the variable that is not a number of bytes is ignored here
// (Check refuses it).
func Available() (bytes uint64, ok bool) {
	if n, set, err := override(); set && err == nil {
		return n, true
	}
	if n, ok1 := memAvailable("/proc/meminfo"); ok1 {
		bytes, ok = n, true
	}
	for _, f := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		limit, ok1 := readUint(f[0])
		used, ok2 := readUint(f[1])
		if !ok1 || !ok2 || limit >= 1<<60 { // cgroup v1 writes "no limit" as a huge number
			continue
		}
		left := uint64(0)
		if limit > used {
			left = limit - used
		}
		if !ok || left < bytes {
			bytes, ok = left, true
		}
		break
	}
	return bytes, ok
}

// memAvailable reads MemAvailable (kB) from a meminfo file.
func memAvailable(path string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// readUint reads a file holding one number ("max" and errors: false).
func readUint(path string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil
}

// Error is a planned allocation larger than the memory available.
type Error struct {
	What      string // what needs it: "corpus data.txt (text)", "KV cache"
	Need      uint64
	Available uint64
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s needs %s of memory, but only %s is available (MemAvailable, or the cgroup's limit; $%s overrides)",
		e.What, Bytes(e.Need), Bytes(e.Available), Env)
}

// override is $WGPU_EVAL_MEMORY_AVAILABLE: set reports whether it is set,
// err whether it is not a number of bytes.
func override() (n uint64, set bool, err error) {
	v := os.Getenv(Env)
	if v == "" {
		return 0, false, nil
	}
	n, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("$%s = %q is not a number of bytes", Env, v)
	}
	return n, true, nil
}

// Check returns an *Error when need bytes are more than Available; nil when
// they fit or nothing tells what is available; an error naming the variable
// when $WGPU_EVAL_MEMORY_AVAILABLE is set but not a number of bytes.
func Check(what string, need uint64) error {
	if _, _, err := override(); err != nil {
		return err
	}
	avail, ok := Available()
	if !ok || need <= avail {
		return nil
	}
	return &Error{What: what, Need: need, Available: avail}
}

// Bytes formats n for people: "512 B", "3.2 MB", "6.4 GB" (powers of 1000).
func Bytes(n uint64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

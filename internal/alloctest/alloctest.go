// Package alloctest measures what a piece of code allocates, for tests that
// bound allocations sized by untrusted input.
package alloctest

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// During returns the bytes f allocated, with the heap held to a soft limit of
// 256 MiB so that a runaway allocation fails the test rather than the machine.
func During(t testing.TB, f func()) uint64 {
	t.Helper()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

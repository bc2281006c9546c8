//go:build unix

package model

import (
	"syscall"
	"time"
)

// procCPU is the CPU time this process has used (0 where unknown): the
// benchmarks' figures per CPU second hold on a machine other work shares.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

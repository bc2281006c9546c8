//go:build !unix

package model_test

import "time"

// cpuTime is 0 where the process's CPU time is not read (not unix).
func cpuTime() time.Duration { return 0 }

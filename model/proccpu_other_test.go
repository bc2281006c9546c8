//go:build !unix

package model

import "time"

// procCPU is unknown here.
func procCPU() time.Duration { return 0 }

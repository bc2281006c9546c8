//go:build unix

package infile

import "syscall"

// openFlags makes open(2) of a FIFO return at once instead of waiting for a
// writer (on a regular file O_NONBLOCK changes nothing).
const openFlags = syscall.O_NONBLOCK

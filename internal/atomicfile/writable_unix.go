//go:build unix

package atomicfile

import "golang.org/x/sys/unix"

// canWriteIn asks the system whether this process may create a file in dir
// (access(2): EROFS on a read-only file system, EACCES without permission).
func canWriteIn(dir string) error { return unix.Access(dir, unix.W_OK) }

//go:build unix

package download

import "golang.org/x/sys/unix"

// diskFree is the space an unprivileged writer may still use on the file
// system holding dir, in bytes, and whether the file system says (one that
// reports no blocks at all, as some FUSE and network file systems do, says
// nothing).
func diskFree(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Blocks == 0 {
		return 0, false
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	return int64(min(free, 1<<62)), true
}

//go:build darwin || freebsd

package hashcache

import "syscall"

// statTimes is st's modification and status-change times.
func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtimespec, st.Ctimespec }

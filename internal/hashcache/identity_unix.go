//go:build linux || darwin || freebsd

package hashcache

import (
	"io/fs"
	"syscall"
)

// identityOf is fi's identity; known is false where the system gives none.
func identityOf(fi fs.FileInfo) (id identity, known bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return identity{}, false
	}
	mtime, ctime := statTimes(st)
	return identity{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size, MtimeNs: mtime.Nano(), CtimeNs: ctime.Nano()}, true
}

//go:build windows

package download

import "golang.org/x/sys/windows"

// diskFree is the space the caller may still use on the volume holding dir,
// in bytes (its quota included), and whether the volume says.
func diskFree(dir string) (int64, bool) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, false
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil || total == 0 {
		return 0, false
	}
	return int64(min(avail, 1<<62)), true
}

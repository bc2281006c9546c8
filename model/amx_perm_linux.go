//go:build linux && amd64 && !purego

package model

import "syscall"

// Linux's arch_prctl code for requesting a dynamically enabled XSAVE
// feature, and the tile data's feature number (asm/prctl.h, the kernel's
// x86 AMX documentation).
const (
	archReqXcompPerm = 0x1023
	xfeatureTileData = 18
)

// requestTileData asks Linux for the process's permission to use the AMX
// tile data (Linux 5.16 and later): false if refused or unknown.
func requestTileData() bool {
	_, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureTileData, 0)
	return e == 0
}

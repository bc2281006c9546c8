//go:build amd64 && !purego && !linux

package model

// requestTileData: the AMX kernels are used on Linux only (where the
// process asks for the tile state and the tests ran); elsewhere, no AMX.
func requestTileData() bool { return false }

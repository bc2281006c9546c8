//go:build !linux && !darwin && !freebsd

package hashcache

import "io/fs"

// identityOf is fi's identity: none here (no status-change time), so every
// file is hashed.
func identityOf(fs.FileInfo) (identity, bool) { return identity{}, false }

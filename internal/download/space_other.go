//go:build !unix && !windows

package download

// diskFree says nothing where the platform has no call for it.
func diskFree(string) (int64, bool) { return 0, false }

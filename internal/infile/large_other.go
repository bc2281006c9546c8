//go:build !linux

package infile

// MakeLarge returns make([]byte, n) for data the size of a file, which the
// caller writes whole at once (a read, a copy), then calls touched. On
// Linux it asks for huge pages for it; elsewhere touched does nothing.
func MakeLarge(n int) (b []byte, touched func()) {
	return make([]byte, n), func() {}
}

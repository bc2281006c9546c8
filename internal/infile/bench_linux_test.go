package infile

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// BenchmarkReadFile reads a 64 MiB file into new memory each time (the
// memory of the last read is given back to the system first, untimed, as a
// run reads its corpus once): in one part into 4 KiB pages, as ReadFile did,
// in parts, and in parts into huge pages where the system gives them on
// request (ReadFile now). Most of its cost is the first touch of the
// memory, not the copy.
func BenchmarkReadFile(b *testing.B) {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	huge := hugePageSize
	defer func(n int64) { partsFrom, hugePageSize = n, huge }(partsFrom)
	for _, c := range []struct {
		name  string
		parts int64
		huge  func() int
	}{
		{"one-part", 1 << 40, func() int { return 0 }},
		{"parts", partsFrom, func() int { return 0 }},
		{"parts-huge", partsFrom, huge},
	} {
		b.Run(c.name, func(b *testing.B) {
			partsFrom, hugePageSize = c.parts, c.huge
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				b.StopTimer()
				debug.FreeOSMemory()
				b.StartTimer()
				if _, err := ReadFile(path, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

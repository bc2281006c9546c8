package infile

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MakeLarge returns make([]byte, n) for data the size of a file, which the
// caller writes whole at once (a read, a copy), then calls touched.
//
// Where Linux gives transparent huge pages only to memory that asks for
// them (the "madvise" mode, Debian's and Ubuntu's default), the whole huge
// pages (2 MiB on x86-64) of b ask for them until touched is called: the
// first write of each page of new memory is a page fault, which costs far
// more than the copy (measured on a virtual machine: 200 MB read into
// 4 KiB pages 1.0 s of CPU, with the first read of them; into 2 MiB pages
// 0.1 s). Go's runtime asks for none. The advice is taken back once b is
// written, so memory that b leaves to the heap later is not made of huge
// pages for small objects (which would hold a whole one each). In the
// "always" mode b has huge pages anyway; in "never" none.
func MakeLarge(n int) (b []byte, touched func()) {
	b = make([]byte, n)
	size := hugePageSize()
	if size == 0 || n < 2*size {
		return b, func() {}
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (size - int(p%uintptr(size))) % size
	whole := b[lo : lo+(n-lo)/size*size]
	if len(whole) == 0 || unix.Madvise(whole, unix.MADV_HUGEPAGE) != nil {
		return b, func() {}
	}
	return b, func() { unix.Madvise(whole, unix.MADV_NOHUGEPAGE) }
}

// hugePageSize is the size of a transparent huge page where the system
// gives them to memory that asks (the "madvise" mode); 0 otherwise.
var hugePageSize = sync.OnceValue(func() int {
	const dir = "/sys/kernel/mm/transparent_hugepage/"
	mode, err := os.ReadFile(dir + "enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0
	}
	size, err := os.ReadFile(dir + "hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(size)))
	if err != nil || n <= 0 || n&(n-1) != 0 {
		return 0
	}
	return n
})

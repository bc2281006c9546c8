package infile

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// Where the system gives huge pages only to memory that asks for them,
// MakeLarge's memory asks for them (its mapping carries the flag "hg")
// until touched, then asks not to (flag "nh"): the advice covers the first
// touch only.
func TestMakeLargeAdvice(t *testing.T) {
	size := hugePageSize()
	if size == 0 {
		t.Skip("transparent huge pages are not in the madvise mode here")
	}
	b, touched := MakeLarge(4 * size)
	mid := uintptr(unsafe.Pointer(&b[2*size])) // inside a whole huge page of b
	if flags := vmFlags(t, mid); !strings.Contains(flags, " hg") {
		t.Errorf("before touched: flags %q, want hg", flags)
	}
	for i := range b {
		b[i] = 1
	}
	touched()
	if flags := vmFlags(t, mid); !strings.Contains(flags, " nh") || strings.Contains(flags, " hg") {
		t.Errorf("after touched: flags %q, want nh", flags)
	}
}

// vmFlags is the VmFlags line of /proc/self/smaps for the mapping holding
// addr.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Count(strings.Fields(line)[0], "-") == 1 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimPrefix(line, "VmFlags:")
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}

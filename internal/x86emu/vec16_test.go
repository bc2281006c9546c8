package x86emu

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// elem16 is 16-bit element i of register r.
func elem16(m *Machine, r, i int) uint16 { return uint16(m.Z[r][i/2] >> (16 * uint(i&1))) }

// elemRegions lists one 2-byte region per set bit i < n of mask, at base+2i:
// exactly the memory a masked VMOVDQU16 may touch.
func elemRegions(base uint64, mask uint64, n int, write bool) []Region {
	rs := []Region{{Addr: base, Size: 0}} // never nil: confined even with no bit set
	for i := range n {
		if mask>>uint(i)&1 != 0 {
			rs = append(rs, Region{Addr: base + 2*uint64(i), Size: 2, Write: write})
		}
	}
	return rs
}

// VMOVDQU16 loads at every length, merging and zeroing: element i takes
// memory word i where mask bit i is set, else keeps its old value or becomes
// zero; the bits above VL become zero. Masked-off words are not read (the
// Memory allowed is only the active words), and a mask reaching one word
// past the allowed memory is caught.
func TestVMOVDQU16Load(t *testing.T) {
	mem := make([]uint16, 64)
	for i := range mem {
		mem[i] = uint16(0x1100*(i%15) + i + 1)
	}
	var pin runtime.Pinner
	pin.Pin(&mem[0])
	defer pin.Unpin()
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	loads := []struct {
		code    string // objdump's reading in the comment
		reg, l  int
		zeroing bool
	}{
		{"62e1ffc96f00", 16, 64, true}, // vmovdqu16 zmm16{k1}{z},ZMMWORD PTR [rax]
		{"62f1ff496f00", 0, 64, false}, // vmovdqu16 zmm0{k1},ZMMWORD PTR [rax]
		{"62f1ffa96f00", 0, 32, true},  // vmovdqu16 ymm0{k1}{z},YMMWORD PTR [rax]
		{"62f1ff296f00", 0, 32, false}, // vmovdqu16 ymm0{k1},YMMWORD PTR [rax]
		{"62f1ff896f00", 0, 16, true},  // vmovdqu16 xmm0{k1}{z},XMMWORD PTR [rax]
		{"62f1ff096f00", 0, 16, false}, // vmovdqu16 xmm0{k1},XMMWORD PTR [rax]
	}
	for _, ld := range loads {
		n := ld.l / 2
		for _, mask := range []uint64{0, 1, 1<<7 - 1, 1<<uint(n-1) - 1, 1<<uint(n) - 1, 0x5555_5555, 0x8000_0001 & (1<<uint(n) - 1), ^uint64(0)} {
			name := fmt.Sprintf("%s k1=%#x", ld.code, mask)
			var m Machine
			for i := range m.Z[ld.reg] {
				m.Z[ld.reg][i] = 0xDEADBEEF
			}
			m.K[1] = mask
			m.GPR[rAX] = base
			m.Memory = elemRegions(base, mask, n, false)
			if err := run(t, &m, ld.code+" c3"); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i := range 32 {
				var want uint16
				switch {
				case i >= n:
				case mask>>uint(i)&1 != 0:
					want = mem[i]
				case !ld.zeroing:
					want = 0xBEEF
					if i%2 == 1 {
						want = 0xDEAD
					}
				}
				if got := elem16(&m, ld.reg, i); got != want {
					t.Fatalf("%s: element %d = %#04x, want %#04x", name, i, got, want)
				}
			}
			// One more active word than the memory allowed: caught.
			if mask < 1<<uint(n)-1 && mask&(mask+1) == 0 {
				m.Memory = elemRegions(base, mask, n, false)
				m.K[1] = mask<<1 | 1
				if err := run(t, &m, ld.code+" c3"); err == nil || !strings.Contains(err.Error(), "outside the allowed memory") {
					t.Errorf("%s with k1=%#x: %v, want a read outside the allowed memory", ld.code, m.K[1], err)
				}
			}
		}
	}
	// The kernels' unmasked form, [r8+r13*2], reads the whole vector.
	var m Machine
	m.GPR[8], m.GPR[13] = base, 3
	m.Memory = []Region{{Addr: base + 6, Size: 64}}
	if err := run(t, &m, "6281ff486f0468 c3"); err != nil { // vmovdqu16 zmm16,ZMMWORD PTR [r8+r13*2]
		t.Fatal(err)
	}
	for i := range 32 {
		if got := elem16(&m, 16, i); got != mem[i+3] {
			t.Fatalf("unmasked: element %d = %#04x, want %#04x", i, got, mem[i+3])
		}
	}
	m.GPR[13] = 4 // one word past the allowed memory
	if err := run(t, &m, "6281ff486f0468 c3"); err == nil || !strings.Contains(err.Error(), "outside the allowed memory") {
		t.Errorf("unmasked read past the region: %v", err)
	}
	clear(mem)
}

// VMOVDQU16 stores write the active words only, and no other byte; between
// registers the destination merges, with the bits above VL zeroed.
func TestVMOVDQU16Store(t *testing.T) {
	mem := make([]uint16, 32)
	var pin runtime.Pinner
	pin.Pin(&mem[0])
	defer pin.Unpin()
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	for _, st := range []struct {
		code string
		l    int
	}{
		{"62f1ff497f08", 64}, // vmovdqu16 ZMMWORD PTR [rax]{k1},zmm1
		{"62f1ff297f08", 32}, // vmovdqu16 YMMWORD PTR [rax]{k1},ymm1
		{"62f1ff097f08", 16}, // vmovdqu16 XMMWORD PTR [rax]{k1},xmm1
	} {
		n := st.l / 2
		for _, mask := range []uint64{0, 1, 0x5A5A_A5A5, ^uint64(0)} {
			for i := range mem {
				mem[i] = 0xEEEE
			}
			var m Machine
			for i := range 16 {
				m.Z[1][i] = uint32(2*i+1)<<16 | uint32(2*i)
			}
			m.K[1] = mask
			m.GPR[rAX] = base
			m.Memory = elemRegions(base, mask, n, true)
			if err := run(t, &m, st.code+" c3"); err != nil {
				t.Fatalf("%s k1=%#x: %v", st.code, mask, err)
			}
			for i, got := range mem {
				want := uint16(0xEEEE)
				if i < n && mask>>uint(i)&1 != 0 {
					want = uint16(i)
				}
				if got != want {
					t.Fatalf("%s k1=%#x: word %d = %#04x, want %#04x", st.code, mask, i, got, want)
				}
			}
		}
	}
	// vmovdqu16 xmm0{k3}{z},xmm1 (62f1ff8b6fc1): zeroing between registers.
	var m Machine
	for i := range 16 {
		m.Z[0][i], m.Z[1][i] = 0xFFFFFFFF, uint32(2*i+1)<<16|uint32(2*i)
	}
	m.K[3] = 0b1001_0110
	if err := run(t, &m, "62f1ff8b6fc1 c3"); err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		want := uint16(0)
		if i < 8 && m.K[3]>>uint(i)&1 != 0 {
			want = uint16(i)
		}
		if got := elem16(&m, 0, i); got != want {
			t.Fatalf("register form: element %d = %#04x, want %#04x", i, got, want)
		}
	}
	clear(mem)
}

// KMOVW, KMOVD and KMOVQ take the low 16, 32 or 64 bits of the register,
// zero-extended into the whole opmask register.
func TestKMOV(t *testing.T) {
	var m Machine
	m.GPR[rAX] = 0xF123_4567_89AB_CDEF
	m.GPR[2] = 0xFFFF_FFFF_8000_0001
	m.GPR[9] = 0x1234_5678
	m.K[1], m.K[2], m.K[3] = ^uint64(0), 0, ^uint64(0)
	// kmovd k1,edx; kmovq k2,rax; kmovw k3,r9d (decode_test.go)
	if err := run(t, &m, "c5fb92ca c4e1fb92d0 c4c17892d9 c3"); err != nil {
		t.Fatal(err)
	}
	if m.K[1] != 0x8000_0001 || m.K[2] != 0xF123_4567_89AB_CDEF || m.K[3] != 0x5678 {
		t.Errorf("k1 %#x, k2 %#x, k3 %#x; want 0x80000001, 0xf123456789abcdef, 0x5678", m.K[1], m.K[2], m.K[3])
	}
}

// A masked VMOVUPS load reads the active elements only (fault suppression),
// as the SDM's rule for masked loads is the same as VMOVDQU16's.
func TestVMOVUPSMaskedLoad(t *testing.T) {
	mem := make([]uint32, 16)
	for i := range mem {
		mem[i] = uint32(i + 100)
	}
	var pin runtime.Pinner
	pin.Pin(&mem[0])
	defer pin.Unpin()
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	var m Machine
	m.GPR[rAX] = base
	m.K[2] = 0b101
	m.Z[0] = vec{0: 7, 1: 7, 2: 7, 3: 7}
	m.Memory = []Region{{Addr: base, Size: 4}, {Addr: base + 8, Size: 4}}
	if err := run(t, &m, "62f17c4a1000 c3"); err != nil { // vmovups zmm0{k2},ZMMWORD PTR [rax]
		t.Fatal(err)
	}
	if want := (vec{0: 100, 1: 7, 2: 102, 3: 7}); m.Z[0] != want {
		t.Errorf("zmm0 = %v, want %v", m.Z[0], want)
	}
}

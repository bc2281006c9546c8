package x86emu

import (
	"math"
	"strings"
	"testing"
	"unsafe"
)

// tileCfg is LDTILECFG's 64 bytes: palette 1, tiles 0-7 of rows x colsb.
func tileCfg(rows, colsb int) *[64]byte {
	var c [64]byte
	c[0] = 1
	for t := range 8 {
		c[16+2*t] = byte(colsb)
		c[48+t] = byte(rows)
	}
	return &c
}

// runTDP runs, with RAX = the configuration, RSI = a, RDI = b, RDX = c
// (rows of 64 bytes each, RCX = 64): ldtilecfg [rax]; tileloadd tmm1,
// [rsi+rcx]; tileloadd tmm2, [rdi+rcx]; tileloadd tmm0, [rdx+rcx];
// tdpbf16ps tmm0, tmm1, tmm2; tilestored [rdx+rcx], tmm0; tilerelease; ret
// (bytes as GNU as 2.40 assembles them).
func runTDP(t *testing.T, cfg *[64]byte, a, b *[16][32]uint16, c *[16][16]float32) error {
	t.Helper()
	// The emulator uses raw addresses: the operands go to the heap (a
	// goroutine stack may move), and back.
	hc, ha, hb, hcc := heap(cfg), heap(a), heap(b), heap(c)
	orig := c
	defer func() { *orig = *hcc }()
	cfg, a, b, c = hc, ha, hb, hcc
	var m Machine
	m.GPR[0] = uint64(uintptr(unsafe.Pointer(cfg)))
	m.GPR[6] = uint64(uintptr(unsafe.Pointer(a)))
	m.GPR[7] = uint64(uintptr(unsafe.Pointer(b)))
	m.GPR[2] = uint64(uintptr(unsafe.Pointer(c)))
	m.GPR[1] = 64
	err := run(t, &m, "c4e2784900 c4e27b4b0c0e c4e27b4b140f c4e27b4b040a c4e26a5cc1 c4e27a4b040a c4e27849c0 c3")
	if err == nil && m.amx.palette != 0 {
		t.Error("TILERELEASE left a configuration")
	}
	return err
}

// heapSink keeps heap copies alive and on the heap.
var heapSink []any

func heap[T any](p *T) *T {
	h := new(T)
	*h = *p
	heapSink = append(heapSink, h)
	return h
}

func bf(x float32) uint16 { return uint16(math.Float32bits(x) >> 16) }

// TDPBF16PS computes, per element, the even products' sum and the odd
// products' sum apart, each in k order, then adds theirs to the element:
// cases measured on a Xeon with AMX-BF16 (2026-12-05) where accumulating
// pair after pair (the intrinsics guide's pseudocode) would differ, and the
// flushes and specials.
func TestTDPBF16PS(t *testing.T) {
	cases := TDPBF16Cases()
	// One case per row m of a, in column n = m of b: the other elements of
	// the tile see row m times other columns (checked below to be what the
	// same rule gives: zero products).
	var a, b [16][32]uint16
	var c [16][16]float32
	for m, cs := range cases {
		c[m][m] = cs.Acc
		for k, p := range cs.Even {
			a[m][2*k], b[k][2*m] = bf(p[0]), bf(p[1])
		}
		for k, p := range cs.Odd {
			a[m][2*k+1], b[k][2*m+1] = bf(p[0]), bf(p[1])
		}
	}
	if err := runTDP(t, tileCfg(16, 64), &a, &b, &c); err != nil {
		t.Fatal(err)
	}
	for m, cs := range cases {
		if got := math.Float32bits(c[m][m]); got != cs.Want {
			t.Errorf("%s: %#08x, want %#08x", cs.Name, got, cs.Want)
		}
	}
}

// Loads and stores move the configured rows and bytes per row at the
// stride; a load zeroes the rest; unconfigured tiles and unsupported shapes
// are errors, not guesses.
func TestTileShapes(t *testing.T) {
	var a, b [16][32]uint16
	var c [16][16]float32
	for i := range c {
		for j := range c[i] {
			c[i][j] = 7
		}
	}
	// 4 rows: b's 4 rows are not the 16 pairs of a's 64-byte rows.
	if err := runTDP(t, tileCfg(4, 64), &a, &b, &c); err == nil || !strings.Contains(err.Error(), "mismatched") {
		t.Errorf("TDPBF16PS on 4-row tiles: %v, want a shape error", err)
	}
	var m Machine
	err := runTDP(t, tileCfg(16, 32), &a, &b, &c)
	if err == nil || !strings.Contains(err.Error(), "only 64") {
		t.Errorf("TDPBF16PS on 32-byte rows: %v, want an unsupported-shape error", err)
	}
	if err := run(t, &m, "c4e27b49d8 c3"); err == nil || !strings.Contains(err.Error(), "not configured") { // tilezero tmm3
		t.Errorf("TILEZERO without a configuration: %v", err)
	}
	bad := tileCfg(16, 64)
	bad[0] = 2
	m.GPR[0] = uint64(uintptr(unsafe.Pointer(bad)))
	if err := run(t, &m, "c4e2784900 c3"); err == nil || !strings.Contains(err.Error(), "palette 2") {
		t.Errorf("LDTILECFG of palette 2: %v", err)
	}
}

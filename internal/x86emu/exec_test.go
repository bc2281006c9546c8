package x86emu

import (
	"encoding/hex"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// run executes hand-made code (hex, ending in RET) on m. The instructions are
// those of decode_test.go, or checked the same way with objdump (noted).
func run(t *testing.T, m *Machine, code string) error {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(code, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(b))
	copy(buf, b)
	return m.Call(Code("test", buf), nil)
}

func f32s(v *vec, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(v[i])
	}
	return out
}

func fill(v *vec, f func(i int) float32) {
	for i := range v {
		v[i] = math.Float32bits(f(i))
	}
}

// A VEX write of 256 bits zeroes bits 511:256; VZEROUPPER zeroes 511:128 of
// ZMM0-15 only; legacy MOVSS from memory keeps 511:128.
func TestUpperBits(t *testing.T) {
	var m Machine
	fill(&m.Z[0], func(i int) float32 { return 1 })
	fill(&m.Z[1], func(i int) float32 { return float32(i) })
	if err := run(t, &m, "c5fc58c1 c3"); err != nil { // vaddps ymm0,ymm0,ymm1
		t.Fatal(err)
	}
	for i, v := range f32s(&m.Z[0], 16) {
		want := float32(1 + i)
		if i >= 8 {
			want = 0
		}
		if v != want {
			t.Fatalf("lane %d: %v, want %v", i, v, want)
		}
	}
	fill(&m.Z[1], func(i int) float32 { return 2 })
	fill(&m.Z[20], func(i int) float32 { return 3 })
	if err := run(t, &m, "c5f877 c3"); err != nil { // vzeroupper
		t.Fatal(err)
	}
	if m.Z[1][3] == 0 || m.Z[1][4] != 0 || m.Z[20][15] == 0 {
		t.Fatalf("after vzeroupper: zmm1 %v, zmm20 %v", f32s(&m.Z[1], 16), f32s(&m.Z[20], 16))
	}
	x := new(float32)
	*x = 5
	var pin runtime.Pinner // on the heap, where it does not move
	pin.Pin(x)
	defer pin.Unpin()
	m.GPR[rAX] = uint64(uintptr(unsafe.Pointer(x)))
	fill(&m.Z[0], func(i int) float32 { return 9 })
	if err := run(t, &m, "f30f1000 c3"); err != nil { // movss xmm0,[rax] (objdump)
		t.Fatal(err)
	}
	if got := f32s(&m.Z[0], 16); got[0] != 5 || got[1] != 0 || got[3] != 0 || got[4] != 9 || got[15] != 9 {
		t.Fatalf("after legacy movss: %v", got)
	}
	*x = 0
}

// Merging and zeroing masks; a broadcast memory operand with disp8*4.
func TestMasksAndBroadcast(t *testing.T) {
	var m Machine
	fill(&m.Z[1], func(i int) float32 { return -1 })
	fill(&m.Z[2], func(i int) float32 { return float32(i) })
	m.K[1] = 0b1010_0000_0000_0101
	if err := run(t, &m, "62f16c4958ca c3"); err != nil { // vaddps zmm1{k1},zmm2,zmm2 (objdump)
		t.Fatal(err)
	}
	for i, v := range f32s(&m.Z[1], 16) {
		want := float32(-1)
		if m.K[1]>>i&1 != 0 {
			want = float32(2 * i)
		}
		if v != want {
			t.Fatalf("merging: lane %d = %v, want %v", i, v, want)
		}
	}
	if err := run(t, &m, "62f16cc958ca c3"); err != nil { // vaddps zmm1{k1}{z},zmm2,zmm2 (objdump)
		t.Fatal(err)
	}
	for i, v := range f32s(&m.Z[1], 16) {
		want := float32(0)
		if m.K[1]>>i&1 != 0 {
			want = float32(2 * i)
		}
		if v != want {
			t.Fatalf("zeroing: lane %d = %v, want %v", i, v, want)
		}
	}
	buf := []float32{0, 0, 100, 0}
	var pin runtime.Pinner
	pin.Pin(&buf[0])
	defer pin.Unpin()
	m.GPR[rAX] = uint64(uintptr(unsafe.Pointer(&buf[0])))
	m.Memory = []Region{{Addr: m.GPR[rAX], Size: 16}}
	if err := run(t, &m, "62f16cd9584802 c3"); err != nil { // vaddps zmm1{k1}{z},zmm2,DWORD BCST [rax+0x8]
		t.Fatal(err)
	}
	for i, v := range f32s(&m.Z[1], 16) {
		want := float32(0)
		if m.K[1]>>i&1 != 0 {
			want = float32(i) + 100
		}
		if v != want {
			t.Fatalf("broadcast: lane %d = %v, want %v", i, v, want)
		}
	}
	buf[0] = 0
}

// A counted loop: MOV, ADD, DEC and JNE with the flags they set.
func TestLoop(t *testing.T) {
	var m Machine
	// mov ecx,5; l: add rax,rcx; dec rcx; jne l; ret (objdump)
	if err := run(t, &m, "b905000000 4801c8 48ffc9 75f8 c3"); err != nil {
		t.Fatal(err)
	}
	if m.GPR[rAX] != 15 || m.Steps != 1+3*5+1 {
		t.Fatalf("rax = %d after %d steps, want 15 after 17", m.GPR[rAX], m.Steps)
	}
}

// Errors name what went wrong, and where; nothing runs forever.
func TestExecErrors(t *testing.T) {
	m := Machine{MaxSteps: 1000}
	if err := run(t, &m, "ebfe"); !errors.Is(err, ErrSteps) { // jmp self
		t.Errorf("endless loop: %v", err)
	}
	x := new(uint64)
	var pin runtime.Pinner
	pin.Pin(x)
	defer pin.Unpin()
	m = Machine{Memory: []Region{{Addr: uint64(uintptr(unsafe.Pointer(x))), Size: 8}}}
	m.GPR[7] = uint64(uintptr(unsafe.Pointer(x))) + 8
	if err := run(t, &m, "488b07 c3"); err == nil || !strings.Contains(err.Error(), "outside the allowed memory") || !strings.Contains(err.Error(), "at offset 0x0 (48 8b 07") { // mov rax,[rdi]
		t.Errorf("read past the region: %v", err)
	}
	m = Machine{}
	if err := run(t, &m, "90 0f0b"); err == nil || !strings.Contains(err.Error(), "at offset 0x1") || !strings.Contains(err.Error(), "0f 0b") {
		t.Errorf("ud2: %v", err)
	}
	if err := run(t, &m, "e900010000"); err == nil || !strings.Contains(err.Error(), "outside the function") {
		t.Errorf("jump out: %v", err)
	}
	if err := run(t, &m, "90"); err == nil || !strings.Contains(err.Error(), "outside the function") {
		t.Errorf("falling off the end: %v", err)
	}
}

// VDPBF16PS end to end: the odd pair is added before the even one, each
// step rounded (the other order, or one rounding, gives another value);
// denormal inputs count as zero; denormal results flush to zero; masks.
func TestVDPBF16PS(t *testing.T) {
	bf := func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }
	pair := func(even, odd float32) uint32 { return uint32(bf(odd))<<16 | uint32(bf(even)) }
	var m Machine
	// Lane 0: acc 1, odd 2^-24·1 (a tie: 1 stays), even (1+2^-4)·2^-24(1+2^-4)
	// (above half an ulp: 1+2^-23). Even first would give 1+2^-22.
	m.Z[0][0] = math.Float32bits(1)
	m.Z[1][0], m.Z[2][0] = pair(1+0x1p-4, 0x1p-24), pair(0x1p-24*(1+0x1p-4), 1)
	// Lane 1: acc 0, a denormal BF16 (2^-127) times 2^10: zero, not 2^-117.
	m.Z[1][1], m.Z[2][1] = uint32(0x0040)<<16, uint32(bf(0x1p10))<<16
	// Lane 2: acc 0, 2^-70·2^-70 = 2^-140, a float32 denormal: flushed.
	m.Z[1][2], m.Z[2][2] = pair(0x1p-70, 0), pair(0x1p-70, 0)
	// Lane 3: plain: 2 + 3·4 + 5·6 = 44.
	m.Z[0][3] = math.Float32bits(2)
	m.Z[1][3], m.Z[2][3] = pair(5, 3), pair(6, 4)
	// Lane 4: acc -Inf plus 2^97·2^97, finite in the FMA (not rounded to
	// +Inf first, which would give NaN): -Inf.
	m.Z[0][4] = math.Float32bits(float32(math.Inf(-1)))
	m.Z[1][4], m.Z[2][4] = pair(0, 0x1p97), pair(0, 0x1p97)
	if err := run(t, &m, "62f2764852c2 c3"); err != nil { // vdpbf16ps zmm0,zmm1,zmm2
		t.Fatal(err)
	}
	want := []float32{1 + 0x1p-23, 0, 0, 44, float32(math.Inf(-1))}
	for i, w := range want {
		if got := math.Float32frombits(m.Z[0][i]); math.Float32bits(got) != math.Float32bits(w) {
			t.Errorf("lane %d: %g, want %g", i, got, w)
		}
	}
	m.Z[0] = vec{0: math.Float32bits(7), 1: math.Float32bits(7), 3: math.Float32bits(2)}
	m.K[1] = 0b1000
	if err := run(t, &m, "62f2764952c2 c3"); err != nil { // vdpbf16ps zmm0{k1},zmm1,zmm2 (objdump)
		t.Fatal(err)
	}
	if got := f32s(&m.Z[0], 4); got[0] != 7 || got[1] != 7 || got[3] != 44 {
		t.Errorf("merging: %v", got)
	}
	m.Z[0][3] = math.Float32bits(2)
	if err := run(t, &m, "62f276c952c2 c3"); err != nil { // vdpbf16ps zmm0{k1}{z},zmm1,zmm2 (objdump)
		t.Fatal(err)
	}
	if got := f32s(&m.Z[0], 4); got[0] != 0 || got[1] != 0 || got[3] != 44 {
		t.Errorf("zeroing: %v", got)
	}
}

// VCVTNEPS2BF16 packs sixteen float32 into the low 256 bits, zeroing above.
func TestVCVTNEPS2BF16(t *testing.T) {
	var m Machine
	fill(&m.Z[0], func(int) float32 { return 9 })
	fill(&m.Z[1], func(i int) float32 { return float32(i) + 1.0/256*float32(i%3) })
	if err := run(t, &m, "62f27e4872c1 c3"); err != nil { // vcvtneps2bf16 ymm0,zmm1 (objdump)
		t.Fatal(err)
	}
	for i := range 16 {
		got := uint16(m.Z[0][i/2] >> (16 * (i & 1)))
		if want := f32ToBF16(m.Z[1][i]); got != want {
			t.Errorf("element %d: %#04x, want %#04x", i, got, want)
		}
	}
	for i := 8; i < 16; i++ {
		if m.Z[0][i] != 0 {
			t.Fatalf("bits above 255 not zeroed: %#x", m.Z[0])
		}
	}
}

// VSHUFPS picks, in each 128-bit lane, two elements of the first source
// and two of the second by the immediate's bit pairs; VSHUFF32X4 picks
// whole 128-bit lanes alike. The expectations are written out by hand from
// the SDM's tables.
func TestShuffles(t *testing.T) {
	for _, c := range []struct {
		name, code string // objdump's reading of code (decode_test.go)
		want       func(l, i int) float32
	}{
		// imm 0x44: elements 0, 1 of src1, then 0, 1 of src2, per lane.
		{"vshufps zmm0,zmm1,zmm2,0x44", "62f17448c6c244", func(l, i int) float32 { return float32(100*(1+i/2) + 4*l + i%2) }},
		// imm 0xdd: elements 1, 3 of src1, then 1, 3 of src2.
		{"vshufps zmm0,zmm1,zmm2,0xdd", "62f17448c6c2dd", func(l, i int) float32 { return float32(100*(1+i/2) + 4*l + 1 + 2*(i%2)) }},
		// imm 0x88: lanes 0, 2 of src1, then 0, 2 of src2.
		{"vshuff32x4 zmm0,zmm1,zmm2,0x88", "62f3754823c288", func(l, i int) float32 { return float32(100*(1+l/2) + 4*(2*(l%2)) + i) }},
		// imm 0xee: lanes 2, 3 of src1, then 2, 3 of src2.
		{"vshuff32x4 zmm0,zmm1,zmm2,0xee", "62f3754823c2ee", func(l, i int) float32 { return float32(100*(1+l/2) + 4*(2+l%2) + i) }},
	} {
		var m Machine
		fill(&m.Z[1], func(i int) float32 { return float32(100 + i) })
		fill(&m.Z[2], func(i int) float32 { return float32(200 + i) })
		if err := run(t, &m, c.code+"c3"); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for e, v := range f32s(&m.Z[0], 16) {
			if want := c.want(e/4, e%4); v != want {
				t.Errorf("%s: element %d = %v, want %v", c.name, e, v, want)
			}
		}
	}
}

// FuncOf finds a Go function's code; a non-function is an error.
func TestFuncOf(t *testing.T) {
	f, err := FuncOf(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(f.Name, "x86emu.anchor") || f.Size == 0 || f.Size > 64 {
		t.Errorf("FuncOf(anchor) = %+v", f)
	}
	if _, err := FuncOf(42); err == nil {
		t.Error("FuncOf(42) succeeded")
	}
}

// Random code, confined to a scratch buffer (every register points into
// it), ends in an error or a return, never a panic, a hang or a stray
// access.
func FuzzExec(f *testing.F) {
	for _, c := range decodeCases {
		b, _ := hex.DecodeString(c.hex)
		f.Add(append(b, 0xC3))
	}
	f.Add([]byte{0xEB, 0xFE})
	scratch := make([]byte, 1<<12)
	var pin runtime.Pinner
	pin.Pin(&scratch[0])
	defer pin.Unpin()
	base := uint64(uintptr(unsafe.Pointer(&scratch[0])))
	f.Fuzz(func(t *testing.T, code []byte) {
		m := Machine{MaxSteps: 10000, Memory: []Region{{Addr: base, Size: uint64(len(scratch)), Write: true}}}
		for r := range m.GPR {
			m.GPR[r] = base + 2048
		}
		buf := append([]byte(nil), code...)
		_ = m.Call(Code("fuzz", buf), nil)
	})
}

//go:noinline
func anchor() {}

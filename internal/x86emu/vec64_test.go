package x86emu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
)

func f64s(v *vec, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(v.f64(i))
	}
	return out
}

// VCVTPS2PD widens exactly, subnormals included, and quiets a NaN keeping
// its sign and payload; a VEX.256 write zeroes bits 511:256.
func TestVCVTPS2PD(t *testing.T) {
	in := []uint32{
		math.Float32bits(1.5), math.Float32bits(-0x1p-149), math.Float32bits(3.4e38), 0x80000000,
		0x7F800001, 0xFFC12345, math.Float32bits(float32(math.Inf(-1))), math.Float32bits(0x1p-126 * 0.75),
	}
	want := []uint64{
		math.Float64bits(1.5), math.Float64bits(-0x1p-149), math.Float64bits(float64(float32(3.4e38))), 0x8000000000000000,
		0x7FF8000020000000, 0xFFF82468A0000000, math.Float64bits(math.Inf(-1)), math.Float64bits(0x1p-126 * 0.75),
	}
	var m Machine
	copy(m.Z[3][:], in)
	fill(&m.Z[1], func(int) float32 { return 7 })
	if err := run(t, &m, "62f17c485acb c3"); err != nil { // vcvtps2pd zmm1,ymm3
		t.Fatal(err)
	}
	for i, w := range want {
		if got := m.Z[1].f64(i); got != w {
			t.Errorf("element %d (%#08x): %#016x, want %#016x", i, in[i], got, w)
		}
	}
	if err := run(t, &m, "c5fc5acb c3"); err != nil { // vcvtps2pd ymm1,xmm3
		t.Fatal(err)
	}
	for i, w := range want[:4] {
		if got := m.Z[1].f64(i); got != w {
			t.Errorf("ymm: element %d: %#016x, want %#016x", i, got, w)
		}
	}
	for i := 8; i < 16; i++ {
		if m.Z[1][i] != 0 {
			t.Fatalf("ymm: bits above 255 not zeroed: %#x", m.Z[1])
		}
	}
}

// VADDPD, VSUBPD and VMULPD against Go's float64 arithmetic on random
// operands of every magnitude, and x86's NaN rules: the first source's NaN
// (quieted), else the second's; ∞-∞ and 0·∞ give the default NaN.
func TestPackedDouble(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	f64 := func() uint64 {
		return math.Float64bits(r.NormFloat64() * math.Ldexp(1, r.IntN(2100)-1050))
	}
	for _, c := range []struct {
		code string // op zmm2, zmm1, zmm0 (objdump)
		f    func(x, y float64) float64
	}{
		{"62f1f54858d0", func(x, y float64) float64 { return x + y }}, // vaddpd zmm2,zmm1,zmm0
		{"62f1f5485cd0", func(x, y float64) float64 { return x - y }}, // vsubpd zmm2,zmm1,zmm0
		{"62f1f54859d0", func(x, y float64) float64 { return x * y }}, // vmulpd zmm2,zmm1,zmm0
	} {
		for range 200 {
			var m Machine
			for i := range 8 {
				m.Z[1].setF64(i, f64())
				m.Z[0].setF64(i, f64())
			}
			if err := run(t, &m, c.code+" c3"); err != nil {
				t.Fatal(err)
			}
			for i := range 8 {
				a, b := math.Float64frombits(m.Z[1].f64(i)), math.Float64frombits(m.Z[0].f64(i))
				if got, want := m.Z[2].f64(i), math.Float64bits(c.f(a, b)); got != want {
					t.Fatalf("%s: %g, %g: %#016x, want %#016x", c.code, a, b, got, want)
				}
			}
		}
	}
	inf := math.Float64bits(math.Inf(1))
	for _, c := range []struct {
		code       string
		a, b, want uint64
	}{
		{"62f1f5485cd0", inf, inf, defaultNaN64},                                     // ∞ - ∞
		{"62f1f54859d0", 0, inf, defaultNaN64},                                       // 0·∞
		{"62f1f54858d0", 0x7FF0000000000001, 0xFFF8000000000002, 0x7FF8000000000001}, // first NaN, quieted
		{"62f1f54858d0", 3, 0x7FF0000000000005, 0x7FF8000000000005},                  // second NaN, quieted
	} {
		var m Machine
		m.Z[1].setF64(0, c.a)
		m.Z[0].setF64(0, c.b)
		if err := run(t, &m, c.code+" c3"); err != nil {
			t.Fatal(err)
		}
		if got := m.Z[2].f64(0); got != c.want {
			t.Errorf("%s (%#x, %#x): %#016x, want %#016x", c.code, c.a, c.b, got, c.want)
		}
	}
}

// VADDSD adds element 0, copies bits 127:64 of the first source and zeroes
// the rest; VBROADCASTSD fills every element from memory; legacy MOVSD
// stores 8 bytes.
func TestScalarDouble(t *testing.T) {
	var m Machine
	fill(&m.Z[0], func(int) float32 { return 9 })
	x, y := 0.1, 0.2 // variables: their sum rounds (as constants it would be exactly 0.3)
	m.Z[1].setF64(0, math.Float64bits(x))
	m.Z[1].setF64(1, math.Float64bits(-4))
	m.Z[0].setF64(0, math.Float64bits(y))
	if err := run(t, &m, "c5f358c0 c3"); err != nil { // vaddsd xmm0,xmm1,xmm0
		t.Fatal(err)
	}
	if got := f64s(&m.Z[0], 8); got[0] != x+y || got[1] != -4 || got[2] != 0 || got[7] != 0 {
		t.Errorf("vaddsd: %v", got)
	}
	buf := []float64{0, 2.5, 0, 0}
	var pin runtime.Pinner
	pin.Pin(&buf[0])
	defer pin.Unpin()
	m.GPR[rAX] = uint64(uintptr(unsafe.Pointer(&buf[0])))
	m.Memory = []Region{{Addr: m.GPR[rAX], Size: 32, Write: true}}
	if err := run(t, &m, "62f2fd48194001 c3"); err != nil { // vbroadcastsd zmm0,QWORD PTR [rax+0x8] (objdump)
		t.Fatal(err)
	}
	for i, v := range f64s(&m.Z[0], 8) {
		if v != 2.5 {
			t.Fatalf("vbroadcastsd: element %d = %v", i, v)
		}
	}
	if err := run(t, &m, "c4e27d194008 c3"); err != nil { // vbroadcastsd ymm0,QWORD PTR [rax+0x8] (objdump)
		t.Fatal(err)
	}
	if got := f64s(&m.Z[0], 8); got[3] != 2.5 || got[4] != 0 {
		t.Errorf("vbroadcastsd ymm: %v", got)
	}
	m.Z[3].setF64(0, math.Float64bits(-1.25))
	if err := run(t, &m, "f20f115818 c3"); err != nil { // movsd QWORD PTR [rax+0x18],xmm3 (objdump)
		t.Fatal(err)
	}
	if buf[3] != -1.25 || buf[2] != 0 {
		t.Errorf("movsd: %v", buf)
	}
	m.Memory = nil
}

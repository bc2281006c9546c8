package shaders

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// TestToF16 runs to_f16.wgsl on values around everything f16's rounding
// has: normal values, ties between two f16 values (to even), f16
// subnormals and values that round to zero, signed zeros, and values past
// ±65504 (clamped there, not infinity), over a count that is no multiple of
// the workgroup size; each result is x clamped to ±65504 and rounded to the
// nearest f16 (ties to even: x448/float16's conversion), and the value past
// the last is left alone.
func TestToF16(t *testing.T) {
	d := coopDev(t)
	k, err := NewKernel(d.dev, "to_f16.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.pipeline(consts("WG", toF16WG))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 0x70f16))
	x := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, -65504, 65519, 65520, 1e6, -1e6, float32(math.Inf(1)), float32(math.Inf(-1)),
		6.1e-5, 5.96e-8, 2.9e-8, 3e-8, -4e-8, 1e-9}
	for range 4 { // ties: the f32 halfway between two neighbouring f16 values
		h := float16.Frombits(uint16(rng.IntN(0x7bff)))
		next := float16.Frombits(h.Bits() + 1)
		x = append(x, (h.Float32()+next.Float32())/2, -(h.Float32()+next.Float32())/2)
	}
	for len(x) < 4*(toF16WG+37) {
		switch len(x) % 3 {
		case 0:
			x = append(x, float32(rng.NormFloat64()))
		case 1:
			x = append(x, float32(rng.NormFloat64()*1e4))
		default:
			x = append(x, float32(rng.NormFloat64()*1e-5))
		}
	}
	n := len(x) / 4
	in := d.buffer(t, "x", f32Bytes(x))
	const guard = 0x5a5a
	init := make([]byte, 2*len(x)+8)
	for i := range len(x) + 4 {
		binary.LittleEndian.PutUint16(init[2*i:], guard)
	}
	out := d.buffer(t, "y", init)
	d.run(t, p, map[string]Buf{"x": {Buffer: in}, "y": {Buffer: out}}, Params{"n": float64(n)}, grid(ceilDiv(n, toF16WG)))
	raw := make([]byte, len(init))
	if err := d.dev.Queue().ReadBuffer(out, 0, raw); err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		want := float16.Fromfloat32(float32(math.Max(-65504, math.Min(65504, float64(v))))).Bits()
		if got := binary.LittleEndian.Uint16(raw[2*i:]); got != want {
			t.Errorf("x[%d] = %g (%#08x): f16 %#04x, want %#04x", i, v, math.Float32bits(v), got, want)
		}
	}
	if got := binary.LittleEndian.Uint16(raw[2*len(x):]); got != guard {
		t.Errorf("the value past the last: %#04x, want it left alone", got)
	}
}

package shaders

import (
	"encoding/binary"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// TestEmbed compares embed.wgsl with refops.Embed for both weight types, with
// positions starting at pos0 = 3 and wte bound in two ranges of ids (as for a
// vocabulary beyond the binding limit). Exact up to one f32 rounding: 1e-7.
// Without position embeddings (WPE = 0, the Llama family's) the rows are
// wte's, exactly, whatever wpe is bound to.
func TestEmbed(t *testing.T) {
	d := newTestDev(t)
	const B, T, C, V, P, pos0 = 3, 5, 12, 40, 16, 3
	tokens := make([]int32, B*T)
	pos := make([]int32, B*T)
	tb := make([]byte, 4*B*T)
	for n := range tokens {
		tokens[n] = int32((n*7 + 3) % V)
		pos[n] = int32(pos0 + n%T)
		binary.LittleEndian.PutUint32(tb[4*n:], uint32(tokens[n]))
	}
	for _, f16 := range d.weightTypes() {
		wte, wpe := randF32(4, V*C, 0, 1), randF32(5, P*C, 0, 1)
		wteB, wpeB := weightBytes(wte, f16), weightBytes(wpe, f16)
		want := refops.Embed(tokens, pos, f64(wte), f64(wpe), C)
		k, err := NewKernel(d.dev, "embed.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		p, err := k.Pipeline(map[string]float64{"WG": 32})
		if err != nil {
			t.Fatal(err)
		}
		out := d.buffer(t, "out", make([]byte, 4*B*T*C))
		toks, wpeBuf := d.buffer(t, "tokens", tb), d.buffer(t, "wpe", wpeB)
		elem := len(wteB) / (V * C)
		const split = 24 // ids [0, 24) and [24, 40): two bindings of wte
		for _, r := range [][2]int{{0, split}, {split, V}} {
			wr := d.buffer(t, "wte range", wteB[r[0]*C*elem:r[1]*C*elem])
			d.run(t, p, map[string]Buf{"tokens": {Buffer: toks}, "wte": {Buffer: wr}, "wpe": {Buffer: wpeBuf}, "out": {Buffer: out}},
				Params{"N": B * T, "T": T, "C": C, "pos0": pos0, "v0": float64(r[0]), "V": float64(r[1] - r[0])},
				[3]uint32{uint32(ceilDiv(B*T*C, 32)), 1, 1})
		}
		checkClose(t, "embed", d.readF32(t, out, B*T*C), want, 1e-7)

		p0, err := k.Pipeline(map[string]float64{"WG": 32, "WPE": 0})
		if err != nil {
			t.Fatal(err)
		}
		out0 := d.buffer(t, "out", make([]byte, 4*B*T*C))
		for _, r := range [][2]int{{0, split}, {split, V}} {
			wr := d.buffer(t, "wte range", wteB[r[0]*C*elem:r[1]*C*elem])
			d.run(t, p0, map[string]Buf{"tokens": {Buffer: toks}, "wte": {Buffer: wr}, "wpe": {Buffer: toks}, "out": {Buffer: out0}},
				Params{"N": B * T, "T": T, "C": C, "pos0": pos0, "v0": float64(r[0]), "V": float64(r[1] - r[0])},
				[3]uint32{uint32(ceilDiv(B*T*C, 32)), 1, 1})
		}
		want0 := refops.Embed(tokens, pos, f64(wte), make([]float64, P*C), C)
		checkClose(t, "embed without wpe", d.readF32(t, out0, B*T*C), want0, 0)
	}
}

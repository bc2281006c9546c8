package shaders

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestFillRandom: fill_random.wgsl's values are randomValue's, computed on
// the host: f32 words bit for bit, f16 halves within one f16 step of the
// f32 value (pack2x16float's rounding is the device's), over counts that
// are no multiple of the workgroup size and, for f32, past one row of
// 65535 workgroups (the dispatch spread over y); they cover their range
// with a mean near 0; other seeds give other values.
func TestFillRandom(t *testing.T) {
	d := newTestDev(t)
	r := &checkRun{g: &GPT2{dev: d.dev}}
	defer r.close()

	n32 := maxGroupsX*fillRandomWG + 777 // words: two rows of workgroups
	if os.Getenv(raceCheckEnv) != "" {
		n32 = 5*fillRandomWG + 777 // one row: the race check's shadow of two would pass its bound
	}
	b32, err := r.random("f32", activations(7, n32))
	if err != nil {
		t.Fatal(err)
	}
	got := d.readF32(t, b32, n32)
	lo, hi, sum := float32(1), float32(-1), 0.0
	for e, v := range got {
		if want := randomValue(7, uint32(e), 1); math.Float32bits(v) != math.Float32bits(want) {
			t.Fatalf("f32 value %d: %g (%#08x), want %g (%#08x)", e, v, math.Float32bits(v), want, math.Float32bits(want))
		}
		lo, hi, sum = min(lo, v), max(hi, v), sum+float64(v)
	}
	// Covered: n uniform values leave gaps of about 2/n at the ends; the mean
	// within 5 standard deviations (1/sqrt(3n)).
	edge, meanTol := float32(20/float64(n32)), 5/math.Sqrt(3*float64(n32))
	if lo < -1 || lo > -1+edge || hi >= 1 || hi < 1-edge || math.Abs(sum/float64(n32)) > meanTol {
		t.Errorf("f32 values in [%g, %g], mean %g: want [-1, 1) covered, mean near 0", lo, hi, sum/float64(n32))
	}

	const n16 = 3*fillRandomWG + 41 // f16 values: odd, so the last word's upper half is padding
	o := weights(9, n16, true)
	b16, err := r.random("f16", o)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*o.words())
	if err := d.dev.Queue().ReadBuffer(b16, 0, raw); err != nil {
		t.Fatal(err)
	}
	lo, hi = 1, -1
	for e := range n16 {
		v := float16.Frombits(binary.LittleEndian.Uint16(raw[2*e:])).Float32()
		want := randomValue(9, uint32(e), 0.05)
		// One f16 step at want's magnitude: the neighbours below and above.
		h := float16.Fromfloat32(want)
		step := math.Abs(float64(float16.Frombits(h.Bits()+1).Float32() - h.Float32()))
		if math.Abs(float64(v-want)) > step {
			t.Fatalf("f16 value %d: %g, want %g within %g", e, v, want, step)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo > -0.049 || hi < 0.049 || lo < -0.05 || hi > 0.05 {
		t.Errorf("f16 values in [%g, %g]: want [-0.05, 0.05] covered", lo, hi)
	}

	other, err := r.random("seed 8", activations(8, 64))
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for e, v := range d.readF32(t, other, 64) {
		if v == got[e] {
			same++
		}
	}
	if same > 1 {
		t.Errorf("seeds 7 and 8: %d of 64 values the same", same)
	}
}

// TestFillRandomBindingLimit: an operand past one storage binding is an
// error naming it, not a dispatch the device refuses.
func TestFillRandomBindingLimit(t *testing.T) {
	if os.Getenv(raceCheckEnv) != "" {
		t.Skip("the race check's shadow of a 1 MiB binding needs more than the 1 MiB this test caps bindings at")
	}
	d := newTestDevCapped(t, wgpu.Limits{MaxStorageBufferBindingSize: 1 << 20})
	r := &checkRun{g: &GPT2{dev: d.dev}}
	defer r.close()
	if _, err := r.random("x", activations(1, 1<<18)); err != nil {
		t.Fatalf("1 MiB: %v", err)
	}
	_, err := r.random("x", activations(1, 1<<18+1))
	if err == nil || !strings.Contains(err.Error(), "random x") || !strings.Contains(err.Error(), "beyond one binding") {
		t.Fatalf("1 MiB + 4 bytes: %v, want an error naming the operand and the binding limit", err)
	}
	if errors.Is(err, wgpu.ErrOutOfMemory) {
		t.Errorf("%v: not a memory error", err)
	}
}

// BenchmarkTuneOperands makes the operands of GPT-2 124M's four weight
// matmuls at rows M, as a tuning round does: "device" as the tuners make
// them (tuneOperands: fill_random.wgsl, the outputs left zero), "host" as
// they were made before, on one core and uploaded (randomF32 and
// randomWeights, every buffer written, zeros included).
func BenchmarkTuneOperands(b *testing.B) {
	d := newTestDev(b)
	g := &GPT2{dev: d.dev, f16: d.f16, cfg: model.Config{NEmbd: 768, NHead: 12}}
	const M = 8192
	shapes := []matmulShape{{768, 2304, epiStore}, {768, 768, epiAdd}, {768, 3072, epiGELU}, {3072, 768, epiAdd}}
	b.Run("device", func(b *testing.B) {
		for b.Loop() {
			for _, sh := range shapes {
				_, _, done, err := g.tuneOperands(M, sh)
				if err == nil {
					err = d.dev.Queue().WaitIdle()
				}
				done()
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("host", func(b *testing.B) {
		for b.Loop() {
			for _, sh := range shapes {
				seed := uint32(M*31 + sh.N*7 + sh.K)
				bufs := []*wgpu.Buffer{d.buffer(b, "x", randomF32(seed, M*sh.K)), d.buffer(b, "w", g.randomWeights(seed+1, sh.K*sh.N)),
					d.buffer(b, "bias", g.randomWeights(seed+2, sh.N)), d.buffer(b, "out", make([]byte, 4*M*sh.N))}
				if err := d.dev.Queue().WaitIdle(); err != nil {
					b.Fatal(err)
				}
				for _, buf := range bufs {
					buf.Close()
				}
			}
		}
	})
}

package shaders

import (
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// operand is a random operand of a tuner: n values of a type, each in
// [-scale, scale), from seed (fill_random.wgsl).
type operand struct {
	n     int
	f16   bool
	scale float32
	seed  uint32
}

// activations are n f32 values in [-1, 1).
func activations(seed uint32, n int) operand { return operand{n: n, scale: 1, seed: seed} }

// weights are n values in [-0.05, 0.05), small as trained weights are, f16
// or f32 as the model's weights (f16 also for the LM head's h, as
// to_f16.wgsl leaves it).
func weights(seed uint32, n int, f16 bool) operand {
	return operand{n: n, f16: f16, scale: 0.05, seed: seed}
}

// bytes is the operand's size in memory.
func (o operand) bytes() int {
	if o.f16 {
		return 2 * o.n
	}
	return 4 * o.n
}

// words is the u32 words fill_random.wgsl writes for it.
func (o operand) words() int { return ceilDiv(o.bytes(), 4) }

// fillRandomWG is fill_random.wgsl's workgroup size.
const fillRandomWG = 256

// random makes a storage buffer holding o, its values made on the device by
// fill_random.wgsl (compiled on first use) rather than on the host and
// uploaded: a tuner's operands at 65536 rows are some 1.5 GB. g.mu is held.
func (r *checkRun) random(label string, o operand) (*wgpu.Buffer, error) {
	g := r.g
	n := o.words()
	if n > int(min(g.dev.Limits().MaxStorageBufferBindingSize, 1<<32-4)/4) {
		return nil, fmt.Errorf("random %s: %d bytes, beyond one binding of %s", label, o.bytes(), g.dev.AdapterInfo().Name)
	}
	var err error
	if g.fillRandom == nil {
		if g.fillRandom, err = NewKernel(g.dev, "fill_random.wgsl", false); err != nil {
			return nil, err
		}
	}
	b, err := r.zeros("tune "+label, o.bytes())
	if err != nil {
		return nil, err
	}
	f16 := 0.0
	if o.f16 {
		f16 = 1
	}
	return b, r.dispatch(g.fillRandom, consts("WG", float64(flatWG(g.dev.Limits(), fillRandomWG))),
		map[string]Buf{"y": {Buffer: b}}, Params{"n": float64(n), "seed": float64(o.seed), "scale": float64(o.scale), "f16": f16},
		perInvocation(n))
}

// zeros makes a storage buffer named label of n bytes (at least 16, a
// multiple of 16), zeros as every new buffer starts: nothing is uploaded. It
// is the run's until it closes.
func (r *checkRun) zeros(label string, n int) (*wgpu.Buffer, error) { return r.holding(label, n, nil) }

// holding is zeros with data at its start (len(data) a multiple of 4, at
// most n): one CreateBufferInit.
func (r *checkRun) holding(label string, n int, data []byte) (*wgpu.Buffer, error) {
	b, err := r.g.dev.CreateBufferInit(&wgpu.BufferDescriptor{Label: label, Size: max(uint64(n+15)&^15, 16),
		Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst}, data)
	if err != nil {
		return nil, err
	}
	r.closer = append(r.closer, b)
	return b, nil
}

// randomValue is value number e of fill_random.wgsl's seed and scale: the
// f32 it stores (F16 = 0), which its f16s round.
func randomValue(seed, e uint32, scale float32) float32 {
	h := lowbias32(e ^ lowbias32(seed))
	return (float32(h>>8)*(1.0/8388608.0) - 1) * scale
}

// lowbias32 is fill_random.wgsl's hash.
func lowbias32(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

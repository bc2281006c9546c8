package shaders

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/x448/float16"
)

// The Llama family on the device (Llama 2/3.x, Mistral, Qwen2/2.5, Qwen3):
// the weights laid out for GPT-2's matmul kernels at upload, the rotary
// table, and the kernels only this family runs. Its forward pass is in
// forward_llama.go; batches, sessions, the LM head with its loss and the
// top-K are GPT-2's.

// llamaLayer is one Llama-family block's weights on the device, in the
// layout of the matmul kernels (w (in, out), as GPT-2's Conv1D): nn.Linear's
// (out, in) matrices are transposed at upload.
type llamaLayer struct {
	ln1w, ln2w   *wgpu.Buffer // (C) input_layernorm, post_attention_layernorm
	qkvW, qkvB   *wgpu.Buffer // (C, QD+2KVD): q_proj | k_proj | v_proj along the output axis; bias (QD+2KVD) or zeros
	oW, oB       *wgpu.Buffer // (QD, C) o_proj; bias (C) or zeros
	gateUpW      *wgpu.Buffer // (C, 2I): column 2i gate_proj's row i, 2i+1 up_proj's (matmul's epiSwiGLU)
	gateUpB      *wgpu.Buffer // (2I) interleaved likewise, or zeros
	downW, downB *wgpu.Buffer // (I, C) down_proj; bias (C) or zeros
}

// llamaParts is what a GPT2 holds for a Llama-family model.
type llamaParts struct {
	layers []llamaLayer
	// rope is the rotary table, (llamaPositions, HeadDim/2) vec2<f32> (cos,
	// sin) as model.RopeTable gives them, and after it, with QKNorm, every
	// layer's q_norm and k_norm weights (appendNormPairs).
	rope     *wgpu.Buffer
	normBase int          // the vec2 index in rope of layer 0's norm pairs (QKNorm)
	zeros    *wgpu.Buffer // weights of value 0, the bias of every matmul that has none

	rmsnorm, ropeKV *Kernel
	rmsnormSubgroup *Kernel     // nil without subgroup operations
	rmsnormRows     *rowsKernel // for the model's width; nil without subgroup operations or where its rows do not fit
}

// maxRopeBytes caps the rotary table with the q/k norms after it: it is
// bound whole, and every Vulkan device binds 128 MiB.
const maxRopeBytes = 128 << 20

// llamaPositions is the most positions the rotary table holds for cfg: the
// model's, or fewer where the table and the q/k norms would exceed
// maxRopeBytes (only for contexts of hundreds of thousands of positions).
func llamaPositions(cfg model.Config) int {
	return min(cfg.NPositions, (maxRopeBytes-ropeNormBytes(cfg))/(8*max(cfg.HeadDim()/2, 1)))
}

// ropeNormBytes are the bytes of every layer's q_norm and k_norm pairs in the
// rotary buffer (appendNormPairs): none without QKNorm.
func ropeNormBytes(cfg model.Config) int {
	if !cfg.QKNorm {
		return 0
	}
	return cfg.NLayer * 8 * cfg.HeadDim()
}

// ropeTableBytes is the rotary table as rope_kv_write.wgsl reads it: a
// vec2<f32> (cos[i], sin[i]) per entry.
func ropeTableBytes(cos, sin []float32) []byte {
	table := make([]byte, 8*len(cos))
	for i := range cos {
		binary.LittleEndian.PutUint32(table[8*i:], math.Float32bits(cos[i]))
		binary.LittleEndian.PutUint32(table[8*i+4:], math.Float32bits(sin[i]))
	}
	return table
}

// appendNormPairs appends a layer's q_norm and k_norm weights (hd each, in
// the weight type dt: F32 or F16) to the rotary buffer b as
// rope_kv_write.wgsl reads them past the table, f32 vec2s: (qn[i],
// qn[i+hd/2]) for i < hd/2, then kn's likewise. f16 weights widen exactly.
func appendNormPairs(b []byte, qn, kn []byte, dt model.DType) []byte {
	hd := len(qn) / dt.Size()
	at := func(w []byte, i int) float32 {
		if dt == model.F16 {
			return float16.Frombits(binary.LittleEndian.Uint16(w[2*i:])).Float32()
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(w[4*i:]))
	}
	for _, w := range [][]byte{qn, kn} {
		for i := range hd / 2 {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(at(w, i)))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(at(w, i+hd/2)))
		}
	}
	return b
}

// uploadLlama puts a Llama-family model's weights on the device in the
// weight type dt, tensor by tensor, each block's matrices transposed into
// the matmul layout (q, k and v side by side; gate and up interleaved), one
// block's staging at a time on the host; and the rotary table. progress
// counts the bytes read.
func (g *GPT2) uploadLlama(ctx context.Context, src model.TensorReader, dt model.DType, progress func(done, total int64)) error {
	cfg := g.cfg
	C, QD, KVD, I := cfg.NEmbd, cfg.QDim(), cfg.KVDim(), cfg.Inner()
	ld := QD + 2*KVD
	tied := cfg.TiedEmbed
	if !tied {
		var err error
		if tied, err = src.LMHeadTied(ctx); err != nil {
			return err
		}
	}
	specs := cfg.Tensors()
	if !tied {
		specs = append(specs, cfg.LMHeadSpec())
	}
	type key struct {
		layer int
		role  model.Role
	}
	byKey := map[key]model.TensorSpec{}
	var total, done int64
	for _, s := range specs {
		byKey[key{s.Layer, s.Role}] = s
		total += int64(s.NumElements() * dt.Size())
	}
	if progress != nil {
		progress(0, total)
	}
	// read returns the tensor of role in layer (-1: outside the blocks) in dt,
	// nil for one the config leaves out.
	read := func(layer int, role model.Role) ([]byte, error) {
		s, ok := byKey[key{layer, role}]
		if !ok {
			return nil, nil
		}
		data, err := src.ReadTensor(ctx, s, dt)
		if err != nil {
			return nil, err
		}
		if len(data) != s.NumElements()*dt.Size() {
			return nil, fmt.Errorf("tensor %s: %d bytes, want %d", s.Name, len(data), s.NumElements()*dt.Size())
		}
		done += int64(len(data))
		if progress != nil {
			progress(done, total)
		}
		return data, nil
	}
	whole := func(name string, layer int, role model.Role) (*wgpu.Buffer, error) {
		data, err := read(layer, role)
		if err != nil || data == nil {
			return nil, err
		}
		return g.upload(name, data)
	}
	es := dt.Size()
	lp := &llamaParts{layers: make([]llamaLayer, cfg.NLayer)}
	g.llama = lp
	var err error
	if g.wte, err = whole("embed_tokens", -1, model.RoleWTE); err != nil {
		return err
	}
	g.head = g.wte
	if lp.zeros, err = g.upload("zero bias", make([]byte, max(ld, 2*I, C)*es)); err != nil {
		return err
	}
	var norms []byte // the layers' q/k norm pairs (QKNorm), for the rotary buffer
	for l := range cfg.NLayer {
		if err := ctx.Err(); err != nil {
			return err
		}
		L := &lp.layers[l]
		name := func(s string) string { return fmt.Sprintf("layer %d %s", l, s) }
		if L.ln1w, err = whole(name("input_layernorm"), l, model.RoleInputNorm); err != nil {
			return err
		}
		if L.ln2w, err = whole(name("post_attention_layernorm"), l, model.RolePostNorm); err != nil {
			return err
		}
		qn, err := read(l, model.RoleQNorm)
		if err != nil {
			return err
		}
		kn, err := read(l, model.RoleKNorm)
		if err != nil {
			return err
		}
		if (qn == nil) != !cfg.QKNorm || (kn == nil) != !cfg.QKNorm {
			return errors.New("q_norm and k_norm must both be present with QKNorm, else both absent")
		}
		if qn != nil {
			norms = appendNormPairs(norms, qn, kn, dt)
		}
		// Matrices: each nn.Linear (out, in) to columns [col0, col0+out) of a
		// (in, width) matrix, every step-th column.
		type part struct {
			w, b      model.Role
			out, col0 int
		}
		matrix := func(label string, in, width, step int, parts []part) (w, b *wgpu.Buffer, err error) {
			wt := make([]byte, in*width*es)
			var bias []byte
			for _, p := range parts {
				data, err := read(l, p.w)
				if err != nil {
					return nil, nil, err
				}
				transposeInto(wt, width, p.col0, step, data, p.out, in, es)
				bd, err := read(l, p.b)
				if err != nil {
					return nil, nil, err
				}
				if bd != nil {
					if bias == nil {
						bias = make([]byte, width*es)
					}
					for o := range p.out {
						copy(bias[(p.col0+o*step)*es:][:es], bd[o*es:][:es])
					}
				}
			}
			// Bound whole by the matmul kernels: only the vocabulary's
			// matrices are bound in ranges.
			if limit := g.dev.Limits().MaxStorageBufferBindingSize; uint64(len(wt)) > limit {
				return nil, nil, fmt.Errorf("%s: %d bytes, more than %s binds (%d)%s", name(label), len(wt), g.dev.AdapterInfo().Name, limit, f16Hint(es))
			}
			if w, err = g.upload(name(label), wt); err != nil {
				return nil, nil, err
			}
			if bias == nil {
				return w, lp.zeros, nil
			}
			b, err = g.upload(name(label+" bias"), bias)
			return w, b, err
		}
		if L.qkvW, L.qkvB, err = matrix("q|k|v", C, ld, 1, []part{
			{model.RoleQW, model.RoleQB, QD, 0}, {model.RoleKW, model.RoleKB, KVD, QD}, {model.RoleVW, model.RoleVB, KVD, QD + KVD},
		}); err != nil {
			return err
		}
		if L.oW, L.oB, err = matrix("o_proj", QD, C, 1, []part{{model.RoleOW, model.RoleOB, C, 0}}); err != nil {
			return err
		}
		if L.gateUpW, L.gateUpB, err = matrix("gate|up", C, 2*I, 2, []part{
			{model.RoleGateW, model.RoleGateB, I, 0}, {model.RoleUpW, model.RoleUpB, I, 1},
		}); err != nil {
			return err
		}
		if L.downW, L.downB, err = matrix("down_proj", I, C, 1, []part{{model.RoleDownW, model.RoleDownB, C, 0}}); err != nil {
			return err
		}
	}
	if g.lnfW, err = whole("norm", -1, model.RoleNorm); err != nil {
		return err
	}
	if !tied {
		if g.head, err = whole("lm_head", -1, model.RoleLMHead); err != nil {
			return err
		}
	}
	// The rotary table, as the CPU computes it (float64 angles rounded once),
	// and the q/k norms after it.
	table := ropeTableBytes(model.RopeTable(cfg, llamaPositions(cfg)))
	lp.normBase = len(table) / 8
	lp.rope, err = g.upload("rope", append(table, norms...))
	return err
}

// f16Hint suggests f16 weights where a matrix of es-byte (f32) weights is too large.
func f16Hint(es int) string {
	if es == 4 {
		return ": f16 weights (--precision f16) halve it"
	}
	return ""
}

// transposeInto writes src, an (out, in) matrix of es-byte elements, into
// dst, an (in, width) one, as columns col0, col0+step, ...: element (o, k)
// of src to (k, col0 + o*step) of dst. It goes in tiles of 32 x 32, so that
// both sides stay in cache for the large matrices.
func transposeInto(dst []byte, width, col0, step int, src []byte, out, in, es int) {
	const tile = 32
	stride := width * es // bytes between rows of dst
	for o0 := 0; o0 < out; o0 += tile {
		for k0 := 0; k0 < in; k0 += tile {
			k1 := min(k0+tile, in)
			for o := o0; o < min(o0+tile, out); o++ {
				row := src[(o*in+k0)*es : (o*in+k1)*es]
				d := k0*stride + (col0+o*step)*es
				for i := 0; i < len(row); i += es {
					copy(dst[d:d+es], row[i:i+es])
					d += stride
				}
			}
		}
	}
}

// newLlamaKernels compiles the kernels only the Llama family runs.
func (g *GPT2) newLlamaKernels() error {
	lp, dev := g.llama, g.dev
	var err error
	if lp.rmsnorm, err = NewKernel(dev, "rmsnorm.wgsl", g.f16); err != nil {
		return err
	}
	if lp.ropeKV, err = NewKernel(dev, "rope_kv_write.wgsl", g.f16); err != nil {
		return err
	}
	if dev.HasFeature(wgpu.FeatureSubgroups) {
		if lp.rmsnormSubgroup, err = NewKernel(dev, "rmsnorm_subgroup.wgsl", g.f16); err != nil {
			return err
		}
		if lp.rmsnormRows, err = newRowsKernel(dev, "rmsnorm_rows.wgsl", g.f16, g.cfg.NEmbd); err != nil {
			return err
		}
	}
	return nil
}

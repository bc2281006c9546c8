package shaders

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// GPT2 is a GPT-2 model on a device: its weights uploaded once (f16 or f32)
// and the kernels of its forward pass. Loss scores a batch with one command
// buffer and one 8-byte readback.
type GPT2 struct {
	dev    *wgpu.Device
	cfg    model.Config
	f16    bool
	layers []gpuLayer
	wte    *wgpu.Buffer // (V, C), also the LM head (tied)
	wpe    *wgpu.Buffer // (positions, C)
	lnfW   *wgpu.Buffer
	lnfB   *wgpu.Buffer

	bindLimit int // tests: a smaller binding limit, to exercise wte in ranges

	embed, layernorm, matmul, kvWrite, attention, lmHead, nllSums *Kernel
}

// gpuLayer is one block's weights on the device, in Hugging Face's layout.
type gpuLayer struct {
	ln1w, ln1b, qkvW, qkvB, projW, projB, ln2w, ln2b, fcW, fcB, fcProjW, fcProjB *wgpu.Buffer
}

// maxHeadDim is the largest head size attention.wgsl holds in registers (all
// GPT-2 sizes have 64).
const maxHeadDim = 64

// NewGPT2 uploads m's weights to dev, as f16 when f16 is set (dev needs
// shader-f16) and f32 otherwise, and compiles the kernels.
func NewGPT2(dev *wgpu.Device, m *model.Model, f16 bool) (*GPT2, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("gpu model %s: %w", m.Source, err)
	}
	cfg := m.Config
	if hd := cfg.HeadDim(); hd > maxHeadDim || hd%4 != 0 {
		return nil, fmt.Errorf("gpu model %s: head size %d not supported (a multiple of 4 up to %d)", m.Source, hd, maxHeadDim)
	}
	if f16 && !dev.HasFeature(wgpu.FeatureShaderF16) {
		return nil, fmt.Errorf("gpu model %s: f16 weights need the device feature %s", m.Source, wgpu.FeatureShaderF16)
	}
	if w := &m.Weights; w.LMHead != nil && &w.LMHead[0] != &w.WTE[0] {
		return nil, fmt.Errorf("gpu model %s: an LM head not tied to wte is not supported", m.Source)
	}
	g := &GPT2{dev: dev, cfg: cfg, f16: f16}
	var err error
	up := func(name string, x []float32) *wgpu.Buffer {
		if err != nil {
			return nil
		}
		var b *wgpu.Buffer
		b, err = g.upload(name, x)
		return b
	}
	w := &m.Weights
	g.wte, g.wpe = up("wte", w.WTE), up("wpe", w.WPE)
	g.lnfW, g.lnfB = up("ln_f.weight", w.LNFW), up("ln_f.bias", w.LNFB)
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("h.%d.", i)
		g.layers = append(g.layers, gpuLayer{
			ln1w: up(p+"ln_1.weight", l.LN1W), ln1b: up(p+"ln_1.bias", l.LN1B),
			qkvW: up(p+"attn.c_attn.weight", l.QKVW), qkvB: up(p+"attn.c_attn.bias", l.QKVB),
			projW: up(p+"attn.c_proj.weight", l.ProjW), projB: up(p+"attn.c_proj.bias", l.ProjB),
			ln2w: up(p+"ln_2.weight", l.LN2W), ln2b: up(p+"ln_2.bias", l.LN2B),
			fcW: up(p+"mlp.c_fc.weight", l.FCW), fcB: up(p+"mlp.c_fc.bias", l.FCB),
			fcProjW: up(p+"mlp.c_proj.weight", l.FCProjW), fcProjB: up(p+"mlp.c_proj.bias", l.FCProjB),
		})
	}
	if err != nil {
		return nil, err
	}
	for _, k := range []struct {
		dst  **Kernel
		name string
	}{
		{&g.embed, "embed.wgsl"}, {&g.layernorm, "layernorm.wgsl"}, {&g.matmul, "matmul.wgsl"},
		{&g.kvWrite, "kv_write.wgsl"}, {&g.attention, "attention.wgsl"},
		{&g.lmHead, "lmhead_loss.wgsl"}, {&g.nllSums, "nll_sums.wgsl"},
	} {
		if *k.dst, err = NewKernel(dev, k.name, f16); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// upload makes a storage buffer holding x as the weight type.
func (g *GPT2) upload(name string, x []float32) (*wgpu.Buffer, error) {
	var data []byte
	if g.f16 {
		data = make([]byte, (2*len(x)+3)&^3)
		for i, v := range x {
			binary.LittleEndian.PutUint16(data[2*i:], float16.Fromfloat32(v).Bits())
		}
	} else {
		data = make([]byte, 4*len(x))
		for i, v := range x {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
	}
	b, err := g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: name, Size: uint64(len(data)),
		Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopyDst})
	if err != nil {
		return nil, fmt.Errorf("upload %s: %w", name, err)
	}
	if err := g.dev.Queue().WriteBuffer(b, 0, data); err != nil {
		b.Close()
		return nil, fmt.Errorf("upload %s: %w", name, err)
	}
	return b, nil
}

// Name names the device and weight type, for results.
func (g *GPT2) Name() string {
	t := "f32"
	if g.f16 {
		t = "f16"
	}
	return g.dev.AdapterInfo().Name + " (" + t + ")"
}

// maxGroupsX is the workgroups per dimension every Vulkan device allows.
const maxGroupsX = 65535

// grid spreads n workgroups over x and y; kernels index them as
// wid.y * num_workgroups.x + wid.x and return past their work.
func grid(n int) [3]uint32 {
	n = max(n, 1)
	x := min(n, maxGroupsX)
	return [3]uint32{uint32(x), uint32(ceilDiv(n, x)), 1}
}

// recorder records the dispatches of one batch and keeps the bind groups it made.
type recorder struct {
	pass   *wgpu.ComputePass
	groups []*wgpu.BindGroup
	err    error
}

func (r *recorder) op(k *Kernel, consts map[string]float64, bufs map[string]Buf, params Params, groups [3]uint32) {
	if r.err != nil {
		return
	}
	p, err := k.Pipeline(consts)
	if err != nil {
		r.err = err
		return
	}
	bg, err := p.Bind(bufs)
	if err != nil {
		r.err = err
		return
	}
	r.groups = append(r.groups, bg)
	pc, err := p.Push(params)
	if err != nil {
		r.err = err
		return
	}
	p.Dispatch(r.pass, bg, pc, groups)
}

// Loss returns the NLL sums of every target of seqs (see model.Sequence): one
// padded batch of len(seqs) rows of the longest length, one command buffer,
// the per-target NLL summed on the device, one 8-byte readback.
func (g *GPT2) Loss(ctx context.Context, seqs []model.Sequence) (model.LossSums, error) {
	if err := model.CheckSequences(g.cfg, seqs); err != nil {
		return model.LossSums{}, err
	}
	if err := ctx.Err(); err != nil {
		return model.LossSums{}, err
	}
	cfg := g.cfg
	B, C, H, V := len(seqs), cfg.NEmbd, cfg.NHead, cfg.VocabSize
	T, P := 0, 0
	for _, s := range seqs {
		T = max(T, len(s.Tokens))
		P += s.Scored()
	}
	if P == 0 {
		return model.LossSums{}, nil
	}
	N := B * T
	tokens := make([]byte, 4*N)
	targets := make([]byte, 4*P)
	p := 0
	for b, s := range seqs {
		for t, id := range s.Tokens {
			binary.LittleEndian.PutUint32(tokens[4*(b*T+t):], uint32(id))
		}
		for _, id := range s.Tokens[s.First:] {
			binary.LittleEndian.PutUint32(targets[4*p:], uint32(id))
			p++
		}
	}

	var bufs []*wgpu.Buffer
	defer func() {
		for _, b := range bufs {
			b.Close()
		}
	}()
	var err error
	newBuf := func(label string, size int, data []byte) *wgpu.Buffer {
		if err != nil {
			return nil
		}
		var b *wgpu.Buffer
		b, err = g.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: label, Size: uint64(max(size, 16)),
			Usage: wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst})
		if err != nil {
			err = fmt.Errorf("gpu loss: activation %s (%d bytes): %w", label, size, err)
			return nil
		}
		bufs = append(bufs, b)
		if data != nil {
			err = g.dev.Queue().WriteBuffer(b, 0, data)
		}
		return b
	}
	const f = 4 // bytes per f32
	vt := vocabTile
	tiles := ceilDiv(V, vt)
	tok := newBuf("tokens", 4*N, tokens)
	tgtIDs := newBuf("targets", 4*P, targets)
	res := newBuf("residual", f*N*C, nil)
	ln := newBuf("ln", f*N*C, nil)
	qkv := newBuf("qkv", f*N*3*C, nil)
	att := newBuf("att", f*N*C, nil)
	fch := newBuf("fc", f*N*4*C, nil)
	kc := newBuf("k cache", f*B*T*C, nil)
	vc := newBuf("v cache", f*B*T*C, nil)
	hP := newBuf("h", f*P*C, nil)
	part := newBuf("partials", 8*tiles*P, nil)
	tgt := newBuf("target logits", f*P, nil)
	nll := newBuf("nll", f*P, nil)
	sums := newBuf("sums", 16, nil)
	if err != nil {
		return model.LossSums{}, err
	}

	enc, err := g.dev.CreateCommandEncoder(&wgpu.CommandEncoderDescriptor{Label: "gpt2 loss"})
	if err != nil {
		return model.LossSums{}, err
	}
	r := &recorder{pass: enc.BeginComputePass(nil)}
	defer func() {
		for _, bg := range r.groups {
			bg.Close()
		}
	}()
	eps := cfg.LayerNormEps
	layernorm := func(out, x, w, b *wgpu.Buffer, rows int) {
		r.op(g.layernorm, nil, map[string]Buf{"x": {Buffer: x}, "w": {Buffer: w}, "b": {Buffer: b}, "out": {Buffer: out}},
			Params{"rows": float64(rows), "C": float64(C), "eps": eps}, grid(rows))
	}
	matmul := func(out, x, w, bias *wgpu.Buffer, M, K, Nn int, epi float64) {
		r.op(g.matmul, map[string]float64{"EPI": epi}, map[string]Buf{"x": {Buffer: x}, "w": {Buffer: w}, "bias": {Buffer: bias}, "out": {Buffer: out}},
			Params{"M": float64(M), "N": float64(Nn), "K": float64(K)}, grid(ceilDiv(ceilDiv(M, matmulTileM)*ceilDiv(Nn, matmulTileN), matmulWG)))
	}
	ranges := g.wteRanges()
	for _, vr := range ranges {
		r.op(g.embed, nil, map[string]Buf{"tokens": {Buffer: tok}, "wte": g.wteRange(vr), "wpe": {Buffer: g.wpe}, "out": {Buffer: res}},
			Params{"N": float64(N), "T": float64(T), "C": float64(C), "pos0": 0, "v0": float64(vr[0]), "V": float64(vr[1] - vr[0])}, grid(ceilDiv(N*C, 64)))
	}
	attParams := Params{"B": float64(B), "T": float64(T), "C": float64(C), "H": float64(H), "S": float64(T), "pos0": 0}
	for i := range g.layers {
		w := &g.layers[i]
		layernorm(ln, res, w.ln1w, w.ln1b, N)
		matmul(qkv, ln, w.qkvW, w.qkvB, N, C, 3*C, 0)
		r.op(g.kvWrite, nil, map[string]Buf{"qkv": {Buffer: qkv}, "kc": {Buffer: kc}, "vc": {Buffer: vc}}, attParams, grid(ceilDiv(N*C/4, 64)))
		r.op(g.attention, nil, map[string]Buf{"qkv": {Buffer: qkv}, "kc": {Buffer: kc}, "vc": {Buffer: vc}, "out": {Buffer: att}}, attParams, grid(ceilDiv(B*H*T, 64)))
		matmul(res, att, w.projW, w.projB, N, C, C, 2)
		layernorm(ln, res, w.ln2w, w.ln2b, N)
		matmul(fch, ln, w.fcW, w.fcB, N, C, 4*C, 1)
		matmul(res, fch, w.fcProjW, w.fcProjB, N, 4*C, C, 2)
	}
	layernorm(ln, res, g.lnfW, g.lnfB, N)
	if r.err != nil {
		enc.Finish()
		return model.LossSums{}, r.err
	}
	r.pass.End()
	// Gather the rows that predict a target: contiguous per sequence.
	p = 0
	for b, s := range seqs {
		if n := s.Scored(); n > 0 {
			enc.CopyBufferToBuffer(ln, uint64(f*(b*T+s.First-1)*C), hP, uint64(f*p*C), uint64(f*n*C))
			p += n
		}
	}
	r.pass = enc.BeginComputePass(nil)
	for _, vr := range ranges {
		r.op(g.lmHead, map[string]float64{"VT": float64(vt)}, map[string]Buf{"h": {Buffer: hP}, "wte": g.wteRange(vr), "targets": {Buffer: tgtIDs}, "part": {Buffer: part}, "tgt": {Buffer: tgt}},
			Params{"P": float64(P), "C": float64(C), "V": float64(vr[1] - vr[0]), "v0": float64(vr[0])},
			[3]uint32{uint32(ceilDiv(ceilDiv(P, lmHeadRows), 64)), uint32(ceilDiv(vr[1]-vr[0], vt)), 1})
	}
	r.op(g.nllSums, nil, map[string]Buf{"part": {Buffer: part}, "tgt": {Buffer: tgt}, "nll": {Buffer: nll}, "out": {Buffer: sums}},
		Params{"P": float64(P), "tiles": float64(tiles)}, [3]uint32{1, 1, 1})
	r.pass.End()
	if r.err != nil {
		enc.Finish()
		return model.LossSums{}, r.err
	}
	cb, err := enc.Finish()
	if err != nil {
		return model.LossSums{}, err
	}
	if _, err := g.dev.Queue().Submit(cb); err != nil {
		return model.LossSums{}, fmt.Errorf("gpu loss: %w", err)
	}
	out := make([]byte, 8)
	if err := g.dev.Queue().ReadBuffer(sums, 0, out); err != nil {
		return model.LossSums{}, fmt.Errorf("gpu loss: %w", err)
	}
	return model.LossSums{
		Sum:   float64(math.Float32frombits(binary.LittleEndian.Uint32(out))),
		SumSq: float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4:]))),
		Count: P,
	}, nil
}

// Dispatch geometry of the kernels, as their WGSL comments state it.
const (
	matmulTileM, matmulTileN = 4, 4 // matmul.wgsl: outputs per invocation
	matmulWG                 = 64   // matmul.wgsl: WG's default
	vocabTile                = 256  // lmhead_loss.wgsl: VT, vocabulary ids per tile
	lmHeadRows               = 4    // lmhead_loss.wgsl: positions per invocation
)

// wteRanges cuts the vocabulary into ranges [v0, v1) of ids whose rows of wte
// fit one binding (the device's maxStorageBufferBindingSize: 128 MiB on
// lavapipe, less than GPT-2's f32 wte or GPT-2 XL's f16 one); every range but
// the last is a whole number of lm_head vocabulary tiles, so its byte offset
// keeps the storage offset alignment.
func (g *GPT2) wteRanges() [][2]int {
	V, row := g.cfg.VocabSize, g.cfg.NEmbd*g.weightBytes()
	limit := int(min(g.dev.Limits().MaxStorageBufferBindingSize, 1<<31))
	if g.bindLimit > 0 {
		limit = g.bindLimit
	}
	per := max(limit/row/vocabTile, 1) * vocabTile
	align := int(max(g.dev.Limits().MinStorageBufferOffsetAlignment, 1))
	for per > vocabTile && (per*row)%align != 0 {
		per -= vocabTile
	}
	var rs [][2]int
	for v0 := 0; v0 < V; v0 += per {
		rs = append(rs, [2]int{v0, min(v0+per, V)})
	}
	return rs
}

// wteRange is the binding of wte's rows [vr[0], vr[1]).
func (g *GPT2) wteRange(vr [2]int) Buf {
	row := uint64(g.cfg.NEmbd * g.weightBytes())
	size := uint64(vr[1]-vr[0]) * row
	if end := uint64(vr[1]) * row; end == uint64(g.cfg.VocabSize)*row {
		size = g.wte.Size() - uint64(vr[0])*row // the last range keeps the buffer's padding
	}
	return Buf{Buffer: g.wte, Offset: uint64(vr[0]) * row, Size: size}
}

// weightBytes is the bytes of one stored weight.
func (g *GPT2) weightBytes() int {
	if g.f16 {
		return 2
	}
	return 4
}

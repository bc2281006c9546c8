package model

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// llm.c checkpoint format (karpathy/llm.c, train_gpt2.c): a header of 256
// little-endian int32 {magic, version, maxT, V, L, NH, C, Vp, 0...}, then the
// 16 parameter tensors back to back, fp32 (version 3) or bf16 (version 5):
//
//	wte (Vp, C)  wpe (maxT, C)
//	ln1w (L, C)  ln1b (L, C)  qkvw (L, 3C, C)  qkvb (L, 3C)
//	attprojw (L, C, C)  attprojb (L, C)  ln2w (L, C)  ln2b (L, C)
//	fcw (L, 4C, C)  fcb (L, 4C)  fcprojw (L, C, 4C)  fcprojb (L, C)
//	lnfw (C)  lnfb (C)
//
// Matmul weights are (out, in), as torch.nn.Linear stores them; Layer wants
// Hugging Face's Conv1D (in, out), so they are transposed on reading. The rows
// of wte past V are padding and are dropped.
const (
	llmcMagic       = 20240326
	llmcHeaderBytes = 256 * 4
	llmcFP32        = 3
	llmcBF16        = 5
)

// LoadLLMC reads an llm.c GPT-2 checkpoint (gpt2_124M.bin, gpt2_124M_bf16.bin).
func LoadLLMC(path string) (*Model, error) {
	m, err := loadLLMC(context.Background(), path, LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return m, nil
}

// llmcSizes returns the element counts of the 16 parameter tensors in file order.
func llmcSizes(c Config, vp int) [16]int64 {
	C, L := int64(c.NEmbd), int64(c.NLayer)
	return [16]int64{
		int64(vp) * C, int64(c.NPositions) * C,
		L * C, L * C, L * 3 * C * C, L * 3 * C,
		L * C * C, L * C, L * C, L * C,
		L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C,
		C, C,
	}
}

func loadLLMC(ctx context.Context, path string, opt LoadOptions) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < llmcHeaderBytes {
		return nil, fmt.Errorf("llm.c checkpoint of %d bytes is shorter than its %d-byte header", size, llmcHeaderBytes)
	}
	var h [256]int32
	if err := binary.Read(io.NewSectionReader(f, 0, llmcHeaderBytes), binary.LittleEndian, &h); err != nil {
		return nil, fmt.Errorf("read llm.c header: %w", err)
	}
	if h[0] != llmcMagic {
		hint := ""
		if h[0]&0xffff == 'P'|'K'<<8 { // a zip archive: PyTorch's pytorch_model.bin
			hint = " (a PyTorch pickle? use model.safetensors instead)"
		}
		return nil, fmt.Errorf("bad magic %d in llm.c header, want %d%s", h[0], llmcMagic, hint)
	}
	var esize int64
	switch h[1] {
	case llmcFP32:
		esize = 4
	case llmcBF16:
		esize = 2
	default:
		return nil, fmt.Errorf("llm.c checkpoint version %d is not supported: want %d (fp32) or %d (bf16)", h[1], llmcFP32, llmcBF16)
	}
	cfg := Config{
		NPositions: int(h[2]), VocabSize: int(h[3]), NLayer: int(h[4]),
		NHead: int(h[5]), NEmbd: int(h[6]), LayerNormEps: 1e-5,
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm.c header: %w", err)
	}
	vp := int(h[7])
	if vp < cfg.VocabSize || vp > maxDim {
		return nil, fmt.Errorf("llm.c header: padded vocab size %d, want %d..%d", vp, cfg.VocabSize, maxDim)
	}
	// With sizes up to 2^24, L*4C*C can overflow int64: bound the parameter
	// count in float64 by the file size before counting exactly.
	fC, fL := float64(cfg.NEmbd), float64(cfg.NLayer)
	approx := (float64(vp)+float64(cfg.NPositions)+2)*fC + fL*(12*fC*fC+13*fC)
	// (The slack absorbs float rounding; the exact check follows.)
	if need := llmcHeaderBytes + approx*float64(esize); need > float64(size)+1e6 {
		return nil, fmt.Errorf("llm.c checkpoint is %d bytes, but its header (L=%d, C=%d, Vp=%d, maxT=%d, version %d) needs %.0f (truncated file?)",
			size, cfg.NLayer, cfg.NEmbd, vp, cfg.NPositions, h[1], need)
	}
	sizes := llmcSizes(cfg, vp)
	var total int64
	for _, n := range sizes {
		total += n * esize
	}
	if want := llmcHeaderBytes + total; size != want {
		hint := "truncated file?"
		if size > want {
			hint = "trailing data or wrong header?"
		}
		return nil, fmt.Errorf("llm.c checkpoint is %d bytes, but its header (L=%d, C=%d, Vp=%d, maxT=%d, version %d) needs exactly %d (%s)",
			size, cfg.NLayer, cfg.NEmbd, vp, cfg.NPositions, h[1], want, hint)
	}

	r := &llmcReader{
		ctx: ctx, r: bufio.NewReaderSize(io.NewSectionReader(f, llmcHeaderBytes, total), 1<<20),
		bf16: esize == 2, esize: esize, total: total, progress: opt.Progress,
	}
	m := &Model{Config: cfg, Source: path}
	w := &m.Weights
	w.Layers = make([]Layer, cfg.NLayer)
	C, V, T := cfg.NEmbd, cfg.VocabSize, cfg.NPositions
	w.WTE = r.read("wte", -1, V*C)
	r.skip(int64(vp-V) * int64(C))
	w.LMHead = w.WTE
	w.WPE = r.read("wpe", -1, T*C)
	// Per kind, all layers: a vector field or an (out, in) matrix to transpose.
	kinds := []struct {
		name    string
		field   func(*Layer) *[]float32
		out, in int // in == 0: a vector of out values
	}{
		{"ln1w", func(l *Layer) *[]float32 { return &l.LN1W }, C, 0},
		{"ln1b", func(l *Layer) *[]float32 { return &l.LN1B }, C, 0},
		{"qkvw", func(l *Layer) *[]float32 { return &l.QKVW }, 3 * C, C},
		{"qkvb", func(l *Layer) *[]float32 { return &l.QKVB }, 3 * C, 0},
		{"attprojw", func(l *Layer) *[]float32 { return &l.ProjW }, C, C},
		{"attprojb", func(l *Layer) *[]float32 { return &l.ProjB }, C, 0},
		{"ln2w", func(l *Layer) *[]float32 { return &l.LN2W }, C, 0},
		{"ln2b", func(l *Layer) *[]float32 { return &l.LN2B }, C, 0},
		{"fcw", func(l *Layer) *[]float32 { return &l.FCW }, 4 * C, C},
		{"fcb", func(l *Layer) *[]float32 { return &l.FCB }, 4 * C, 0},
		{"fcprojw", func(l *Layer) *[]float32 { return &l.FCProjW }, C, 4 * C},
		{"fcprojb", func(l *Layer) *[]float32 { return &l.FCProjB }, C, 0},
	}
	for _, k := range kinds {
		for i := range w.Layers {
			dst := k.field(&w.Layers[i])
			if k.in == 0 {
				*dst = r.read(k.name, i, k.out)
			} else {
				*dst = r.readTransposed(k.name, i, k.out, k.in)
			}
		}
	}
	w.LNFW = r.read("lnfw", -1, C)
	w.LNFB = r.read("lnfb", -1, C)
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

// llmcReader reads consecutive tensors of an llm.c checkpoint. After the first
// error every call is a no-op and err holds that error.
type llmcReader struct {
	ctx      context.Context
	r        *bufio.Reader
	bf16     bool
	esize    int64
	buf      []byte
	err      error
	done     int64
	total    int64
	progress func(done, total int64)
}

// fill reads len(dst) values into dst.
func (r *llmcReader) fill(dst []float32) {
	const chunk = 1 << 16 // values per read
	for len(dst) > 0 && r.err == nil {
		n := min(len(dst), chunk)
		if cap(r.buf) < n*int(r.esize) {
			r.buf = make([]byte, chunk*r.esize)
		}
		b := r.buf[:n*int(r.esize)]
		if _, err := io.ReadFull(r.r, b); err != nil {
			r.err = err
			return
		}
		if r.bf16 {
			convBF16(dst[:n], b)
		} else {
			convF32(dst[:n], b)
		}
		dst = dst[n:]
		r.done += int64(len(b))
	}
}

// finish checks the tensor just read, names it in errors and reports progress.
func (r *llmcReader) finish(name string, layer int, x []float32) {
	if r.err == nil {
		r.err = checkFinite(x)
	}
	if r.err == nil {
		r.err = r.ctx.Err()
	}
	if r.err != nil {
		if layer >= 0 {
			name = fmt.Sprintf("%s (layer %d)", name, layer)
		}
		r.err = fmt.Errorf("tensor %s: %w", name, r.err)
		return
	}
	if r.progress != nil {
		r.progress(r.done, r.total)
	}
}

func (r *llmcReader) read(name string, layer, n int) []float32 {
	if r.err != nil {
		return nil
	}
	x := make([]float32, n)
	r.fill(x)
	r.finish(name, layer, x)
	return x
}

// readTransposed reads an (out, in) matrix and returns it as (in, out). It
// reads a band of rows at a time and writes each column of the band as one
// contiguous run, which keeps the scatter cache-friendly.
func (r *llmcReader) readTransposed(name string, layer, out, in int) []float32 {
	if r.err != nil {
		return nil
	}
	const band = 32 // rows per band
	x := make([]float32, out*in)
	rows := make([]float32, band*in)
	for o0 := 0; o0 < out; o0 += band {
		nb := min(band, out-o0)
		r.fill(rows[:nb*in])
		for i := range in {
			dst := x[i*out+o0 : i*out+o0+nb]
			for k := range dst {
				dst[k] = rows[k*in+i]
			}
		}
	}
	r.finish(name, layer, x)
	return x
}

// skip discards n values.
func (r *llmcReader) skip(n int64) {
	if r.err != nil {
		return
	}
	if _, err := r.r.Discard(int(n * r.esize)); err != nil {
		r.err = fmt.Errorf("tensor wte padding: %w", err)
	}
	r.done += n * r.esize
}

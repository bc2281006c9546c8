package model

import (
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
// of wte past V are padding and are skipped. The per-layer kinds come in the
// order of layerTable, which gives their names and shapes.
const (
	llmcMagic       = 20240326
	llmcHeaderBytes = 256 * 4
	llmcFP32        = 3
	llmcBF16        = 5
)

// LoadLLMC reads an llm.c GPT-2 checkpoint (gpt2_124M.bin, gpt2_124M_bf16.bin).
func LoadLLMC(path string) (*Model, error) {
	m, err := loadLLMC(context.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return m, nil
}

func loadLLMC(ctx context.Context, path string) (*Model, error) {
	c, err := openLLMC(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.load(ctx, LoadOptions{})
}

// openLLMC reads and checks an llm.c header and the file's size, and lays
// the table's tensors out over the file.
func openLLMC(path string) (_ *Checkpoint, err error) {
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
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
	var dtype DType
	switch h[1] {
	case llmcFP32:
		dtype = F32
	case llmcBF16:
		dtype = BF16
	default:
		return nil, fmt.Errorf("llm.c checkpoint version %d is not supported: want %d (fp32) or %d (bf16)", h[1], llmcFP32, llmcBF16)
	}
	esize := int64(dtype.Size())
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
	// The table's tensors in file order: wte (with Vp-V padding rows after
	// it), wpe, each per-layer kind for all layers, ln_f.
	c := &Checkpoint{cfg: cfg, src: path, closers: []io.Closer{f}, files: []string{path}, srcs: make(map[string]*source), llmc: true}
	off := int64(llmcHeaderBytes)
	add := func(s TensorSpec, llmcName string, stored int64) {
		n := s.NumElements()
		name := "tensor " + llmcName
		if s.Layer >= 0 {
			name = fmt.Sprintf("tensor %s (layer %d), %s", llmcName, s.Layer, s.Name)
		} else if llmcName+".weight" != s.Name {
			name += ", " + s.Name
		}
		src := &source{what: name, r: f, off: off, dtype: dtype, n: n}
		if len(s.Shape) == 2 && s.Layer >= 0 { // (in, out) in HF, (out, in) here
			src.rows, src.cols = s.Shape[1], s.Shape[0]
		}
		c.srcs[s.Name] = src
		off += stored * esize
	}
	emb, fin := cfg.embeddings(), cfg.final()
	C := int64(cfg.NEmbd)
	add(emb[0], "wte", int64(vp)*C)
	add(emb[1], "wpe", int64(cfg.NPositions)*C)
	for _, t := range layerTable {
		for i := range cfg.NLayer {
			s := cfg.layerSpec(i, t)
			add(s, t.llmc, int64(s.NumElements()))
		}
	}
	add(fin[0], "lnfw", C)
	add(fin[1], "lnfb", C)
	if want := off; size != want {
		hint := "truncated file?"
		if size > want {
			hint = "trailing data or wrong header?"
		}
		return nil, fmt.Errorf("llm.c checkpoint is %d bytes, but its header (L=%d, C=%d, Vp=%d, maxT=%d, version %d) needs exactly %d (%s)",
			size, cfg.NLayer, cfg.NEmbd, vp, cfg.NPositions, h[1], want, hint)
	}
	c.setStored()
	return c, nil
}

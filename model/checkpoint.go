package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// TensorReader hands out a GPT-2's parameters one tensor at a time, in the
// dtype a backend wants, so that weights can go to a GPU without a whole-model
// float32 copy on the host. A *Checkpoint is one (reading the file lazily); a
// loaded *Model is one through Model.Reader (Model cannot have a Config method,
// since Config is its field).
type TensorReader interface {
	// Config is the model's shape; Config().Tensors() lists what ReadTensor reads.
	Config() Config
	// ReadTensor returns the tensor of spec (one of Config().Tensors(), or
	// Config().LMHeadSpec()) in Hugging Face's layout as little-endian dtype.
	ReadTensor(ctx context.Context, spec TensorSpec, dtype DType) ([]byte, error)
	// LMHeadTied reports whether lm_head is wte.
	LMHeadTied(ctx context.Context) (bool, error)
}

// Checkpoint is a GPT-2 checkpoint on disk whose config and headers have been
// read and checked: every tensor of the config is present, with its shape and
// a float dtype. Tensor data is read on demand by ReadTensor, one tensor at a
// time, so uploading a model needs no more host memory than its largest tensor
// plus a bounded buffer. A Checkpoint is safe for concurrent use; Close it when
// done.
type Checkpoint struct {
	cfg     Config
	src     string
	srcs    map[string]*source // by Hugging Face name; lm_head.weight only when stored
	closers []io.Closer
	files   []string // the weight files, in order
	stored  string
	llmc    bool // an llm.c checkpoint: GPT-2's tokenizer, whatever lies beside it

	mu    sync.Mutex
	spare []*scratch
}

var _ TensorReader = (*Checkpoint)(nil)

// OpenCheckpoint opens the GPT-2 checkpoint at path, which is anything Load
// takes (a Hugging Face folder, a .safetensors file or sharded index with
// config.json beside it, an llm.c checkpoint), and checks the presence, shape
// and dtype of every tensor before any tensor data is read.
func OpenCheckpoint(ctx context.Context, path string) (*Checkpoint, error) {
	c, err := openCheckpoint(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return c, nil
}

func openCheckpoint(ctx context.Context, path string) (*Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, checkRegular(path) // names a broken link as such
	}
	if fi.IsDir() {
		// model.safetensors first, then the index, as transformers'
		// from_pretrained looks for them (a folder may hold both).
		cfg := filepath.Join(path, "config.json")
		st := filepath.Join(path, "model.safetensors")
		if ok, err := present(st); ok {
			if err != nil {
				return nil, err
			}
			return openSafetensors(ctx, path, st, []string{st}, cfg, nil)
		}
		idx := filepath.Join(path, indexName)
		if ok, err := present(idx); ok {
			if err != nil {
				return nil, err
			}
			return openSharded(ctx, path, idx, cfg)
		}
		if ok, _ := present(filepath.Join(path, "pytorch_model.bin")); ok {
			return nil, fmt.Errorf("folder has pytorch_model.bin (a PyTorch pickle, which wgpu-eval never unpickles) but no model.safetensors: "+
				"convert it once, in Python: AutoModelForCausalLM.from_pretrained(%q).save_pretrained(%q, safe_serialization=True)", path, path)
		}
		return nil, fmt.Errorf("folder has neither model.safetensors nor %s", indexName)
	}
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	// llm.c checkpoints by their magic number; a .bin that lacks it gets
	// llm.c's error (bad magic) rather than a safetensors one.
	if isLLMC(path) || strings.HasSuffix(path, ".bin") {
		return openLLMC(path)
	}
	cfg := filepath.Join(filepath.Dir(path), "config.json")
	if strings.HasSuffix(path, ".index.json") {
		return openSharded(ctx, path, path, cfg)
	}
	return openSafetensors(ctx, path, path, []string{path}, cfg, nil)
}

// Config is the checkpoint's model shape.
func (c *Checkpoint) Config() Config { return c.cfg }

// Files are the checkpoint's weight files (safetensors shards or the llm.c
// file), in order: what identifies its weights.
func (c *Checkpoint) Files() []string { return c.files }

// LLMC reports whether the checkpoint is an llm.c file. llm.c checkpoints
// are GPT-2's and carry no tokenizer: they use GPT-2's (tokenizer.GPT2),
// never tokenizer files that happen to lie beside them.
func (c *Checkpoint) LLMC() bool { return c.llmc }

// Source is the path the checkpoint was opened from.
func (c *Checkpoint) Source() string { return c.src }

// StoredDType is the dtype of the stored tensors: "F32", "F16" or "BF16", or
// "mixed" when they differ.
func (c *Checkpoint) StoredDType() string { return c.stored }

// Close closes the checkpoint's files.
func (c *Checkpoint) Close() error {
	var errs []error
	for _, f := range c.closers {
		errs = append(errs, f.Close())
	}
	c.closers = nil
	return errors.Join(errs...)
}

// ReadTensor reads the tensor of spec, which must be one of Config().Tensors()
// or Config().LMHeadSpec(), and returns its values in Hugging Face's layout
// (Conv1D weights (in, out)) as little-endian bytes of dtype. Stored values in
// dtype are copied as they are; others are converted (rounding to nearest
// even), and a finite value outside dtype's range is an error, as is a NaN or
// infinite weight. lm_head reads as wte when the file has no lm_head.weight.
// Memory: the result plus a bounded buffer per core (the tensor is read
// and converted on every core).
func (c *Checkpoint) ReadTensor(ctx context.Context, spec TensorSpec, dtype DType) ([]byte, error) {
	b, err := c.readTensor(ctx, spec, dtype)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.src, err)
	}
	return b, nil
}

// LMHeadTied reports whether lm_head is wte: the file has no lm_head.weight
// or it holds the same values. The two are compared a chunk at a time.
func (c *Checkpoint) LMHeadTied(ctx context.Context) (bool, error) {
	tied, err := c.lmHeadTied(ctx)
	if err != nil {
		return false, fmt.Errorf("%s: %w", c.src, err)
	}
	return tied, nil
}

// sourceOf returns where spec's data is, after checking spec against the table.
func (c *Checkpoint) sourceOf(spec TensorSpec) (*source, error) {
	if err := c.cfg.checkSpec(spec); err != nil {
		return nil, err
	}
	s, ok := c.srcs[spec.Name]
	if !ok && spec.Role == RoleLMHead {
		s, ok = c.srcs[c.cfg.embeddings()[0].Name]
	}
	if !ok {
		return nil, fmt.Errorf("tensor %s: not in the checkpoint", spec.Name) // checked at open: a bug
	}
	return s, nil
}

func (c *Checkpoint) readTensor(ctx context.Context, spec TensorSpec, dtype DType) ([]byte, error) {
	if dtype.Size() == 0 {
		return nil, fmt.Errorf("tensor %s: dtype %v, want F32, F16 or BF16", spec.Name, dtype)
	}
	s, err := c.sourceOf(spec)
	if err != nil {
		return nil, err
	}
	e := &encoder{out: make([]byte, s.n*dtype.Size()), dtype: dtype, stored: s.dtype}
	if err := c.streamAll(ctx, s, e.put); err != nil {
		return nil, err
	}
	return e.out, nil
}

// readFloat32 reads the tensor of spec as float32, for Load.
func (c *Checkpoint) readFloat32(ctx context.Context, spec TensorSpec) ([]float32, error) {
	s, err := c.sourceOf(spec)
	if err != nil {
		return nil, err
	}
	out := make([]float32, s.n)
	err = c.streamAll(ctx, s, func(dst int, vals []float32, _ []byte) error {
		copy(out[dst:], vals)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Checkpoint) lmHeadTied(ctx context.Context) (bool, error) {
	lm, ok := c.srcs[lmHead]
	if !ok {
		return true, nil
	}
	wte := c.srcs[c.cfg.embeddings()[0].Name]
	if wte.rows != 0 || lm.rows != 0 || wte.n != lm.n {
		return false, nil
	}
	a, b := c.getScratch(), c.getScratch()
	defer c.putScratch(a)
	defer c.putScratch(b)
	for e := 0; e < wte.n; e += chunkValues {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		k := min(chunkValues, wte.n-e)
		x, _, err := wte.chunk(a, e, k)
		if err != nil {
			return false, err
		}
		y, _, err := lm.chunk(b, e, k)
		if err != nil {
			return false, err
		}
		for i := range x {
			if x[i] != y[i] {
				return false, nil
			}
		}
	}
	return true, nil
}

// streamAll is s.stream on up to GOMAXPROCS goroutines, each over its own
// part of the tensor (streamPart) with its own scratch memory, so that a
// tensor's conversion (f32 to f16: Hugging Face's gpt2 for the GPU) uses
// every core: put gets disjoint runs, concurrently. Its error is the one
// stream returns: the first in file order, since each part stops at its own
// first and the earliest part's is taken.
func (c *Checkpoint) streamAll(ctx context.Context, s *source, put func(dst int, vals []float32, raw []byte) error) error {
	parts := min(runtime.GOMAXPROCS(0), s.units())
	if parts <= 1 {
		sc := c.getScratch()
		defer c.putScratch(sc)
		return s.stream(ctx, sc, put)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			sc := c.getScratch()
			defer c.putScratch(sc)
			errs[p] = s.streamPart(ctx, sc, p, parts, put)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *Checkpoint) getScratch() *scratch {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.spare); n > 0 {
		sc := c.spare[n-1]
		c.spare = c.spare[:n-1]
		return sc
	}
	return new(scratch)
}

func (c *Checkpoint) putScratch(sc *scratch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.spare) < max(4, runtime.GOMAXPROCS(0)) {
		c.spare = append(c.spare, sc)
	}
}

// setStored records the stored dtype over all sources.
func (c *Checkpoint) setStored() {
	for _, s := range c.srcs {
		switch d := s.dtype.String(); {
		case c.stored == "":
			c.stored = d
		case c.stored != d:
			c.stored = "mixed"
		}
	}
}

// Reader returns m as a TensorReader, for backends that upload weights from
// either a loaded Model or a Checkpoint. It reads m's Weights (a nil LMHead is
// tied to WTE) and converts them as Checkpoint.ReadTensor does.
func (m *Model) Reader() TensorReader { return modelReader{m} }

type modelReader struct{ m *Model }

func (r modelReader) Config() Config { return r.m.Config }

func (r modelReader) ReadTensor(_ context.Context, spec TensorSpec, dtype DType) ([]byte, error) {
	if err := r.m.Config.checkSpec(spec); err != nil {
		return nil, err
	}
	p := r.m.Weights.slot(spec)
	if p == nil {
		return nil, fmt.Errorf("tensor %s: model has %d layers", spec.Name, len(r.m.Weights.Layers))
	}
	x := *p
	if spec.Role == RoleLMHead && x == nil {
		x = r.m.Weights.WTE
	}
	if len(x) != spec.NumElements() {
		return nil, fmt.Errorf("tensor %s has %d values, want %d for shape %v", spec.Name, len(x), spec.NumElements(), spec.Shape)
	}
	if i := firstNonFinite(x); i >= 0 {
		return nil, fmt.Errorf("tensor %s: %w", spec.Name, nonFinite(x[i], i))
	}
	b, err := encode(x, dtype)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", spec.Name, err)
	}
	return b, nil
}

func (r modelReader) LMHeadTied(context.Context) (bool, error) {
	w := &r.m.Weights
	if w.LMHead == nil || len(w.LMHead) == 0 || (len(w.WTE) > 0 && &w.LMHead[0] == &w.WTE[0]) {
		return true, nil
	}
	if len(w.LMHead) != len(w.WTE) {
		return false, nil
	}
	for i := range w.WTE {
		if w.WTE[i] != w.LMHead[i] {
			return false, nil
		}
	}
	return true, nil
}

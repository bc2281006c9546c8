package model

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// LoadOptions tunes LoadContext. The zero value is ready to use.
type LoadOptions struct {
	// Progress, when set, is called after each tensor with the bytes of tensor
	// data read so far and the total to read.
	Progress func(done, total int64)
	// BF16 (LoadCPU only) loads for the bf16 mode (bf16.go): every matrix is
	// rounded to bf16 as it is read and held so (half the memory of float32),
	// and the products take bf16 operands as AVX512_BF16's VDPBF16PS does.
	// It needs a CPU with AVX512_BF16 (errNoBF16 otherwise) unless
	// PortableBF16 is set or WGPU_EVAL_CPU_KERNELS=generic.
	BF16 bool
	// PortableBF16 runs the bf16 mode's products on the portable Go kernels,
	// which compute the same bits as VDPBF16PS on any CPU, slowly: for tests
	// and as a reference.
	PortableBF16 bool
}

// Load reads a GPT-2 model from path, which is one of:
//   - a folder holding config.json and model.safetensors, or config.json and a
//     sharded model.safetensors.index.json with its shards (model.safetensors
//     where the folder has both, as transformers chooses);
//   - a .safetensors file (or a .safetensors.index.json) with config.json beside it;
//   - an llm.c checkpoint (told by its magic number, whatever its name).
//
// Safetensors keys may carry GPT-2's "transformer." prefix or not, and the
// Llama family's "model." prefix or not; the attn.bias and attn.masked_bias
// buffers (and the Llama family's rotary inv_freq) are ignored;
// lm_head.weight is used where config.json says tie_word_embeddings is false
// (and must then be there), else LMHead is WTE, as transformers ties them. Every tensor's
// shape is checked against the config, NaN and infinite weights are refused,
// and all weights are converted to float32. It is OpenCheckpoint followed by
// a float32 read of every tensor.
func Load(path string) (*Model, error) {
	return LoadContext(context.Background(), path, LoadOptions{})
}

// LoadContext is Load with cancellation and progress reports.
func LoadContext(ctx context.Context, path string, opt LoadOptions) (*Model, error) {
	m, err := load(ctx, path, opt)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return m, nil
}

func load(ctx context.Context, path string, opt LoadOptions) (*Model, error) {
	c, err := openCheckpoint(ctx, path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.load(ctx, opt)
}

// load reads every tensor of c as float32 into a Model.
func (c *Checkpoint) load(ctx context.Context, opt LoadOptions) (*Model, error) {
	cfg := c.cfg
	var total int64
	for _, s := range c.srcs {
		total += s.bytes()
	}
	m := &Model{Config: cfg, Source: c.src}
	w := &m.Weights
	w.Layers = make([]Layer, cfg.NLayer)
	var done int64
	if opt.Progress != nil {
		opt.Progress(0, total) // the start, so that a display's rate counts from here
	}
	report := func(n int64) {
		done += n
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	for _, s := range cfg.Tensors() {
		x, err := c.readFloat32(ctx, s)
		if err != nil {
			return nil, err
		}
		*w.slot(s) = x
		report(c.srcs[s.Name].bytes())
	}
	w.LMHead = w.WTE
	if lm, ok := c.srcs[lmHead]; ok { // absent when tied (and for a tied Llama-family model)
		tied, err := c.lmHeadTied(ctx)
		if err != nil {
			return nil, err
		}
		if !tied {
			if w.LMHead, err = c.readFloat32(ctx, cfg.LMHeadSpec()); err != nil {
				return nil, err
			}
		}
		report(lm.bytes())
	}
	return m, nil
}

const indexName = "model.safetensors.index.json"

// isLLMC reports whether the file at path starts with llm.c's magic number.
func isLLMC(path string) bool {
	if checkRegular(path) != nil {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(b[:]) == llmcMagic
}

func loadConfigBeside(cfgPath string) (Config, error) {
	if ok, _ := present(cfgPath); !ok {
		return Config{}, fmt.Errorf("no config.json: want %s", cfgPath)
	}
	return LoadConfig(cfgPath)
}

// openSharded opens the shards listed in a model.safetensors.index.json.
func openSharded(ctx context.Context, src, idxPath, cfgPath string) (*Checkpoint, error) {
	if err := checkRegular(idxPath); err != nil {
		return nil, err
	}
	data, err := infile.ReadFile(idxPath, MaxJSONFile)
	if err != nil {
		return nil, err
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", idxPath, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("%s: empty weight_map", idxPath)
	}
	names := slices.Sorted(maps.Keys(idx.WeightMap))
	var shards []string
	for _, name := range names {
		shard := idx.WeightMap[name]
		if !filepath.IsLocal(shard) {
			return nil, fmt.Errorf("%s: tensor %q: shard %q is not a file name in the same folder", idxPath, name, shard)
		}
		shards = append(shards, shard)
	}
	slices.Sort(shards)
	shards = slices.Compact(shards)
	dir := filepath.Dir(idxPath)
	files := make([]string, len(shards))
	for i, s := range shards {
		files[i] = filepath.Join(dir, s)
		if ok, _ := present(files[i]); !ok {
			return nil, fmt.Errorf("%s: shard %s is missing (%d shards listed; an incomplete download?)", idxPath, s, len(shards))
		}
	}
	return openSafetensors(ctx, src, idxPath, files, cfgPath, func(sts []*Safetensors) error {
		for _, name := range names {
			st := sts[slices.Index(shards, idx.WeightMap[name])]
			if _, ok := st.Tensor(name); !ok {
				return fmt.Errorf("%s: tensor %q: listed in %s but missing", st.Path, name, filepath.Base(idxPath))
			}
		}
		for _, st := range sts {
			for _, t := range st.Tensors {
				if filepath.Join(dir, idx.WeightMap[t.Name]) != st.Path {
					return fmt.Errorf("%s: tensor %q: not listed for this file in %s", st.Path, t.Name, filepath.Base(idxPath))
				}
			}
		}
		return nil
	})
}

// tensorRef locates one tensor: its file and its name there.
type tensorRef struct {
	st   *Safetensors
	info TensorInfo
}

func (r tensorRef) String() string {
	if r.st.Path == "" {
		return fmt.Sprintf("tensor %q", r.info.Name)
	}
	return fmt.Sprintf("%s: tensor %q", r.st.Path, r.info.Name)
}

// check reports a shape other than want or a dtype that is not a float.
func (r tensorRef) check(want []int, c Config) error {
	if !slices.Equal(r.info.Shape, want) {
		return fmt.Errorf("%v: shape %v, want %v for %s with vocab_size %d", r, r.info.Shape, want, c.Describe(), c.VocabSize)
	}
	if _, ok := parseDType(r.info.DType); !ok {
		return fmt.Errorf("%v: dtype %s, want F32, F16 or BF16", r, r.info.DType)
	}
	return nil
}

// source is where r's data lies.
func (r tensorRef) source() *source {
	d, _ := parseDType(r.info.DType)
	return &source{what: r.String(), r: r.st.r, off: r.st.dataOff + r.info.Begin, dtype: d, n: int(r.info.NumElements())}
}

// openSafetensors opens files, runs check on them (when not nil), then matches
// their tensors against the config's table, checking presence, shape and
// dtype of every one. where is the file (or index) that missing-tensor errors
// name.
func openSafetensors(ctx context.Context, src, where string, files []string, cfgPath string, check func([]*Safetensors) error) (_ *Checkpoint, err error) {
	cfg, err := loadConfigBeside(cfgPath)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{cfg: cfg, src: src}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	var sts []*Safetensors
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := OpenSafetensors(f)
		if err != nil {
			return nil, err
		}
		sts = append(sts, st)
		c.closers = append(c.closers, st)
		c.files = append(c.files, f)
	}
	if check != nil {
		if err := check(sts); err != nil {
			return nil, err
		}
	}
	refs, err := indexTensors(sts, cfg)
	if err != nil {
		return nil, err
	}
	c.srcs = make(map[string]*source, len(refs))
	want := func(s TensorSpec) error {
		r, ok := refs[s.Name]
		if !ok {
			if cfg.Arch == ArchLlama {
				return fmt.Errorf("%s: missing tensor %q (with or without the \"model.\" prefix)", where, s.Name)
			}
			return fmt.Errorf("%s: missing tensor %q (with or without the \"transformer.\" prefix)", where, s.Name)
		}
		if err := r.check(s.Shape, cfg); err != nil {
			return err
		}
		c.srcs[s.Name] = r.source()
		return nil
	}
	for s := range cfg.tensors() {
		if err := want(s); err != nil {
			return nil, err
		}
	}
	switch _, ok := refs[lmHead]; {
	case cfg.Arch == ArchLlama && cfg.TiedEmbed, cfg.Arch == ArchGPT2 && !cfg.UntiedHead:
		// transformers ties lm_head to the embeddings after loading: a stored
		// lm_head.weight is not used.
	case ok:
		if err := want(cfg.LMHeadSpec()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: missing tensor %q (config.json says tie_word_embeddings is false)", where, lmHead)
	}
	c.setStored()
	return c, nil
}

// indexTensors maps the parameter names of cfg's table and lm_head to the
// files' tensors, whose names may have GPT-2's "transformer." prefix, or may
// lack the Llama family's "model." (a checkpoint of the base model, which
// transformers loads into the model with the LM head alike). Attention
// buffers are skipped; any other tensor, or two for one parameter, is an error.
func indexTensors(sts []*Safetensors, cfg Config) (map[string]tensorRef, error) {
	refs := make(map[string]tensorRef)
	for _, st := range sts {
		for _, t := range st.Tensors {
			name := t.Name
			switch {
			case cfg.Arch == ArchGPT2:
				name = strings.TrimPrefix(name, "transformer.")
			case cfg.Arch == ArchLlama && !strings.HasPrefix(name, "model.") && name != lmHead:
				name = "model." + name
			}
			r := tensorRef{st, t}
			if isBuffer(name, cfg) {
				continue
			}
			if _, ok := cfg.lookupSpec(name); !ok {
				return nil, fmt.Errorf("%v: unexpected tensor for %s", r, cfg.Describe())
			}
			if old, dup := refs[name]; dup {
				return nil, fmt.Errorf("%v: the same parameter as %v", r, old)
			}
			refs[name] = r
		}
	}
	return refs, nil
}

// isBuffer reports whether name (without prefix) is one of the buffers
// older transformers versions saved, for a layer N of the model: GPT-2's
// h.N.attn.bias (the causal mask) or h.N.attn.masked_bias, the Llama
// family's model.layers.N.self_attn.rotary_emb.inv_freq.
func isBuffer(name string, cfg Config) bool {
	p := strings.Split(name, ".")
	var num string
	switch {
	case cfg.Arch == ArchGPT2 && len(p) == 4 && p[0] == "h" && p[2] == "attn" && (p[3] == "bias" || p[3] == "masked_bias"):
		num = p[1]
	case cfg.Arch == ArchLlama && len(p) == 6 && p[0] == "model" && p[1] == "layers" && p[3] == "self_attn" && p[4] == "rotary_emb" && p[5] == "inv_freq":
		num = p[2]
	default:
		return false
	}
	n, err := strconv.Atoi(num)
	return err == nil && n >= 0 && n < cfg.NLayer && strconv.Itoa(n) == num
}

// LoadReader returns the float32 Model that r holds: the Model itself when r
// came from Model.Reader, or a Checkpoint's weights widened to float32 one
// tensor at a time.
func LoadReader(ctx context.Context, r TensorReader, opt LoadOptions) (*Model, error) {
	switch r := r.(type) {
	case modelReader:
		return r.m, nil
	case *Checkpoint:
		m, err := r.load(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", r.src, err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("load: a %T is neither a Checkpoint nor a Model's reader", r)
}

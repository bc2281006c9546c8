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
)

// LoadOptions tunes LoadContext. The zero value is ready to use.
type LoadOptions struct {
	// Progress, when set, is called after each tensor with the bytes of tensor
	// data read so far and the total to read.
	Progress func(done, total int64)
}

// Load reads a GPT-2 model from path, which is one of:
//   - a folder holding config.json and model.safetensors, or config.json and a
//     sharded model.safetensors.index.json with its shards;
//   - a .safetensors file (or a .safetensors.index.json) with config.json beside it;
//   - an llm.c checkpoint (told by its magic number, whatever its name).
//
// Safetensors keys may carry the "transformer." prefix or not; the
// attn.bias and attn.masked_bias buffers are ignored; lm_head.weight is used
// when present and different from wte, else LMHead is WTE. Every tensor's
// shape is checked against the config, NaN and infinite weights are refused,
// and all weights are converted to float32.
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
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		cfg := filepath.Join(path, "config.json")
		if idx := filepath.Join(path, indexName); exists(idx) {
			return loadSharded(ctx, path, idx, cfg, opt)
		}
		if st := filepath.Join(path, "model.safetensors"); exists(st) {
			return loadSafetensors(ctx, path, st, []string{st}, cfg, opt, nil)
		}
		return nil, fmt.Errorf("folder has neither model.safetensors nor %s", indexName)
	}
	// llm.c checkpoints by their magic number; a .bin that lacks it gets
	// llm.c's error (bad magic) rather than a safetensors one.
	if isLLMC(path) || strings.HasSuffix(path, ".bin") {
		return loadLLMC(ctx, path, opt)
	}
	cfg := filepath.Join(filepath.Dir(path), "config.json")
	if strings.HasSuffix(path, ".index.json") {
		return loadSharded(ctx, path, path, cfg, opt)
	}
	return loadSafetensors(ctx, path, path, []string{path}, cfg, opt, nil)
}

const indexName = "model.safetensors.index.json"

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// isLLMC reports whether the file at path starts with llm.c's magic number.
func isLLMC(path string) bool {
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
	if !exists(cfgPath) {
		return Config{}, fmt.Errorf("no config.json: want %s", cfgPath)
	}
	return LoadConfig(cfgPath)
}

// loadSharded loads the shards listed in a model.safetensors.index.json.
func loadSharded(ctx context.Context, src, idxPath, cfgPath string, opt LoadOptions) (*Model, error) {
	data, err := os.ReadFile(idxPath)
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
	}
	return loadSafetensors(ctx, src, idxPath, files, cfgPath, opt, func(sts []*Safetensors) error {
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

func (r tensorRef) String() string { return fmt.Sprintf("%s: tensor %q", r.st.Path, r.info.Name) }

// check reports a shape other than want or a dtype that is not a float.
func (r tensorRef) check(want []int, c Config) error {
	if !slices.Equal(r.info.Shape, want) {
		return fmt.Errorf("%v: shape %v, want %v for n_layer %d, n_embd %d, n_positions %d, vocab_size %d",
			r, r.info.Shape, want, c.NLayer, c.NEmbd, c.NPositions, c.VocabSize)
	}
	switch r.info.DType {
	case "F32", "F16", "BF16":
		return nil
	}
	return fmt.Errorf("%v: dtype %s, want F32, F16 or BF16", r, r.info.DType)
}

const lmHead = "lm_head.weight"

// loadSafetensors opens files, runs check on them (when not nil), then matches
// their tensors against the config's parameters and reads them. where is the
// file (or index) that missing-tensor errors name.
func loadSafetensors(ctx context.Context, src, where string, files []string, cfgPath string, opt LoadOptions, check func([]*Safetensors) error) (*Model, error) {
	cfg, err := loadConfigBeside(cfgPath)
	if err != nil {
		return nil, err
	}
	var sts []*Safetensors
	defer func() {
		for _, st := range sts {
			st.Close()
		}
	}()
	for _, f := range files {
		st, err := OpenSafetensors(f)
		if err != nil {
			return nil, err
		}
		sts = append(sts, st)
	}
	if check != nil {
		if err := check(sts); err != nil {
			return nil, err
		}
	}

	m := &Model{Config: cfg, Source: src}
	m.Weights.Layers = make([]Layer, cfg.NLayer)
	slots := m.slots()
	refs, err := indexTensors(sts, slots, cfg.NLayer)
	if err != nil {
		return nil, err
	}
	// Check presence, shape and dtype of everything before reading anything.
	var lm []float32
	if _, ok := refs[lmHead]; ok {
		slots = append(slots, tensorSlot{lmHead, []int{cfg.VocabSize, cfg.NEmbd}, &lm})
	}
	var total int64
	for _, s := range slots {
		r, ok := refs[s.name]
		if !ok {
			return nil, fmt.Errorf("%s: missing tensor %q (with or without the \"transformer.\" prefix)", where, s.name)
		}
		if err := r.check(s.shape, cfg); err != nil {
			return nil, err
		}
		total += r.info.End - r.info.Begin
	}

	var done int64
	for _, s := range slots {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := refs[s.name]
		x, err := r.st.ReadFloat32(r.info.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.st.Path, err)
		}
		if err := checkFinite(x); err != nil {
			return nil, fmt.Errorf("%v: %w", r, err)
		}
		*s.dst = x
		done += r.info.End - r.info.Begin
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	m.Weights.LMHead = m.Weights.WTE
	if lm != nil && !slices.Equal(lm, m.Weights.WTE) {
		m.Weights.LMHead = lm
	}
	return m, nil
}

// indexTensors maps the parameter names of slots and lm_head to the files'
// tensors, whose names may have the "transformer." prefix. Attention buffers
// are skipped; any other tensor, or two for one parameter, is an error.
func indexTensors(sts []*Safetensors, slots []tensorSlot, nLayer int) (map[string]tensorRef, error) {
	want := make(map[string]bool, len(slots)+1)
	for _, s := range slots {
		want[s.name] = true
	}
	want[lmHead] = true
	refs := make(map[string]tensorRef, len(want))
	for _, st := range sts {
		for _, t := range st.Tensors {
			name := strings.TrimPrefix(t.Name, "transformer.")
			r := tensorRef{st, t}
			if isBuffer(name, nLayer) {
				continue
			}
			if !want[name] {
				return nil, fmt.Errorf("%v: unexpected tensor for GPT-2 with %d layers", r, nLayer)
			}
			if old, dup := refs[name]; dup {
				return nil, fmt.Errorf("%v: the same parameter as %v", r, old)
			}
			refs[name] = r
		}
	}
	return refs, nil
}

// isBuffer reports whether name (without prefix) is one of the attention
// buffers older transformers versions saved: h.N.attn.bias (the causal mask)
// or h.N.attn.masked_bias, for a layer N of the model.
func isBuffer(name string, nLayer int) bool {
	p := strings.Split(name, ".")
	if len(p) != 4 || p[0] != "h" || p[2] != "attn" || (p[3] != "bias" && p[3] != "masked_bias") {
		return false
	}
	n, err := strconv.Atoi(p[1])
	return err == nil && n >= 0 && n < nLayer && strconv.Itoa(n) == p[1]
}

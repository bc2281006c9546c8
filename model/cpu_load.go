package model

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// LoadCPU reads the checkpoint ck straight into a CPU for threads goroutines
// (threads <= 0: GOMAXPROCS), without a float32 Model in between: every
// matrix (the blocks', wte and an untied lm_head) stays in its stored dtype,
// F16 and BF16 as 16 bits that the kernels widen to float32 as they load
// them, and the block matrices are transposed to the kernels' (out, in)
// layout tensor by tensor through one reused scratch matrix (where the
// kernels read panels, ops_panel.go, every matrix's values are written
// straight to their places among the panels as they are read). The vectors and
// wpe are widened to float32. So an F16 checkpoint takes about half the
// memory of its float32 form, and its results are bit-identical to those of
// the same weights widened to float32 (Load, then NewCPU). ck may be closed
// once LoadCPU returns. ctx is checked between tensors and chunks.
//
// With opt.BF16 it loads for the bf16 mode instead (bf16.go): every matrix
// rounded to bf16 as it is read and held in 16 bits, whatever the
// checkpoint's dtype.
func LoadCPU(ctx context.Context, ck *Checkpoint, threads int, opt LoadOptions) (*CPU, error) {
	if ck == nil {
		return nil, errors.New("load for the cpu: nil checkpoint")
	}
	c, err := loadCPU(ctx, ck, threads, opt)
	if err != nil {
		return nil, fmt.Errorf("load %s for the cpu: %w", ck.src, err)
	}
	return c, nil
}

func loadCPU(ctx context.Context, ck *Checkpoint, threads int, opt LoadOptions) (*CPU, error) {
	threads = cpuThreads(threads)
	cfg := ck.cfg
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	params, width := 0, 4
	if opt.BF16 {
		width = 2
	}
	for _, spec := range cfg.Tensors() {
		params += spec.NumElements()
	}
	if err := sysmem.Check(fmt.Sprintf("the weights (%d parameters of %d bytes)", params, width), uint64(params)*uint64(width)); err != nil {
		return nil, err
	}
	c := &CPU{cfg: cfg, threads: threads, maxRows: max(2048, cfg.NPositions)}
	if opt.BF16 {
		set, err := pickBF16(opt.PortableBF16)
		if err != nil {
			return nil, err
		}
		c.bf16 = set
	}
	l := &cpuLoader{ck: ck, c: c, opt: opt}
	for _, s := range ck.srcs {
		l.total += s.bytes()
	}
	if opt.Progress != nil {
		opt.Progress(0, l.total) // the start, so that a display's rate counts from here
	}
	c.layers = make([]cpuLayer, cfg.NLayer)
	for _, spec := range cfg.Tensors() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := l.read(ctx, spec); err != nil {
			return nil, err
		}
	}
	if cfg.Arch == ArchLlama {
		c.rope = newRope(cfg)
	}
	c.lmHead = c.wte
	if _, ok := ck.srcs[lmHead]; ok {
		tied, err := ck.lmHeadTied(ctx)
		if err != nil {
			return nil, err
		}
		if !tied {
			spec := cfg.LMHeadSpec()
			if c.lmHead, err = l.matrix(ctx, spec, false, true); err != nil {
				return nil, err
			}
		}
		l.report(ck.srcs[lmHead])
	}
	c.packPanels()
	return c, nil
}

// cpuLoader reads a checkpoint's tensors into a CPU, reusing one scratch
// matrix of each element type for the transposes.
type cpuLoader struct {
	ck          *Checkpoint
	c           *CPU
	opt         LoadOptions
	done, total int64
	f32         []float32
	u16         []uint16
	qkv         []matrix    // a Llama-family block's q and k, until v is read
	qkvB        [][]float32 // their biases
}

func (l *cpuLoader) report(s *source) {
	l.done += s.bytes()
	if l.opt.Progress != nil {
		l.opt.Progress(l.done, l.total)
	}
}

// read puts the tensor of spec where the CPU keeps it.
func (l *cpuLoader) read(ctx context.Context, spec TensorSpec) error {
	c := l.c
	vec := func(dst *[]float32) (err error) {
		*dst, err = l.ck.readFloat32(ctx, spec)
		return err
	}
	mat := func(dst *matrix) (err error) {
		*dst, err = l.matrix(ctx, spec, true, true)
		return err
	}
	var err error
	switch spec.Role {
	case RoleWTE:
		c.wte, err = l.matrix(ctx, spec, false, true)
	case RoleWPE:
		err = vec(&c.wpe)
	case RoleLNFW, RoleNorm:
		err = vec(&c.lnfw)
	case RoleLNFB:
		err = vec(&c.lnfb)
	default:
		if spec.Layer < 0 || spec.Layer >= len(c.layers) {
			return fmt.Errorf("tensor %s: no layer %d", spec.Name, spec.Layer) // the table's bug
		}
		w := &c.layers[spec.Layer]
		switch spec.Role {
		case RoleLN1W:
			err = vec(&w.ln1w)
		case RoleLN1B:
			err = vec(&w.ln1b)
		case RoleQKVW:
			err = mat(&w.qkvW)
		case RoleQKVB:
			err = vec(&w.qkvB)
		case RoleProjW:
			err = mat(&w.projW)
		case RoleProjB:
			err = vec(&w.projB)
		case RoleLN2W:
			err = vec(&w.ln2w)
		case RoleLN2B:
			err = vec(&w.ln2b)
		case RoleFCW:
			err = mat(&w.fcW)
		case RoleFCB:
			err = vec(&w.fcB)
		case RoleFCProjW:
			err = mat(&w.fcProjW)
		case RoleFCProjB:
			err = vec(&w.fcProjB)
		default:
			err = l.readLlama(ctx, spec, w)
		}
	}
	if err != nil {
		return err
	}
	l.report(l.ck.srcs[spec.Name])
	return nil
}

// readLlama puts a Llama-family block tensor where cpuLayer keeps it: the
// nn.Linear matrices as stored (already (out, in)), q, k and v (and their
// biases) stacked once the last of them is read (llamaTable lists q, k, v
// in that order).
func (l *cpuLoader) readLlama(ctx context.Context, spec TensorSpec, w *cpuLayer) (err error) {
	vec := func(dst *[]float32) error {
		*dst, err = l.ck.readFloat32(ctx, spec)
		return err
	}
	mat := func(dst *matrix) error {
		*dst, err = l.matrix(ctx, spec, false, true)
		return err
	}
	switch spec.Role {
	case RoleInputNorm:
		return vec(&w.ln1w)
	case RolePostNorm:
		return vec(&w.ln2w)
	case RoleQW, RoleKW, RoleVW:
		m, err := l.matrix(ctx, spec, false, false) // stacked, then packed
		if err != nil {
			return err
		}
		l.qkv = append(l.qkv, m)
		if spec.Role == RoleVW {
			if len(l.qkv) != 3 {
				return fmt.Errorf("tensor %s: q, k and v weights out of order", spec.Name) // the table's bug
			}
			w.qkvW, l.qkv = l.pack(concatRows(l.qkv...), spec, false), nil
		}
	case RoleQB, RoleKB, RoleVB:
		b, err := l.ck.readFloat32(ctx, spec)
		if err != nil {
			return err
		}
		l.qkvB = append(l.qkvB, b)
		if spec.Role == RoleVB {
			w.qkvB, l.qkvB = concatVecs(l.qkvB...), nil
		}
	case RoleQNorm:
		return vec(&w.qNorm)
	case RoleKNorm:
		return vec(&w.kNorm)
	case RoleOW:
		return mat(&w.projW)
	case RoleOB:
		return vec(&w.projB)
	case RoleGateW:
		return mat(&w.fcW)
	case RoleGateB:
		return vec(&w.fcB)
	case RoleUpW:
		return mat(&w.upW)
	case RoleUpB:
		return vec(&w.upB)
	case RoleDownW:
		return mat(&w.fcProjW)
	case RoleDownB:
		return vec(&w.fcProjB)
	default:
		return fmt.Errorf("tensor %s: role %v is not a block's", spec.Name, spec.Role)
	}
	return nil
}

// pack puts m, read for spec (a Llama-family block's q, k and v stacked),
// in the panel layout where the CPU keeps its matrices so (packPanels).
func (l *cpuLoader) pack(m matrix, spec TensorSpec, transpose bool) matrix {
	if !l.panels() || len(spec.Shape) != 2 {
		return m
	}
	K := spec.Shape[1] // the row length in (out, in)
	if transpose {
		K = spec.Shape[0]
	}
	return packPanels(m, K)
}

// panels reports whether the CPU keeps its matrices in the panel layout:
// the f32 mode where the kernel set has panel kernels.
func (l *cpuLoader) panels() bool { return l.c.bf16 == bf16Off && kern.panelF32 != nil }

// matrix reads the 2-D tensor of spec in its stored dtype (F16 and BF16 as
// 16 bits, anything else as float32), transposed from Hugging Face's (in,
// out) to (out, in) when transpose is set. In the bf16 mode it is rounded
// to bf16 (toBF16): a float32 tensor as it is read (so no float32 copy of
// it is ever made), an F16 one in place. With pack, where the CPU keeps its
// matrices in panels (l.panels), the values go straight to their places
// in the panel layout as they are read: no other copy is made.
func (l *cpuLoader) matrix(ctx context.Context, spec TensorSpec, transpose, pack bool) (matrix, error) {
	if pack && l.panels() {
		return l.storedPanels(ctx, spec, transpose)
	}
	m, err := l.stored(ctx, spec, transpose)
	if err != nil || l.c.bf16 == bf16Off {
		return m, err
	}
	return l.c.toBF16(m, l.c.bf16), nil
}

// stored is matrix before any rounding to bf16, but for a float32 tensor in
// the bf16 mode, which it rounds to bf16 as it reads it.
func (l *cpuLoader) stored(ctx context.Context, spec TensorSpec, transpose bool) (matrix, error) {
	s, err := l.ck.sourceOf(spec)
	if err != nil {
		return matrix{}, err
	}
	if len(spec.Shape) != 2 || spec.Shape[0]*spec.Shape[1] != s.n {
		return matrix{}, fmt.Errorf("tensor %s: shape %v for %d values", spec.Name, spec.Shape, s.n) // checked at open
	}
	rows, cols := spec.Shape[0], spec.Shape[1]
	// 16 bits are kept as stored; in the bf16 mode wider values are rounded
	// to bf16 as they are read (toBF16 then keeps them).
	dtype, fill := s.dtype, func(dst []uint16, vals []float32, raw []byte) { put16(dst, vals, raw, s.dtype) }
	if dtype != F16 && dtype != BF16 && l.c.bf16 != bf16Off {
		dtype, fill = BF16, func(dst []uint16, vals []float32, _ []byte) { bf16RoundRows(l.c.bf16, dst, vals) }
	}
	if dtype == F16 || dtype == BF16 {
		dst := make([]uint16, s.n)
		into := dst
		if transpose {
			l.u16 = grow(l.u16, s.n)
			into = l.u16
		}
		err := l.ck.streamAll(ctx, s, func(e int, vals []float32, raw []byte) error {
			fill(into[e:][:len(vals)], vals, raw)
			return nil
		})
		if err != nil {
			return matrix{}, err
		}
		if transpose {
			transposeInto(l.c, dst, into, rows, cols)
		}
		return matrix{dtype: dtype, u16: dst}, nil
	}
	dst := make([]float32, s.n)
	into := dst
	if transpose {
		l.f32 = grow(l.f32, s.n)
		into = l.f32
	}
	err = l.ck.streamAll(ctx, s, func(e int, vals []float32, _ []byte) error {
		copy(into[e:], vals)
		return nil
	})
	if err != nil {
		return matrix{}, err
	}
	if transpose {
		transposeInto(l.c, dst, into, rows, cols)
	}
	return f32Matrix(dst), nil
}

// put16 writes values read from a dtype (F16 or BF16) tensor to dst as their
// 16 bits: the stored bytes when the run has them, else the decoded values
// narrowed back, which is exact since they were widened from dtype.
func put16(dst []uint16, vals []float32, raw []byte, dtype DType) {
	if raw != nil {
		for i := range dst {
			dst[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
		return
	}
	for i, v := range vals {
		if dtype == F16 {
			dst[i] = f16Bits(v)
		} else {
			dst[i] = uint16(math.Float32bits(v) >> 16)
		}
	}
}

// storedPanels is stored in the panel layout (f32 mode): every value read
// is written to its place among the panels, (out, in) element (j, k) of the
// matrix transposed when transpose is set.
func (l *cpuLoader) storedPanels(ctx context.Context, spec TensorSpec, transpose bool) (matrix, error) {
	s, err := l.ck.sourceOf(spec)
	if err != nil {
		return matrix{}, err
	}
	if len(spec.Shape) != 2 || spec.Shape[0]*spec.Shape[1] != s.n {
		return matrix{}, fmt.Errorf("tensor %s: shape %v for %d values", spec.Name, spec.Shape, s.n) // checked at open
	}
	cols := spec.Shape[1]
	N, K := spec.Shape[0], cols
	if transpose {
		N, K = K, N
	}
	n := (N + panelNR - 1) / panelNR * panelNR * K
	if s.dtype == F16 || s.dtype == BF16 {
		m := matrix{dtype: s.dtype, u16: make([]uint16, n), pk: K, n: N}
		err := l.ck.streamAll(ctx, s, func(e int, vals []float32, raw []byte) error { // disjoint places: on every core
			scatterPanels16(m.u16, vals, raw, s.dtype, e, cols, K, transpose)
			return nil
		})
		if err != nil {
			return matrix{}, err
		}
		return m, nil
	}
	m := matrix{dtype: F32, f32: make([]float32, n), pk: K, n: N}
	err = l.ck.streamAll(ctx, s, func(e int, vals []float32, _ []byte) error { // disjoint places: on every core
		scatterPanels(m.f32, vals, e, cols, K, transpose)
		return nil
	})
	if err != nil {
		return matrix{}, err
	}
	return m, nil
}

// scatterPanels16 is scatterPanels of the 16 bits of values read from an
// F16 or BF16 tensor (put16's: from raw where the run has its bytes),
// through a buffer of the chunk's size from a pool, so that the runs of
// several goroutines go on at once and scatterPanels sees whole rows.
func scatterPanels16(dst []uint16, vals []float32, raw []byte, dtype DType, e, cols, K int, transpose bool) {
	bp := bits16Pool.Get().(*[]uint16)
	buf := grow(*bp, len(vals))
	put16(buf, vals, raw, dtype)
	scatterPanels(dst, buf, e, cols, K, transpose)
	*bp = buf
	bits16Pool.Put(bp)
}

// bits16Pool holds scatterPanels16's buffers.
var bits16Pool = sync.Pool{New: func() any { return new([]uint16) }}

// scatterPanels writes the values src, elements e on of a stored (rows,
// cols) tensor, to their places in the panels dst of (out, in) rows K long:
// stored element (r, c) is (out, in) element (r, c), or (c, r) when
// transpose is set. (Out, in) element (j, k) is at panel j/panelNR, offset
// k*panelNR + j%panelNR.
func scatterPanels[E float32 | uint16](dst, src []E, e, cols, K int, transpose bool) {
	r, c := e/cols, e%cols
	if transpose { // along a stored row, j runs: panelNR consecutive places at a time
		for _, v := range src {
			dst[c/panelNR*K*panelNR+r*panelNR+c%panelNR] = v
			if c++; c == cols {
				r, c = r+1, 0
			}
		}
		return
	}
	// Along a stored row k runs, each value panelNR places after the last:
	// one cache line per value. So the whole rows given that share a panel
	// are written k by k instead, up to panelNR consecutive places at a
	// time (what a blocked transpose does); a row given in part (at either
	// end of src) value by value.
	at := func(r, c int) int { return r/panelNR*K*panelNR + c*panelNR + r%panelNR }
	if c != 0 {
		n := min(len(src), cols-c)
		for i, v := range src[:n] {
			dst[at(r, c+i)] = v
		}
		src, r = src[n:], r+1
	}
	for len(src) >= cols {
		m := min(len(src)/cols, panelNR-r%panelNR) // whole rows r .. r+m-1, in one panel
		for k := range cols {
			d := dst[at(r, k):][:m]
			for i := range d {
				d[i] = src[i*cols+k]
			}
		}
		src, r = src[m*cols:], r+m
	}
	for i, v := range src {
		dst[at(r, i)] = v
	}
}

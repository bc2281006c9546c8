package shaders

import (
	"fmt"
	"os"
	"regexp"
	"strconv"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// MatrixUnits says whether a GPT2 runs its weight matmuls and its LM head on
// the device's matrix units (tensor cores: subgroup matrices, Vulkan's
// VK_KHR_cooperative_matrix) with matmul_coop.wgsl and
// lmhead_loss_coop.wgsl, or with the SIMT kernels of its kernel set.
type MatrixUnits string

const (
	// MatrixUnitsAuto uses the matrix units where the device offers a
	// configuration the kernels take (f16 x f16 -> f32), the weights are f16
	// and the kernel set is the hardware one, once the self-check has passed
	// on the device (see "Matrix units" in the package doc); else SIMT.
	MatrixUnitsAuto MatrixUnits = "auto"
	// MatrixUnitsOff keeps the SIMT kernels.
	MatrixUnitsOff MatrixUnits = "off"
	// MatrixUnitsOn requires the matrix units: a batch fails, with the
	// reason, where the device has none the kernels can use or where they
	// fail the self-check.
	MatrixUnitsOn MatrixUnits = "on"
)

// MatrixUnitsEnv is the environment variable that gives NewGPT2's initial
// MatrixUnits: auto (the default), off or on.
const MatrixUnitsEnv = "WGPU_EVAL_MATRIX_UNITS"

// ParseMatrixUnits parses "auto" (or ""), "off" or "on".
func ParseMatrixUnits(s string) (MatrixUnits, error) {
	switch MatrixUnits(s) {
	case "", MatrixUnitsAuto:
		return MatrixUnitsAuto, nil
	case MatrixUnitsOff, MatrixUnitsOn:
		return MatrixUnits(s), nil
	}
	return "", fmt.Errorf("matrix units %q: want auto, off or on", s)
}

// MatrixUnitsFromEnv is the choice $WGPU_EVAL_MATRIX_UNITS asks for
// (MatrixUnitsAuto when unset); any other value is an error, never ignored.
func MatrixUnitsFromEnv() (MatrixUnits, error) {
	m, err := ParseMatrixUnits(os.Getenv(MatrixUnitsEnv))
	if err != nil {
		return "", fmt.Errorf("$%s: %w", MatrixUnitsEnv, err)
	}
	return m, nil
}

// MatrixConfig is a shape of subgroup matrices a device multiplies: an
// M x K matrix of f16 times a K x N one, accumulated into M x N of f32, by
// the invocations of one subgroup of SubgroupSize (0: the device's default
// size).
type MatrixConfig struct {
	M, N, K      int
	SubgroupSize int
}

// String spells the configuration M x N x K, as "16x16x16".
func (c MatrixConfig) String() string { return fmt.Sprintf("%dx%dx%d", c.M, c.N, c.K) }

// deviceMatrixConfigs is the one place that asks a device which subgroup-
// matrix configurations its matrix units multiply with f16 operands into f32
// (wgpu's CooperativeMatrixConfigs that WGSL can use: subgroup scope), which
// a device has only with wgpu.FeatureCooperativeMatrix enabled, so that the
// compiler emits SPV_KHR_cooperative_matrix for it. Where the subgroup size
// varies (AMD's wave32/64, Intel's 8 to 32), the kernels are written for
// subgroups of coopSubgroup invocations, which the pipelines then require
// (wgpu.FeatureSubgroupSizeControl); without that feature, or where that
// size is out of the device's range, none is usable.
func deviceMatrixConfigs(dev *wgpu.Device) []MatrixConfig {
	l := dev.Limits()
	sgs := 0
	if l.MinSubgroupSize < l.MaxSubgroupSize {
		if !dev.HasFeature(wgpu.FeatureSubgroupSizeControl) || coopSubgroup < l.MinSubgroupSize || coopSubgroup > l.MaxSubgroupSize {
			return nil
		}
		sgs = coopSubgroup
	}
	var out []MatrixConfig
	for _, c := range dev.CooperativeMatrixConfigs() {
		if c.SubgroupMatrix && c.AType == wgpu.ComponentF16 && c.ResultType == wgpu.ComponentF32 {
			out = append(out, MatrixConfig{M: int(c.M), N: int(c.N), K: int(c.K), SubgroupSize: sgs})
		}
	}
	return out
}

// coopSubgroup is the subgroup size the coop kernels require where a device's
// varies: 32, as llama.cpp's Vulkan backend fixes for its cooperative-matrix
// kernels (AMD's wave32).
const coopSubgroup = 32

// pickMatrixConfig is the configuration the kernels use among a device's:
// of those whose M, N and K are 8 or 16 (the tilings are built for those),
// the largest (16 x 16 x 16 where offered), the first of equals; ok false
// when none fits.
func pickMatrixConfig(cs []MatrixConfig) (MatrixConfig, bool) {
	var best MatrixConfig
	found := false
	for _, c := range cs {
		if !smallPow(c.M) || !smallPow(c.N) || !smallPow(c.K) {
			continue
		}
		if !found || c.M*c.N*c.K > best.M*best.N*best.K {
			best, found = c, true
		}
	}
	return best, found
}

func smallPow(n int) bool { return n == 8 || n == 16 }

// coopTiles is a tiling of matmul_coop.wgsl or lmhead_loss_coop.wgsl for a
// configuration: FM x FN result matrices per subgroup (constants, written
// into the text), SGM x SGN subgroups of SGS invocations per workgroup, steps
// of BK along K, EC result matrices per epilogue (the LM head: fold) chunk,
// ST stages and, for the matmul, WT w's tile layout (overrides).
type coopTiles struct {
	cfg            MatrixConfig
	FM, FN         int
	SGM, SGN, SGS  int
	BK             int
	EC             int  // result matrices along N per epilogue (the LM head: fold) chunk; divides FN
	ST             int  // stages: 2, the next step's global loads in flight during the multiplies; 1, at the step's start; 3, as 2 with two tile buffers
	WT             int  // the matmul: w's tile in workgroup memory, 0 row-major, 1 n-major (k contiguous; right matrices loaded column-major)
	vt             int  // the LM head: ids per tile (BN), for the record
	head           bool // lmhead_loss_coop.wgsl's (else matmul_coop.wgsl's)
	nt             int  // the LM head: tiles per slice (NT)
	gx             int  // the LM head: blocks of positions per group of workgroups (GX, include/headblock.wgsl); 0: the kernel's default
	maxL, maxFoldR int  // the kernel's MAXL and, for the LM head, MAXR
}

// BM and BN are the rows and columns of out (positions and ids of the LM
// head's tile) per workgroup.
func (t coopTiles) BM() int { return t.SGM * t.FM * t.cfg.M }
func (t coopTiles) BN() int { return t.SGN * t.FN * t.cfg.N }

// WG is the invocations per workgroup.
func (t coopTiles) WG() int { return t.SGM * t.SGN * t.SGS }

// String names the tiling, as profiles and errors print it.
func (t coopTiles) String() string {
	s := fmt.Sprintf("%s %dx%d/%dx%d frags, %d subgroups of %d, BK %d, EC %d, ST %d", t.cfg, t.BM(), t.BN(), t.FM, t.FN, t.SGM*t.SGN, t.SGS, t.BK, t.EC, t.ST)
	if t.gx != 0 {
		s += fmt.Sprintf(", GX %d", t.gx)
	}
	if t.WT != 0 {
		s += fmt.Sprintf(", WT %d", t.WT)
	}
	return s
}

// coopMatmulTiles is matmul_coop.wgsl's default tiling for cfg on a device
// whose subgroups have sgs invocations (the one TuneOff and software
// adapters keep; the autotuner may choose another, coopCandidates): 2 x 2
// subgroups, each a 32 x 32 block of out (2 x 2 matrices of 16 x 16, 4 x 2
// of 8 x 16, ...), so a 64 x 64 tile per workgroup, 2 stages, a whole row
// of result matrices per epilogue chunk, and BK 32 (18.5 KiB of workgroup memory at
// 16x16x16, within the 32 KiB every device this runs on has), 16 where
// subgroups are smaller than 16 invocations (lavapipe's 8), so that an
// invocation loads at most coopMaxLoads vec4s of each tile per step.
func coopMatmulTiles(cfg MatrixConfig, sgs int) coopTiles {
	fn := 32 / cfg.N
	return coopTiles{cfg: cfg, FM: 32 / cfg.M, FN: fn, SGM: 2, SGN: 2, SGS: sgs, BK: coopStep(sgs), EC: fn, ST: 2, maxL: coopMaxLoads}
}

// coopHeadTiles is lmhead_loss_coop.wgsl's tiling for cfg, with vt ids per
// tile and nt tiles per slice (the SIMT LM head's, so that the partials
// are as many and in the same places): 2 x 2 subgroups, 32 positions per
// workgroup, each subgroup 16 positions x vt/2 ids, the whole tile's logits
// folded at once (EC = FN); BK as for the matmul.
func coopHeadTiles(cfg MatrixConfig, sgs, vt, nt int) coopTiles {
	fn := vt / (2 * cfg.N)
	return coopTiles{cfg: cfg, FM: max(16/cfg.M, 1), FN: fn, SGM: 2, SGN: 2, SGS: sgs, BK: coopStep(sgs), EC: fn, ST: 2,
		vt: vt, head: true, nt: nt, maxL: coopMaxLoads, maxFoldR: 8}
}

// coopMaxLoads is the coop kernels' MAXL: the most vec4 loads of a tile per
// invocation and step.
const coopMaxLoads = 16

// coopStep is the coop kernels' BK for subgroups of sgs invocations.
func coopStep(sgs int) int {
	if sgs < 16 {
		return 16
	}
	return 32
}

// sharedBytes is the kernel's workgroup memory.
func (t coopTiles) sharedBytes() int {
	bm, bn := t.BM(), t.BN()
	nb := 1 // tile buffers
	if t.ST == 3 {
		nb = 2
	}
	if t.head {
		nq := max(t.WG()/bm, 1)
		return nb*(2*bm*(t.BK+8)+2*bn*(t.BK+8)) + 4*bm*(t.SGN*t.EC*t.cfg.N+4) + 4*bm*nq
	}
	wsBytes := 2 * t.BK * (bn + 8) // w's tile, rows padded
	if t.WT == 1 {
		wsBytes = 2 * bn * (t.BK + 8) // n-major, columns padded
	}
	return nb*(2*bm*(t.BK+8)+wsBytes) + 4*t.SGM*t.SGN*t.cfg.M*(t.EC*t.cfg.N+4)
}

// valid checks the kernel's constraints (its header comment).
func (t coopTiles) valid() error {
	bm, bn, wg := t.BM(), t.BN(), t.WG()
	switch {
	case t.FM < 1 || t.FN < 1 || t.SGM < 1 || t.SGN < 1 || t.SGS < 1:
		return fmt.Errorf("coop tiles %v: no fragments or subgroups", t)
	case t.head && bn != t.vt:
		return fmt.Errorf("coop tiles %v: %d ids per tile, want %d", t, bn, t.vt)
	case t.BK%t.cfg.K != 0 || t.BK%8 != 0:
		return fmt.Errorf("coop tiles %v: BK must be a multiple of %d and of 8", t, t.cfg.K)
	case t.EC < 1 || t.FN%t.EC != 0:
		return fmt.Errorf("coop tiles %v: EC must divide FN", t)
	case t.ST < 1 || t.ST > 3:
		return fmt.Errorf("coop tiles %v: ST must be 1, 2 or 3", t)
	case t.gx < 0 || t.gx > 0 && !t.head:
		return fmt.Errorf("coop tiles %v: GX is the LM head's, and positive", t)
	case t.WT < 0 || t.WT > 1 || t.WT != 0 && t.head:
		return fmt.Errorf("coop tiles %v: WT is the matmul's, 0 or 1", t)
	}
	xl, wl := ceilDiv(bm*t.BK/4, wg), ceilDiv(t.BK*bn/4, wg)
	if xl > t.maxL || wl > t.maxL {
		return fmt.Errorf("coop tiles %v: %d and %d vec4 loads of the tiles per invocation, at most %d each", t, xl, wl, t.maxL)
	}
	if t.head {
		pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
		nq := max(wg/bm, 1)
		if !pow2(bm) || !pow2(wg) || t.vt%nq != 0 || bm*nq/wg > t.maxFoldR {
			return fmt.Errorf("coop tiles %v: the fold wants BM and WG powers of two, VT a multiple of %d, at most %d rows per invocation", t, nq, t.maxFoldR)
		}
	}
	return nil
}

// fits checks the tiling against the kernel and the device's limits.
func (t coopTiles) fits(dev *wgpu.Device) error { return t.fitsLimits(dev.Limits()) }

// fitsLimits checks the tiling against the kernel and a device's limits l.
func (t coopTiles) fitsLimits(l wgpu.Limits) error {
	if err := t.valid(); err != nil {
		return err
	}
	if n := t.WG(); n > int(l.MaxComputeInvocationsPerWorkgroup) {
		return fmt.Errorf("coop tiles %v: %d invocations, the device allows %d", t, n, l.MaxComputeInvocationsPerWorkgroup)
	}
	if b := t.sharedBytes(); b > int(l.MaxComputeWorkgroupStorageSize) {
		return fmt.Errorf("coop tiles %v: %d bytes of workgroup memory, the device allows %d", t, b, l.MaxComputeWorkgroupStorageSize)
	}
	return nil
}

// loweredLoops estimates the loop iterations an invocation of the kernel
// runs where the compiler lowers the subgroup matrices (whole matrices per
// invocation, wgsl's lower_matrix.go) over a product along k of length K
// (for the LM head, over tiles of its slice):
// per step of BK and matrix K, a loop over the elements of each left and
// right matrix loaded and over the results of each multiply (its loop over
// K is short enough for drivers to unroll: lavapipe does), for each of the
// LM head's nt tiles, and the stores and the epilogue or fold. Measured on
// lavapipe, whose limit it serves (fitLoopLimit): the LM head at 8x8x8, C 72
// and 8 tiles of 64 ids (some 72000 by this count) computed wrong logits,
// 3 tiles (27000) right ones.
func (t coopTiles) loweredLoops(K, tiles int) int {
	c := t.cfg
	perK := t.FM*c.M*c.K + t.FN*c.K*c.N + t.FM*t.FN*c.M*c.N
	perTile := ceilDiv(K, t.BK)*(t.BK/c.K*perK+2*t.maxL) + t.FM*t.FN*c.M*c.N
	if !t.head {
		return perTile + t.FM*(t.FN/max(t.EC, 1))*ceilDiv(c.M*t.EC*c.N/4, t.SGS)
	}
	return min(tiles, t.nt) * (perTile + 2*t.vt)
}

// coopLoopBudget is the most loweredLoops may estimate for a kernel on an
// adapter with a loop limit: below loopBudget, since the estimate
// undercounts. On lavapipe, GPT-2 models whose matmuls over K = 4C it
// estimates at some 51000 iterations (16x16x16, C 96) scored as the SIMT
// kernels do, at 59000 (C 112) 0.015 nats off.
const coopLoopBudget = 54000

// constSet is the tiling's override constants (NT for the LM head; WT
// where it is not the kernel's default 0, so that the default's pipelines
// keep their constants).
func (t coopTiles) constSet() constSet {
	c := consts("SGM", float64(t.SGM)).with("SGN", float64(t.SGN)).with("SGS", float64(t.SGS)).with("BK", float64(t.BK))
	if t.head {
		c = c.with("NT", float64(t.nt))
		if t.gx != 0 {
			c = c.with("GX", float64(t.gx))
		}
	}
	c = c.with("EC", float64(t.EC)).with("ST", float64(t.ST))
	if t.WT != 0 {
		c = c.with("WT", float64(t.WT))
	}
	return c
}

// coopConstLine matches a line of the coop kernels that the host rewrites.
var coopConstLine = regexp.MustCompile(`(?m)^const (SM|SN|SK|FM|FN): u32 = [0-9]+u;`)

// coopSource is the text of the coop kernel name for the tiling: the lines
// const SM, SN, SK, FM and FN rewritten to its values, every line where it
// was (diagnostics keep their file and line).
func coopSource(name string, t coopTiles) (wgsl.Expanded, error) {
	return coopSourceReplacing(name, t, nil)
}

// coopSourceReplacing is coopSource with the includes replace maps
// replaced (wgsl.ExpandReplacing).
func coopSourceReplacing(name string, t coopTiles, replace map[string]string) (wgsl.Expanded, error) {
	x, err := wgsl.ExpandReplacing(sources, name, replace)
	if err != nil {
		return wgsl.Expanded{}, fmt.Errorf("kernel %w", err)
	}
	return rewriteConstLines(name, x, coopConstLine, map[string]int{"SM": t.cfg.M, "SN": t.cfg.N, "SK": t.cfg.K, "FM": t.FM, "FN": t.FN})
}

// rewriteConsts is the text of kernel name with each line that re (whose
// first group is the name) matches rewritten to "const NAME: u32 = Vu;" with
// V from vals, every line where it was (diagnostics keep their file and
// line); each of vals must be found.
func rewriteConsts(name string, re *regexp.Regexp, vals map[string]int) (wgsl.Expanded, error) {
	x, err := wgsl.Expand(sources, name)
	if err != nil {
		return wgsl.Expanded{}, fmt.Errorf("kernel %w", err)
	}
	return rewriteConstLines(name, x, re, vals)
}

// rewriteConstLines is rewriteConsts on x, the expanded text of kernel name.
func rewriteConstLines(name string, x wgsl.Expanded, re *regexp.Regexp, vals map[string]int) (wgsl.Expanded, error) {
	seen := map[string]bool{}
	x.Text = re.ReplaceAllStringFunc(x.Text, func(line string) string {
		n := re.FindStringSubmatch(line)[1]
		seen[n] = true
		return "const " + n + ": u32 = " + strconv.Itoa(vals[n]) + "u;"
	})
	if len(seen) != len(vals) {
		return wgsl.Expanded{}, fmt.Errorf("kernel %s: %d of the %d constants to rewrite found", name, len(seen), len(vals))
	}
	return x, nil
}

// newCoopKernel compiles the coop kernel name for the tiling; its pipelines
// require the configuration's subgroup size where it names one.
// matmul_coop.wgsl binds the KV cache where the device has the storage
// buffers for it, as NewKernel's matmul_shared.wgsl.
func newCoopKernel(dev *wgpu.Device, name string, t coopTiles) (*Kernel, error) {
	if err := t.fits(dev); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	src, err := coopSourceReplacing(name, t, deviceIncludes(dev))
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%s[%s %dx%d]%s", name[:len(name)-len(".wgsl")], t.cfg, t.FM, t.FN, kvFreeLabel(src))
	return compileKernel(dev, label+".wgsl", src, uint32(t.cfg.SubgroupSize))
}

// coopKernels are the matrix-unit kernels of a GPT2 in use.
type coopKernels struct {
	cfg          MatrixConfig
	mm, head     coopTiles
	matmul, lmHd *Kernel
	toF16        *Kernel              // to_f16.wgsl: h rounded once for lmhead_loss_coop.wgsl
	picks        map[string]coopTiles // the autotuner's tilings (ensureCoopTuned), by coopTuneKey and coopHeadKey
	rows         int                  // the rows of the batch being recorded, for the LM head's key
	attn         *attnCoop            // attention_coop.wgsl; nil where it does not fit (newAttnCoop)
	attnWhy      string               // why attn is nil
}

// newCoopKernels compiles the matrix-unit kernels for cfg on g's device
// with g's LM-head tiles (vt ids, lmSlice tiles per slice), once per tiling
// (a later decision reuses them). g.mu is held.
func (g *GPT2) newCoopKernels(cfg MatrixConfig) (*coopKernels, error) {
	sgs := cfg.SubgroupSize
	if sgs == 0 {
		sgs = int(g.dev.Limits().SubgroupSize)
	}
	ck := &coopKernels{cfg: cfg, mm: coopMatmulTiles(cfg, sgs), head: coopHeadTiles(cfg, sgs, g.vt, g.lmSlice())}
	key := [2]coopTiles{ck.mm, ck.head}
	if old, ok := g.coopKernelCache[key]; ok {
		return old, nil
	}
	var err error
	if ck.matmul, err = newCoopKernel(g.dev, "matmul_coop.wgsl", ck.mm); err != nil {
		return nil, err
	}
	if ck.lmHd, err = newCoopKernel(g.dev, "lmhead_loss_coop.wgsl", ck.head); err != nil {
		return nil, err
	}
	if ck.toF16, err = NewKernel(g.dev, "to_f16.wgsl", false); err != nil {
		return nil, err
	}
	ck.attn, ck.attnWhy = g.newAttnCoop(cfg, sgs)
	if g.coopKernelCache == nil {
		g.coopKernelCache = map[[2]coopTiles]*coopKernels{}
	}
	g.coopKernelCache[key] = ck
	return ck, nil
}

// matmulVariant is matmul_coop.wgsl with the default tiling, VEC where K
// and N are multiples of 4.
func (ck *coopKernels) matmulVariant(K, N int) matmulVariant {
	return coopVariant(ck.matmul, ck.mm, K, N)
}

// toF16WG is to_f16.wgsl's workgroup size.
const toF16WG = 256

// roundH records to_f16.wgsl: the first n values of h (n a multiple of 4)
// rounded to f16 into h16, as lmhead_loss_coop.wgsl reads them.
func (ck *coopKernels) roundH(r *recorder, h, h16 Buf, n int) {
	r.op(ck.toF16, consts("WG", float64(flatWG(ck.toF16.dev.Limits(), toF16WG))), toF16Bufs{X: h, Y: h16}, toF16Params{N: uint32(n / 4)}, perInvocation(n/4))
}

// headGroups is lmhead_loss_coop.wgsl's dispatch for P positions and V ids.
func (ck *coopKernels) headGroups(P, V int) extent { return headGroups(ck.head, P, V) }

// headGroups is lmhead_loss_coop.wgsl's dispatch with tiling t.
func headGroups(t coopTiles, P, V int) extent {
	return perWorkgroup(ceilDiv(P, t.BM())).withY(ceilDiv(V, t.vt*t.nt))
}

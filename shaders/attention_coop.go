package shaders

import (
	"fmt"
	"regexp"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// attnCoopTiles is the blocking of attention_coop.wgsl for a subgroup-matrix
// configuration and a head size: SG subgroups of SGS invocations per
// workgroup, each FM left matrices (FM*cfg.M query rows) tall, tiles of BKV
// keys, the next tile's loads in flight during this one's work where PF is
// 1. All of it is written into the kernel's text (attnCoopSource), with QW
// (qw), which follows from it.
type attnCoopTiles struct {
	cfg         MatrixConfig
	FM, HD, BKV int
	SG, SGS     int
	PF          int
}

// BQ is the query rows per workgroup.
func (t attnCoopTiles) BQ() int { return t.SG * t.FM * t.cfg.M }

// WG is the invocations per workgroup.
func (t attnCoopTiles) WG() int { return t.SG * t.SGS }

// lanes is the kernel's R: invocations per query row.
func (t attnCoopTiles) lanes() int { return max(t.SGS/(t.FM*t.cfg.M), 1) }

// hp is the kernel's HP: the head size padded with zeros to whole matrices
// and groups of 4 columns per invocation.
func (t attnCoopTiles) hp() int {
	w := max(t.cfg.K, t.cfg.N, 4*t.lanes())
	return ceilDiv(t.HD, w) * w
}

// String names the tiling, as profiles and errors print it.
func (t attnCoopTiles) String() string {
	return fmt.Sprintf("%s HD %d, %d queries x %d keys, %d subgroups of %d, prefetch %d", t.cfg, t.HD, t.BQ(), t.BKV, t.SG, t.SGS, t.PF)
}

// qwHalves is the f16 values of Q an invocation may hold in registers, as
// left matrices for the whole kernel (QW 0): past it Q stays in workgroup
// memory (QW 1) where that fits qwBytes. RDNA3's matrix units take each
// invocation's left matrix twice over, and its compiler (ACO) counts each
// 16-bit value a register while it plans (its register demand: 4 per pair
// of f16 that NVIDIA's tensor cores keep in one register): at 64 (32 rows a
// subgroup of head size 64, or 16 rows of 128, on 32 invocations) ACO
// spilled, at 32 and 40 (16 rows of head size 64 and 80) it did not, and
// Q kept in workgroup memory took occupancy there (BENCHMARKS.md).
const qwHalves = 48

// qwBytes is the workgroup memory up to which Q may stay there (QW 1):
// NVIDIA's 48 KiB, so that a tiling's kernel is the same on every GPU that
// fits it.
const qwBytes = 48 << 10

// qw is the kernel's QW: 1 where an invocation's share of Q
// (FM*M rows x HP over SGS invocations) is past qwHalves and the block's Q
// fits beside the keys and values within qwBytes.
func (t attnCoopTiles) qw() int {
	if t.FM*t.cfg.M*t.hp()/t.SGS <= qwHalves {
		return 0
	}
	if t.bytes(1) > qwBytes {
		return 0
	}
	return 1
}

// sharedBytes is the kernel's workgroup memory (its header's formula).
func (t attnCoopTiles) sharedBytes() int { return t.bytes(t.qw()) }

// bytes is the kernel's workgroup memory with QW qw.
func (t attnCoopTiles) bytes(qw int) int {
	bq := t.BQ()
	hp := t.hp()
	rows := max(bq, 2*t.BKV)
	if qw == 1 {
		rows = bq + 2*t.BKV
	}
	return 2*rows*(hp+8) + 2*bq*(t.BKV+8) + 4*bq*(max(t.BKV, hp)+4)
}

// groups is the workgroups of B sequences x H heads x T query rows.
func (t attnCoopTiles) groups(B, H, T int) int { return B * H * ceilDiv(T, t.BQ()) }

// valid checks the kernel's constraints (its header comment).
func (t attnCoopTiles) valid() error {
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	c := t.cfg
	switch {
	case t.FM < 1 || t.SG < 1 || !pow2(t.SGS) || !pow2(t.FM*c.M) || t.PF < 0 || t.PF > 2:
		return fmt.Errorf("coop attention %v: want FM and SG positive, SGS and FM*M powers of two, PF 0, 1 or 2", t)
	case t.HD < 4 || t.HD > maxHeadDim || t.HD%4 != 0:
		return fmt.Errorf("coop attention %v: head size %d must be at most %d and a multiple of 4", t, t.HD, maxHeadDim)
	case t.BKV < 1 || t.BKV%c.K != 0 || t.BKV%c.N != 0:
		return fmt.Errorf("coop attention %v: BKV must be a multiple of %d and %d", t, c.K, c.N)
	}
	return nil
}

// fits checks the tiling against the kernel and the device's limits.
func (t attnCoopTiles) fits(l wgpu.Limits) error {
	if err := t.valid(); err != nil {
		return err
	}
	if n := t.WG(); n > int(l.MaxComputeInvocationsPerWorkgroup) {
		return fmt.Errorf("coop attention %v: %d invocations, the device allows %d", t, n, l.MaxComputeInvocationsPerWorkgroup)
	}
	if b := t.sharedBytes(); b > int(l.MaxComputeWorkgroupStorageSize) {
		return fmt.Errorf("coop attention %v: %d bytes of workgroup memory, the device allows %d", t, b, l.MaxComputeWorkgroupStorageSize)
	}
	return nil
}

// attnCoopTilesFor is attention_coop.wgsl's tiling for cfg, subgroups of sgs
// invocations and head size hd: 16 query rows per subgroup (FM = 16/M: a
// 16-row left matrix, or two of 8), 4 subgroups (64 queries per workgroup,
// attention_shared.wgsl's block) and tiles of 64 keys (44 KiB of workgroup
// memory at head size 64: an NVIDIA GPU's 48 KiB), the next tile's loads in
// flight during each tile (PF 1), halved (keys first, to one matrix width,
// then subgroups) until the device's limits hold. The error says why none
// fits.
func attnCoopTilesFor(cfg MatrixConfig, sgs, hd int, l wgpu.Limits) (attnCoopTiles, error) {
	t := attnCoopTiles{cfg: cfg, FM: max(16/cfg.M, 1), HD: hd, BKV: 64, SG: 4, SGS: sgs, PF: 1}
	if err := t.valid(); err != nil {
		return t, err
	}
	step := max(cfg.K, cfg.N)
	for t.fits(l) != nil {
		switch {
		case t.BKV > step && t.BKV > 32:
			t.BKV /= 2
		case t.SG > 1:
			t.SG /= 2
		case t.BKV > step:
			t.BKV /= 2
		default:
			return t, t.fits(l)
		}
	}
	return t, nil
}

// loweredLoops estimates the loop iterations an invocation of the lowered
// kernel runs (wgsl's lower_matrix.go: every load, store and
// multiply-accumulate of a matrix loops over its elements) over a cache of
// keys positions, as coopTiles.loweredLoops does for the other coop kernels:
// Q's staging and loads once, then per tile the staging of K and V, the
// scores (HD/K steps of BKV/N right loads and products per left matrix),
// their stores, the softmax (two passes over the row's scores per row), P·V
// (BKV/K steps of a left load and HD/N right loads and products) and its
// stores, and the merge.
func (t attnCoopTiles) loweredLoops(keys int) int {
	c := t.cfg
	hp := t.hp()
	nq, ns, no, np := hp/c.K, t.BKV/c.N, hp/c.N, t.BKV/c.K
	lk, rm, res := c.M*c.K, c.K*c.N, c.M*c.N
	rows := max(t.FM*c.M/t.SGS, 1)
	once := ceilDiv(t.BQ()*hp/4, t.WG()) + t.FM*nq*lk + 2*rows
	perTile := ceilDiv(t.BKV*hp/4, t.WG()) +
		t.FM*(nq*ns*(rm+res)+ns*res) +
		rows*2*t.BKV/t.lanes() +
		t.FM*(np*(lk+no*(rm+res))+no*res) +
		rows*hp/t.lanes()
	return once + ceilDiv(keys, t.BKV)*perTile
}

// attnCoopConstLine matches a line of attention_coop.wgsl that the host
// rewrites.
var attnCoopConstLine = regexp.MustCompile(`(?m)^const (SM|SN|SK|FM|HD|BKV|SG|SGS|PF|QW): u32 = [0-9]+u;`)

// attnCoopSource is attention_coop.wgsl's text for the tiling.
func attnCoopSource(t attnCoopTiles) (wgsl.Expanded, error) {
	return rewriteConsts("attention_coop.wgsl", attnCoopConstLine, map[string]int{
		"SM": t.cfg.M, "SN": t.cfg.N, "SK": t.cfg.K, "FM": t.FM, "HD": t.HD, "BKV": t.BKV, "SG": t.SG, "SGS": t.SGS, "PF": t.PF, "QW": t.qw()})
}

// newAttnCoopKernel compiles attention_coop.wgsl for the tiling; its
// pipelines require the configuration's subgroup size where it names one.
func newAttnCoopKernel(dev *wgpu.Device, t attnCoopTiles) (*Kernel, error) {
	if err := t.fits(dev.Limits()); err != nil {
		return nil, fmt.Errorf("kernel attention_coop.wgsl: %w", err)
	}
	src, err := attnCoopSource(t)
	if err != nil {
		return nil, err
	}
	return compileKernel(dev, attnCoopLabel(t)+".wgsl", src, uint32(t.cfg.SubgroupSize))
}

// attnCoopLabel names attention_coop.wgsl with tiling t, as profiles show
// it.
func attnCoopLabel(t attnCoopTiles) string {
	return fmt.Sprintf("attention_coop[%s HD%d FM%d BKV%d SG%d PF%d]", t.cfg, t.HD, t.FM, t.BKV, t.SG, t.PF)
}

// attnCoop is attention_coop.wgsl compiled for a model's head size.
type attnCoop struct {
	tiles attnCoopTiles
	k     *Kernel
}

// work is the dispatch of B sequences x H heads x T query rows.
func (a *attnCoop) work(B, H, T int) extent { return perWorkgroup(a.tiles.groups(B, H, T)) }

// newAttnCoop compiles attention_coop.wgsl for the model's head size with
// cfg on subgroups of sgs invocations, or says why the model keeps
// attention_shared.wgsl: a head size the configuration does not divide, a
// tiling beyond the device's limits, or (lowered, on an adapter with a loop
// limit) more loop iterations at the model's positions than coopLoopBudget.
// g.mu is held.
func (g *GPT2) newAttnCoop(cfg MatrixConfig, sgs int) (*attnCoop, string) {
	t, err := attnCoopTilesFor(cfg, sgs, g.cfg.HeadDim(), g.dev.Limits())
	if err != nil {
		return nil, err.Error()
	}
	if !g.attnLoopsOK(t) {
		keys := max(g.positions, checkAttnPos0+checkAttnT)
		return nil, fmt.Sprintf("lowered, attention_coop.wgsl would loop some %d times an invocation over %d positions, past %s's limit", t.loweredLoops(keys), keys, g.dev.AdapterInfo().Name)
	}
	k, err := newAttnCoopKernel(g.dev, t)
	if err != nil {
		return nil, err.Error()
	}
	return &attnCoop{tiles: t, k: k}, ""
}

// attnStatus is MatrixUnitsStatus.Attention for ck.
func (ck *coopKernels) attnStatus() string {
	if ck.attn == nil {
		return "attention_shared.wgsl: " + ck.attnWhy
	}
	return fmt.Sprintf("attention_coop.wgsl (%v), where faster", ck.attn.tiles)
}

// attnCheck is the self-check's attention case (attnCase) where ck has the
// coop attention: its detail starts with "; ", for selfCheck's.
func (r *checkRun) attnCheck(ck *coopKernels) (bool, string, error) {
	if ck.attn == nil {
		return true, "", nil
	}
	ok, d, err := r.attnCase(ck.attn)
	return ok, "; " + d, err
}

// attnCoopFor is the coop attention a chunk of B sequences x T rows runs
// on where the matrix units are in use with one: the autotuner's pick at
// the batch's shape (attnPick), else the default tiling; nil for
// attention_shared.wgsl. g.mu is held.
func (g *GPT2) attnCoopFor(B, T int) *attnCoop {
	if g.coop == nil || g.coop.attn == nil {
		return nil
	}
	if a, ok := g.attnPicks[g.attnTuneKey(B, T)]; ok {
		return a
	}
	return g.coop.attn
}

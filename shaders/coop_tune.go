package shaders

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The coop autotuner: matmul_coop.wgsl's tilings (coopCandidates) timed on
// the device at each weight matmul's real shape, the fastest that passes
// the self-check chosen, kept in the tuning file under a key of its own
// (coopTuneKey), used by the forward pass (coopVariant).

// coopShape is a tiling of matmul_coop.wgsl in elements, whatever the
// configuration: a WM x WN block of out per subgroup, SGM x SGN subgroups,
// steps of BK, ST stages, w's tile layout WT (coopTiles.WT).
type coopShape struct{ WM, WN, SGM, SGN, BK, ST, WT int }

// coopShapes are the tilings the coop autotuner times, after the default
// (coopMatmulTiles: 2 x 2 subgroups of 32 x 32, so tuning never picks worse
// than it). The rest follow what runs fast on NVIDIA's tensor cores through
// Vulkan's cooperative matrices: big workgroup tiles (128 x 128 and more)
// of few subgroups, each 64 x 64 (4 x 4 accumulators of 16 x 16, each left
// matrix loaded once for 4 right ones and the reverse), BK 16 to 64, and
// the 8-subgroup tiles that trade registers per subgroup for more of them.
// On the H200 (2026-12-04) the 16-subgroup tiling of 32 x 32 blocks won
// every shape and the 64 x 64 blocks ran 1.5 to 3 times slower. We read
// that as register pressure then, hence the 1-stage tilings; what was found
// since fits it better: one invocation per workgroup zeroed all of the
// workgroup memory before any work, longer than a tile's whole K loop, so
// the tilings with the least workgroup memory per output won. With that
// gone (workgroup_init.go), the 2-buffer tilings (ST 3: one barrier per
// step instead of two) are worth their memory: BK 16 where 32 does not fit
// 48 KiB. Last, w's tile n-major (WT 1) for the default and the 16-subgroup
// tilings that won on the H200: ACO (AMD's RDNA3, RADV) loads a right
// matrix from the row-major tile with 16 2-byte loads per invocation, from
// the n-major one with 2 of 16 bytes, in the same or fewer registers
// (BENCHMARKS.md, 2026-12-06); NVIDIA's driver likely uses its transposing
// loads either way. Few, since each is a pipeline to compile on first use.
var coopShapes = []coopShape{
	{32, 64, 2, 2, 32, 2, 0}, // 64 x 128
	{64, 32, 2, 2, 32, 2, 0}, // 128 x 64
	{64, 64, 2, 2, 16, 2, 0}, // 128 x 128
	{64, 64, 2, 2, 32, 2, 0},
	{64, 64, 2, 2, 64, 2, 0},
	{32, 64, 4, 2, 32, 2, 0}, // 128 x 128, 8 subgroups
	{64, 32, 2, 4, 32, 2, 0},
	{32, 32, 4, 4, 32, 2, 0}, // 128 x 128, 16 subgroups
	{64, 64, 4, 2, 32, 2, 0}, // 256 x 128
	{64, 64, 2, 4, 32, 2, 0}, // 128 x 256
	{64, 64, 2, 2, 32, 1, 0}, // 1 stage: 128 x 128, 256 x 128, 128 x 256
	{64, 64, 4, 2, 32, 1, 0},
	{64, 64, 2, 4, 32, 1, 0},
	{32, 32, 4, 4, 32, 1, 0},
	{64, 64, 2, 2, 32, 3, 0}, // 2 buffers: 128 x 128 of 4, 8 and 16 subgroups
	{64, 64, 2, 2, 16, 3, 0},
	{32, 64, 4, 2, 32, 3, 0},
	{32, 32, 4, 4, 16, 3, 0},
	{64, 64, 4, 2, 16, 3, 0}, // 256 x 128, 128 x 256
	{64, 64, 2, 4, 16, 3, 0},
	{32, 32, 2, 2, 32, 2, 1}, // w's tile n-major: the default, the 16-subgroup ones
	{32, 32, 4, 4, 32, 2, 1},
	{32, 32, 4, 4, 16, 3, 1},
}

// tiles is s for cfg and subgroups of sgs invocations, with the widest
// epilogue chunk (EC: a divisor of FN) whose workgroup memory is at most
// maxShared bytes; ok false where s does not divide into cfg's matrices or
// no chunk fits.
func (s coopShape) tiles(cfg MatrixConfig, sgs, maxShared int) (coopTiles, bool) {
	if s.WM%cfg.M != 0 || s.WN%cfg.N != 0 {
		return coopTiles{}, false
	}
	t := coopTiles{cfg: cfg, FM: s.WM / cfg.M, FN: s.WN / cfg.N, SGM: s.SGM, SGN: s.SGN, SGS: sgs, BK: s.BK, ST: s.ST, WT: s.WT, maxL: coopMaxLoads}
	for t.EC = t.FN; t.EC >= 1; t.EC-- {
		if t.FN%t.EC == 0 && t.sharedBytes() <= maxShared {
			return t, true
		}
	}
	return coopTiles{}, false
}

// coopCandidates are the tilings the coop autotuner times for ck's
// configuration on g's device at depth K: the default first, then those of
// coopShapes that fit the device and, where the adapter has a loop limit
// (lowered kernels on lavapipe), stay within coopLoopBudget at K and at
// the self-check's depth. g.mu is held.
func (g *GPT2) coopCandidates(ck *coopKernels, K int) []coopTiles {
	out := []coopTiles{ck.mm}
	shapes := coopShapes
	if g.coopShapes != nil {
		shapes = g.coopShapes
	}
	maxShared := int(g.dev.Limits().MaxComputeWorkgroupStorageSize)
	for _, s := range shapes {
		t, ok := s.tiles(ck.cfg, ck.mm.SGS, maxShared)
		if !ok || slices.Contains(out, t) || t.fits(g.dev) != nil || !g.coopLoopsOK(t, K) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// coopLoopsOK reports whether matmul_coop.wgsl with tiling t, lowered,
// stays within the adapter's loop limit at depth K and the self-check's.
func (g *GPT2) coopLoopsOK(t coopTiles, K int) bool {
	return g.loopLimit == 0 || (t.loweredLoops(K, 0) <= coopLoopBudget && t.loweredLoops(checkK, 0) <= coopLoopBudget)
}

// coopTuneKey names a matmul shape for the coop autotuner: the
// configuration, then tuneKey's shape (f16 weights), as
// "coop 16x16x16 f16 N2304 K768 M65536".
func coopTuneKey(cfg MatrixConfig, M, N, K int) string {
	return "coop " + cfg.String() + " " + tuneKey(true, M, N, K)
}

// coopTileKeys are the constants of a coop tiling in a TuneChoice: the
// result matrices per subgroup (FM, FN), subgroups (SGM, SGN), BK, EC and
// ST. A choice without ST (written before stages were tuned) is invalid,
// so that the shape is tuned again. WT is optional: a choice has it only
// where it is 1, so that one without it (among them every one written
// before WT existed) names w's row-major tile, WT 0.
var (
	coopTileKeys     = []string{"FM", "FN", "SGM", "SGN", "BK", "EC", "ST"}
	coopOptionalKeys = []string{"WT"}
)

// coopConstants is t as a TuneChoice's Tiles (WT only where it is not 0).
func (t coopTiles) coopConstants() map[string]float64 {
	m := map[string]float64{"FM": float64(t.FM), "FN": float64(t.FN), "SGM": float64(t.SGM), "SGN": float64(t.SGN),
		"BK": float64(t.BK), "EC": float64(t.EC), "ST": float64(t.ST)}
	if t.WT != 0 {
		m["WT"] = float64(t.WT)
	}
	return m
}

// coopTilesOf is the tiling a TuneChoice's Tiles name for cfg and
// subgroups of sgs invocations.
func coopTilesOf(cfg MatrixConfig, sgs int, c map[string]float64) coopTiles {
	i := func(k string) int { return int(c[k]) }
	return coopTiles{cfg: cfg, FM: i("FM"), FN: i("FN"), SGM: i("SGM"), SGN: i("SGN"), SGS: sgs, BK: i("BK"), EC: i("EC"), ST: i("ST"),
		WT: i("WT"), maxL: coopMaxLoads}
}

// coopTilesName spells a coop tiling's constants for TilesName: the
// matmul's with EC and ST (and /WT1 for w's n-major tile), the LM head's
// with NT too.
func coopTilesName(c map[string]float64) string {
	last := fmt.Sprintf("EC%g", c["EC"])
	if nt, ok := c["NT"]; ok {
		last += fmt.Sprintf("/NT%g", nt)
	}
	last += fmt.Sprintf("/ST%g", c["ST"])
	if gx, ok := c["GX"]; ok {
		last += fmt.Sprintf("/GX%g", gx)
	}
	if wt := c["WT"]; wt != 0 {
		last += fmt.Sprintf("/WT%g", wt)
	}
	return fmt.Sprintf("%gx%g*%gx%g/BK%g/%s", c["SGM"], c["SGN"], c["FM"], c["FN"], c["BK"], last)
}

// validChoice checks the tiles of a choice read from the tuning file: the
// coop autotuner's (Shape "coop ..."), attention's ("attn ...",
// attention_tune.go) or matmul_shared.wgsl's.
func validChoice(c TuneChoice) error {
	keys, optional := coopTileKeys, []string(nil)
	switch {
	case strings.HasPrefix(c.Shape, "attn "):
		if !validAttnChoice(c) {
			return errors.New(`attention choice: want tiles {"coop": 0} or {"coop": 1} with FM, BKV, SG and PF`)
		}
		return nil
	case strings.HasPrefix(c.Shape, "coop-head "):
		keys, optional = coopHeadTileKeys, coopHeadOptionalKeys
	case !strings.HasPrefix(c.Shape, "coop "):
		return validTiles(c.Tiles)
	default:
		optional = coopOptionalKeys
	}
	for _, k := range keys {
		if _, ok := c.Tiles[k]; !ok {
			return errors.New("coop tiles: want " + strings.Join(keys, ", "))
		}
	}
	for k, v := range c.Tiles {
		if k == "WT" && slices.Contains(optional, k) { // w's tile layout: 0 or 1
			if v != 0 && v != 1 {
				return fmt.Errorf("coop tile constant WT = %v: want 0 or 1", v)
			}
			continue
		}
		if !slices.Contains(keys, k) && !slices.Contains(optional, k) || v < 1 || v > 256 || v != math.Trunc(v) {
			return fmt.Errorf("coop tile constant %s = %v", k, v)
		}
	}
	return nil
}

// ensureCoopTuned makes sure every weight matmul of a batch of rows rows
// has its matmul_coop.wgsl tiling, and the LM head its
// lmhead_loss_coop.wgsl tiling (ck.picks), as ensureTuned does for
// matmul_shared.wgsl: from memory, from the tuning file, or timed now at
// tuneM(rows) rows (the file rewritten). Each tiling other than the
// default runs only once the self-check passed with it (coopPick). TuneOff,
// and TuneAuto on software adapters, keep the default tiling. g.mu is held.
func (g *GPT2) ensureCoopTuned(rows int) {
	ck := g.coop
	ck.rows = rows
	if g.tuneMode == TuneOff || (g.tuneMode == TuneAuto && !g.autoTune) {
		return
	}
	if ck.picks == nil {
		ck.picks = map[string]coopTiles{}
	}
	if g.tuned == nil {
		g.tuned = map[string]TuneChoice{}
	}
	var file map[string]TuneChoice
	fresh := map[string]TuneChoice{} // timed now, as timed (before coopPick): what the file keeps
	for _, sh := range g.matmulShapes() {
		K, N := sh.K, sh.N
		key := coopTuneKey(ck.cfg, rows, N, K)
		redo := g.tuneMode == TuneRedo && !g.tuneRedone[key]
		if _, ok := ck.picks[key]; ok && !redo {
			continue
		}
		c, have := g.tuned[key]
		if !have && !redo {
			if file == nil {
				file = loadTuning(g.dev, g.tuneFile)
			}
			c, have = file[key]
		}
		if !have && !redo {
			if b, ok := g.borrowTuning(key, rows, func(m int) string { return coopTuneKey(ck.cfg, m, N, K) }); ok {
				if pick, ok := ck.picks[b.Borrowed]; ok { // what runs for the choice borrowed: it passed the self-check
					ck.picks[key], g.tuned[key] = pick, b
					continue
				}
			}
		}
		if !have || redo {
			g.noteTuning(key)
			c = g.timeCoop(ck, key, rows, sh, g.coopCandidates(ck, K))
			fresh[key] = c
			if g.tuneRedone != nil {
				g.tuneRedone[key] = true
			}
		}
		ck.picks[key] = g.coopPick(ck, &c, K)
		g.tuned[key] = c
	}
	g.ensureCoopHead(ck, rows, &file, fresh)
	if len(fresh) > 0 && g.tuneFile != "" {
		if file == nil {
			file = loadTuning(g.dev, g.tuneFile)
		}
		// The choices as timed, even where the fastest failed the
		// self-check (the next process reads that verdict and runs what
		// this one runs, without timing again); a timing that failed is
		// retried by the next process, not kept.
		for k, c := range fresh {
			if c.Err == "" {
				file[k] = c
			} else {
				delete(file, k)
			}
		}
		g.keepTuning(file)
	}
}

// timeCoop times matmul_coop.wgsl's candidate tilings at (tuneM(rows), N,
// K) (see timePipeline) and returns the fastest (ties: the earlier) with
// every timing; where none ran, Err says why and Tiles are the default's.
func (g *GPT2) timeCoop(ck *coopKernels, key string, rows int, sh matmulShape, cands []coopTiles) TuneChoice {
	N, K := sh.N, sh.K
	ch := TuneChoice{Shape: key, Tiles: ck.mm.coopConstants()}
	M := tuneM(rows)
	bufs, params, done, err := g.tuneOperands(M, sh)
	defer done()
	if err != nil {
		ch.Err = fmt.Sprintf("tune %s: %v", key, err)
		return ch
	}
	tiles := make([]map[string]float64, len(cands))
	for i, t := range cands {
		tiles[i] = t.coopConstants()
	}
	compilePipelines(g.coopJobs(ck, sh, cands))
	ran := ch.timeCandidates(tiles, g.clocked(tiles, func(i int, best uint64) (uint64, error) {
		k, err := g.coopKernelFor(ck, cands[i])
		if err != nil {
			return 0, err
		}
		mv := coopVariant(k, cands[i], K, N)
		return g.timePipeline(k, mv.consts.with("EPI", float64(sh.epi)), bufs, params, mv.work(M, N), best)
	}))
	if !ran {
		ch.Err = fmt.Sprintf("tune %s: no candidate ran: %s", key, ch.Candidates[0].Err)
	}
	return ch
}

// coopJobs are the pipelines timeCoop times for shape sh's candidates (those
// whose kernel compiles). g.mu is held.
func (g *GPT2) coopJobs(ck *coopKernels, sh matmulShape, cands []coopTiles) []pipelineJob {
	var jobs []pipelineJob
	for _, t := range cands {
		if k, err := g.coopKernelFor(ck, t); err == nil {
			jobs = append(jobs, pipelineJob{k, coopVariant(k, t, sh.K, sh.N).consts.with("EPI", float64(sh.epi))})
		}
	}
	return jobs
}

// coopPick is the tiling that runs for choice c: its Tiles where they are
// the default (which decideMatrixUnits checked) or fit, stay within the
// loop limit and pass the self-check; else the next fastest of its timed
// candidates that does, else the default. Checking the one chosen, rather
// than every candidate, costs one self-check per tiling that would run
// (verdicts kept in the verdict file by tiling and kernel text), none for
// those that lost. When the choice is not what runs, c says so (Err, and
// Tiles the ones that run); the tuning file keeps the choice as timed, and
// the next process, finding the same verdicts, picks the same without
// timing.
func (g *GPT2) coopPick(ck *coopKernels, c *TuneChoice, K int) coopTiles {
	of := func(m map[string]float64) coopTiles { return coopTilesOf(ck.cfg, ck.mm.SGS, m) }
	return pickTiling(c, ck.mm, of, (coopTiles).coopConstants, func(t coopTiles) error {
		if err := t.fits(g.dev); err != nil {
			return err
		}
		if !g.coopLoopsOK(t, K) {
			return fmt.Errorf("coop tiles %v: past the adapter's loop limit", t)
		}
		k, err := g.coopKernelFor(ck, t)
		if err != nil {
			return err
		}
		if v := g.coopTilingVerdict(ck, t, k); !v.OK {
			return fmt.Errorf("coop tiles %v failed the self-check: %s", t, v.Detail)
		}
		return nil
	})
}

// pickTiling is the tiling that runs for choice c: of(c.Tiles), else the
// next fastest of c's timed candidates, for which usable reports no error
// (def, the default, needs no check: decideMatrixUnits made it), else def.
// When that is not c's choice, c says so (Tiles by constants, Err why the
// faster ones did not run).
func pickTiling[T comparable](c *TuneChoice, def T, of func(map[string]float64) T, constants func(T) map[string]float64, usable func(T) error) T {
	order := []T{of(c.Tiles)}
	for _, tt := range byTime(c.Candidates) {
		if tt.Err == "" && tt.Nanos > 0 {
			order = append(order, of(tt.Tiles))
		}
	}
	var why []string
	for i, t := range order {
		if t != def {
			if err := usable(t); err != nil {
				why = append(why, err.Error())
				continue
			}
		}
		if i > 0 {
			c.Tiles, c.Err = constants(t), strings.Join(why, "; ")
		}
		return t
	}
	c.Tiles, c.Err = constants(def), strings.Join(why, "; ")
	return def
}

// byTime is the candidates in order of their times, fastest first (ties:
// the earlier).
func byTime(cs []TuneTiming) []TuneTiming {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b TuneTiming) int { return cmp.Compare(a.Nanos, b.Nanos) })
	return out
}

// coopTilingVerdict is the self-check's matmul case for tiling t (kernel
// k), cached in the verdict file by configuration, tiling and kernel text.
func (g *GPT2) coopTilingVerdict(ck *coopKernels, t coopTiles, k *Kernel) coopVerdict {
	key := fmt.Sprintf("%s | matmul %v | %s", ck.cfg, t, textHash(k))
	v, _, _ := g.verdictFor(key, func(r *checkRun) (bool, string, error) {
		return r.matmulCase(coopVariant(k, t, checkK, checkN))
	})
	return v
}

// textHash is a short hash of k's text, for verdict keys.
func textHash(k *Kernel) string {
	h := sha256.Sum256([]byte(k.src.Text))
	return hex.EncodeToString(h[:])[:16]
}

// coopKernelFor is the coop kernel of tiling t (lmhead_loss_coop.wgsl for
// a head tiling, else matmul_coop.wgsl) compiled for it: ck's own for the
// defaults, else once per text (configuration, FM and FN). g.mu is held.
func (g *GPT2) coopKernelFor(ck *coopKernels, t coopTiles) (*Kernel, error) {
	def, defK, name := ck.mm, ck.matmul, "matmul_coop.wgsl"
	if t.head {
		def, defK, name = ck.head, ck.lmHd, "lmhead_loss_coop.wgsl"
	}
	if t == def {
		return defK, nil
	}
	if err := t.fits(g.dev); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	text := coopTiles{cfg: t.cfg, FM: t.FM, FN: t.FN, SGS: t.SGS, head: t.head}
	if k, ok := g.coopMM[text]; ok {
		return k, nil
	}
	k, err := newCoopKernel(g.dev, name, t)
	if err != nil {
		return nil, err
	}
	if g.coopMM == nil {
		g.coopMM = map[coopTiles]*Kernel{}
	}
	g.coopMM[text] = k
	return k, nil
}

// coopVariant is matmul_coop.wgsl compiled as k with tiling t, VEC where K
// and N are multiples of 4.
func coopVariant(k *Kernel, t coopTiles, K, N int) matmulVariant {
	vec := 0.0
	if K%4 == 0 && N%4 == 0 {
		vec = 1
	}
	return matmulVariant{k: k, shared: true, kv: k.BindsKV(), consts: t.constSet().with("VEC", vec), work: func(M, N int) extent {
		return perWorkgroup(ceilDiv(M, t.BM()) * ceilDiv(N, t.BN()))
	}}
}

// coopMatmulFor is matmul_coop.wgsl for an (M, K) x (K, N) product: with
// the tiling the autotuner picked for the shape, else the default. g.mu is
// held.
func (g *GPT2) coopMatmulFor(M, K, N int) matmulVariant {
	ck := g.coop
	if t, ok := ck.picks[coopTuneKey(ck.cfg, M, N, K)]; ok {
		if k, err := g.coopKernelFor(ck, t); err == nil {
			return coopVariant(k, t, K, N)
		}
	}
	return ck.matmulVariant(K, N)
}

// coopProfileTiling is what a profile adds to the name of kernel name
// (without .wgsl) dispatched with consts: for matmul_coop.wgsl, whose name
// gives the configuration and FMxFN, the rest of its tiling as
// " SGMxSGN/BK/EC/ST" (subgroups, step, epilogue chunk, stages; then /WT1
// for w's n-major tile), for
// lmhead_loss_coop.wgsl " SGMxSGN/BK/EC/NT"; else "".
func coopProfileTiling(name string, consts constSet) string {
	v := func(k string) float64 { x, _ := consts.value(k); return x }
	switch {
	case strings.HasPrefix(name, "matmul_coop["):
		s := fmt.Sprintf(" %gx%g/BK%g/EC%g/ST%g", v("SGM"), v("SGN"), v("BK"), v("EC"), v("ST"))
		if wt := v("WT"); wt != 0 {
			s += fmt.Sprintf("/WT%g", wt)
		}
		return s
	case strings.HasPrefix(name, "lmhead_loss_coop["):
		return fmt.Sprintf(" %gx%g/BK%g/EC%g/NT%g/ST%g", v("SGM"), v("SGN"), v("BK"), v("EC"), v("NT"), v("ST"))
	}
	return ""
}

// tilings names the tiling of every shape the coop autotuner picked, by
// its key, and the default as "coop", for provenance. g.mu is held.
func (ck *coopKernels) tilings() map[string]string {
	out := map[string]string{"coop": ck.mm.String()}
	for k, t := range ck.picks {
		out[k] = t.String()
	}
	return out
}

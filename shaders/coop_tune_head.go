package shaders

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// The coop autotuner's LM head: lmhead_loss_coop.wgsl's tilings timed at
// the model's (C, V) and the batch's positions. More positions per
// workgroup (BM) read each id's row of wte fewer times (65536 positions of
// GPT-2 124M read wte 2048 times at BM 32); more ids per tile (VT) restage
// h's rows fewer times. Its fold goes through workgroup memory in chunks
// (EC), so both fit; a tiling may also take fewer ids per tile and more
// tiles per slice: the same NT*VT ids, so the partials are as many and in
// the same places as the SIMT LM head's.

// coopHeadShape is a tiling of lmhead_loss_coop.wgsl in positions and ids,
// whatever the configuration: BM positions and VT ids per tile, SGM x SGN
// subgroups, steps of BK channels, ST stages.
type coopHeadShape struct{ BM, VT, SGM, SGN, BK, ST int }

// coopHeadShapes are the LM-head tilings the autotuner times after the
// default (coopHeadTiles: 32 positions, the SIMT head's VT ids). On the
// H200 the 128 x 128 tile of 4 subgroups won, twice as fast as most; it
// and its neighbours come in 1 stage too, and with 2 tile buffers (ST 3,
// BK 16 where 32 does not fit 48 KiB; see coopShapes). That tile comes in
// 8 and 16 subgroups too (32 x 64 and 16 x 64 per subgroup: 8 and 4
// accumulators, where 4 subgroups hold 16 each), the shapes of the
// matmuls' winners there: from its timings the head's main loop runs far
// slower than its work and memory account for, which registers could
// explain. And 256 ids a tile (BK 16, to fit 48 KiB), in 8 and 16
// subgroups: each tile restages its positions' rows of h, so 128 x 256
// reads h from L2 half as often as 128 x 128 (for 64 windows of GPT-2 124M,
// about 39 GB a batch instead of 79, beside wte's 39).
var coopHeadShapes = []coopHeadShape{
	{64, 128, 2, 2, 32, 2},
	{64, 64, 2, 2, 32, 2},
	{128, 128, 2, 2, 32, 2},
	{128, 128, 2, 2, 16, 2},
	{128, 64, 2, 2, 32, 2},
	{128, 32, 4, 1, 32, 2},
	{128, 128, 2, 2, 32, 1},
	{128, 64, 2, 2, 32, 1},
	{128, 128, 2, 2, 16, 3},
	{128, 64, 2, 2, 16, 3},
	{64, 128, 2, 2, 32, 3},
	{128, 128, 4, 2, 32, 2},
	{128, 128, 8, 2, 32, 2},
	{128, 128, 8, 2, 16, 3},
	{128, 256, 4, 2, 16, 2},
	{128, 256, 8, 2, 16, 2},
}

// tiles is s for cfg, subgroups of sgs invocations and slices of nt tiles
// of vt ids (the SIMT head's), with the widest fold chunk (EC) whose
// workgroup memory is at most maxShared bytes; ok false where s does not
// divide into cfg's matrices or the slice, breaks the kernel's constraints
// or fits no chunk.
func (s coopHeadShape) tiles(cfg MatrixConfig, sgs, vt, nt, maxShared int) (coopTiles, bool) {
	if s.BM%(s.SGM*cfg.M) != 0 || s.VT%(s.SGN*cfg.N) != 0 || (vt*nt)%s.VT != 0 {
		return coopTiles{}, false
	}
	t := coopTiles{cfg: cfg, FM: s.BM / (s.SGM * cfg.M), FN: s.VT / (s.SGN * cfg.N), SGM: s.SGM, SGN: s.SGN, SGS: sgs, BK: s.BK, ST: s.ST,
		vt: s.VT, head: true, nt: vt * nt / s.VT, maxL: coopMaxLoads, maxFoldR: 8}
	for t.EC = t.FN; t.EC >= 1; t.EC-- {
		if t.FN%t.EC == 0 && t.sharedBytes() <= maxShared {
			return t, t.valid() == nil
		}
	}
	return coopTiles{}, false
}

// coopHeadKey names the LM head's shape for the coop autotuner, as
// "coop-head 16x16x16 f16 C768 V50257 M65536" (M: tuneM of the batch's rows).
func coopHeadKey(cfg MatrixConfig, rows, C, V int) string {
	return fmt.Sprintf("coop-head %s f16 C%d V%d M%d", cfg, C, V, tuneM(rows))
}

// coopHeadTileKeys are a coop LM-head tiling's constants in a TuneChoice,
// and coopHeadOptionalKeys those it has only where the tiling sets them.
var (
	coopHeadTileKeys     = []string{"FM", "FN", "SGM", "SGN", "BK", "EC", "NT", "ST"}
	coopHeadOptionalKeys = []string{"GX"}
)

// headConstants is the LM-head tiling t as a TuneChoice's Tiles.
func (t coopTiles) headConstants() map[string]float64 {
	m := map[string]float64{"FM": float64(t.FM), "FN": float64(t.FN), "SGM": float64(t.SGM), "SGN": float64(t.SGN),
		"BK": float64(t.BK), "EC": float64(t.EC), "NT": float64(t.nt), "ST": float64(t.ST)}
	if t.gx != 0 {
		m["GX"] = float64(t.gx)
	}
	return m
}

// coopHeadTilesOf is the LM-head tiling a TuneChoice's Tiles name.
func coopHeadTilesOf(cfg MatrixConfig, sgs int, c map[string]float64) coopTiles {
	i := func(k string) int { return int(c[k]) }
	return coopTiles{cfg: cfg, FM: i("FM"), FN: i("FN"), SGM: i("SGM"), SGN: i("SGN"), SGS: sgs, BK: i("BK"), EC: i("EC"), ST: i("ST"),
		vt: i("SGN") * i("FN") * cfg.N, head: true, nt: i("NT"), gx: i("GX"), maxL: coopMaxLoads, maxFoldR: 8}
}

// headGroupSizes are the GX (include/headblock.wgsl) the autotuner times
// with the fastest LM-head tiling, beside the kernel's 16: how many blocks
// of positions the resident workgroups share decides how much of h and wte
// they read at once (at 128 positions of GPT-2 124M, 1.5 to 12.6 MB of h),
// against L2 caches from some 5 MB (an RTX 2080 Ti) to 50 (an H200).
var headGroupSizes = []int{4, 8, 32}

// coopHeadCandidates are the LM-head tilings timed on g's device: the
// default first, then those of coopHeadShapes that fit and stay within the
// loop limit (lowered) at the model's C and V and the self-check's. g.mu
// is held.
func (g *GPT2) coopHeadCandidates(ck *coopKernels) []coopTiles {
	out := []coopTiles{ck.head}
	shapes := coopHeadShapes
	if g.coopHeadShapes != nil {
		shapes = g.coopHeadShapes
	}
	for _, s := range shapes {
		t, ok := s.tiles(ck.cfg, ck.head.SGS, ck.head.vt, ck.head.nt, int(g.dev.Limits().MaxComputeWorkgroupStorageSize))
		if !ok || slices.Contains(out, t) || t.fits(g.dev) != nil || !g.headLoopsOK(t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// headLoopsOK reports whether lmhead_loss_coop.wgsl with tiling t, lowered,
// stays within the adapter's loop limit at the model's C and V and the
// self-check's.
func (g *GPT2) headLoopsOK(t coopTiles) bool {
	return g.loopLimit == 0 || (t.loweredLoops(g.cfg.NEmbd, ceilDiv(g.cfg.VocabSize, t.vt)) <= coopLoopBudget &&
		t.loweredLoops(checkC, ceilDiv(checkV, t.vt)) <= coopLoopBudget)
}

// ensureCoopHead is ensureCoopTuned for the LM head at a batch of rows
// rows: from memory, the tuning file (file, loaded on first use), or timed
// now (then added to fresh as timed, for the file); the tiling that runs
// passed the self-check. g.mu is held.
func (g *GPT2) ensureCoopHead(ck *coopKernels, rows int, file *map[string]TuneChoice, fresh map[string]TuneChoice) {
	C, V := g.cfg.NEmbd, g.cfg.VocabSize
	key := coopHeadKey(ck.cfg, rows, C, V)
	redo := g.tuneMode == TuneRedo && !g.tuneRedone[key]
	if _, ok := ck.picks[key]; ok && !redo {
		return
	}
	c, have := g.tuned[key]
	if !have && !redo {
		if *file == nil {
			*file = loadTuning(g.dev, g.tuneFile)
		}
		c, have = (*file)[key]
	}
	if !have && !redo {
		if b, ok := g.borrowTuning(key, rows, func(m int) string { return coopHeadKey(ck.cfg, m, C, V) }); ok {
			if pick, ok := ck.picks[b.Borrowed]; ok {
				ck.picks[key], g.tuned[key] = pick, b
				return
			}
		}
	}
	if !have || redo {
		g.noteTuning(key)
		c = g.timeCoopHead(ck, key, rows, C, V, g.coopHeadCandidates(ck))
		fresh[key] = c
		if g.tuneRedone != nil {
			g.tuneRedone[key] = true
		}
	}
	ck.picks[key] = g.coopHeadPick(ck, &c)
	g.tuned[key] = c
}

// timeCoopHead times the LM-head candidates over P = tuneM(rows) positions,
// C channels and V ids (or as many whole slices as one binding of wte
// holds) with random operands; the fastest, with every timing.
func (g *GPT2) timeCoopHead(ck *coopKernels, key string, rows, C, V int, cands []coopTiles) TuneChoice {
	ch := TuneChoice{Shape: key, Tiles: ck.head.headConstants()}
	P := tuneM(rows)
	slice := ck.head.vt * ck.head.nt
	if limit := int(min(g.dev.Limits().MaxStorageBufferBindingSize, 1<<31)); V*C*2 > limit {
		V = max(limit/(C*2)/slice, 1) * slice
	}
	parts := ceilDiv(V, slice)
	r := &checkRun{g: g}
	defer r.close()
	targets := make([]byte, 0, 8*P)
	for p := range P {
		targets = binary.LittleEndian.AppendUint32(targets, uint32((p*7919)%V))
	}
	targets = append(targets, make([]byte, 4*P)...) // room for the target logits
	bufs := map[string]Buf{}
	h, err := r.random("h", weights(uint32(C), P*C, true)) // as to_f16.wgsl leaves it
	var wte, tgt, part *wgpu.Buffer
	if err == nil {
		wte, err = r.random("wte", weights(uint32(V), V*C, true))
	}
	if err == nil {
		tgt, err = r.buffer("targets", targets)
	}
	if err == nil {
		part, err = r.zeros("tune part", 8*parts*P)
	}
	if err != nil {
		ch.Err = fmt.Sprintf("tune %s: %v", key, err)
		return ch
	}
	bufs["h"], bufs["wte"], bufs["targets"], bufs["part"] = Buf{Buffer: h}, Buf{Buffer: wte}, Buf{Buffer: tgt}, Buf{Buffer: part}
	params := Params{"P": float64(P), "C": float64(C), "V": float64(V), "v0": 0}
	timeAll := func(cands []coopTiles) bool {
		tiles := make([]map[string]float64, len(cands))
		for i, t := range cands {
			tiles[i] = t.headConstants()
		}
		compilePipelines(g.coopHeadJobs(ck, cands))
		return ch.timeCandidates(tiles, g.clocked(tiles, func(i int, best uint64) (uint64, error) {
			k, err := g.coopKernelFor(ck, cands[i])
			if err != nil {
				return 0, err
			}
			return g.timePipeline(k, cands[i].constSet(), bufs, params, headGroups(cands[i], P, V), best)
		}))
	}
	if !timeAll(cands) {
		ch.Err = fmt.Sprintf("tune %s: no candidate ran: %s", key, ch.Candidates[0].Err)
		return ch
	}
	// The fastest again (this round's reference) and with each other group
	// size: the choice is this round's fastest.
	best := coopHeadTilesOf(ck.cfg, ck.head.SGS, ch.Tiles)
	round := []coopTiles{best}
	for _, gx := range headGroupSizes {
		t := best
		t.gx = gx
		round = append(round, t)
	}
	timeAll(round)
	return ch
}

// coopHeadJobs are the pipelines timeCoopHead times for LM-head candidates
// cands (those whose kernel compiles). g.mu is held.
func (g *GPT2) coopHeadJobs(ck *coopKernels, cands []coopTiles) []pipelineJob {
	var jobs []pipelineJob
	for _, t := range cands {
		if k, err := g.coopKernelFor(ck, t); err == nil {
			jobs = append(jobs, pipelineJob{k, t.constSet()})
		}
	}
	return jobs
}

// coopHeadPick is coopPick for the LM head: the choice, else the next
// fastest, that fits, stays within the loop limit and passes the
// self-check's LM-head case; else the default.
func (g *GPT2) coopHeadPick(ck *coopKernels, c *TuneChoice) coopTiles {
	of := func(m map[string]float64) coopTiles { return coopHeadTilesOf(ck.cfg, ck.head.SGS, m) }
	return pickTiling(c, ck.head, of, (coopTiles).headConstants, func(t coopTiles) error {
		if t.vt*t.nt != ck.head.vt*ck.head.nt || t.fits(g.dev) != nil || !g.headLoopsOK(t) {
			return fmt.Errorf("coop LM-head tiles %v: not for this device and model", t)
		}
		k, err := g.coopKernelFor(ck, t)
		if err != nil {
			return err
		}
		if v := g.coopHeadVerdict(ck, t, k); !v.OK {
			return fmt.Errorf("coop LM-head tiles %v failed the self-check: %s", t, v.Detail)
		}
		return nil
	})
}

// coopHeadVerdict is the self-check's LM-head case for tiling t (kernel
// k), cached in the verdict file by configuration, tiling and kernel text.
func (g *GPT2) coopHeadVerdict(ck *coopKernels, t coopTiles, k *Kernel) coopVerdict {
	key := fmt.Sprintf("%s | lmhead %v NT %d | %s", ck.cfg, t, t.nt, textHash(k))
	v, _, _ := g.verdictFor(key, func(r *checkRun) (bool, string, error) { return r.headCase(k, t, ck.toF16) })
	return v
}

// coopHeadFor is lmhead_loss_coop.wgsl as the batch being recorded runs
// it (the tiling the autotuner picked for its rows, else the default) for C
// channels: the kernel, its constants and its dispatch for P positions of V
// ids. g.mu is held.
func (g *GPT2) coopHeadFor(C int) (*Kernel, constSet, func(P, V int) extent) {
	ck := g.coop
	t := ck.head
	if pt, ok := ck.picks[coopHeadKey(ck.cfg, ck.rows, C, g.cfg.VocabSize)]; ok {
		t = pt
	}
	k, err := g.coopKernelFor(ck, t)
	if err != nil {
		t, k = ck.head, ck.lmHd
	}
	return k, t.constSet(), func(P, V int) extent { return headGroups(t, P, V) }
}

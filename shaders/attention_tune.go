package shaders

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The autotuner's choice of the attention kernel: where the matrix units
// are in use with attention_coop.wgsl, a hardware GPU in TuneAuto (any
// adapter in TuneRedo) times its tilings (attnCoopCandidates) and
// attention_shared.wgsl once at a batch's attention shape and runs the
// fastest that passes the self-check (attnPick). The choice is kept in the
// device's tuning file beside the matmuls' (shapes "attn ...", Tiles
// {"coop": 1, "FM", "BKV", "SG", "PF": the tiling} or {"coop": 0}).

// attnCoopShape is a tiling of attention_coop.wgsl whatever the
// configuration: Rows query rows per subgroup (FM = Rows / the
// configuration's M), SG subgroups, tiles of BKV keys, PF 1 or 2 to load
// the next tile during this one (attention_coop.wgsl's PF).
type attnCoopShape struct{ Rows, SG, BKV, PF int }

// attnCoopShapes are the tilings the autotuner times after the default
// (attnCoopTilesFor: 4 subgroups of 16 rows, 64 keys a tile, PF 1). Its
// blocks without the prefetch, whose registers may cost more than the
// latency they hide; half the keys a tile (less workgroup memory, more
// workgroups resident, twice the barriers); half the queries a workgroup
// (twice the workgroups, less idle work on the causal diagonal); and
// subgroups of 32 rows (two left matrices of 16, each invocation a whole
// row where subgroups have 32: twice the accumulator and score registers,
// so with 64 keys a tile not the prefetch's besides). And workgroups of one
// such subgroup: steps 2 to 5 touch only a subgroup's own rows, so there
// each of a tile's four barriers waits for that subgroup alone (WGSL has no
// subgroup-scoped barrier; a one-subgroup workgroup's is one), at the cost
// of each workgroup staging its own keys and values (each tile read from L2
// by twice as many workgroups as with 2 subgroups of 32 rows). On an NVIDIA
// GPU at head size 64 each fits its 48 KiB, five in 32 KiB (two workgroups
// an SM where a GPU has 64 KiB); those that fit no device are left out
// (attnCoopCandidates). The tilings of 32 rows keep Q in workgroup memory
// (QW 1) but {32, 2, 64, 0}, whose block would need 53 KiB so: on RDNA3 it
// is the one ACO spills registers of (attnSpills, TestCompileStatistics; kept, as on
// NVIDIA GPUs Q takes half the registers). Last, the three prefetching
// tilings that keep the next tile's keys and values as loaded (PF 2) within
// RDNA3's registers (ACO, head size 64, no spills): they overlap the loads
// with the whole tile where a driver leaves the loads where they are
// written, and cost twice PF 1's registers for them.
var attnCoopShapes = []attnCoopShape{
	{16, 4, 64, 0},
	{16, 4, 32, 1},
	{16, 2, 64, 1},
	{32, 2, 64, 0},
	{32, 2, 32, 1},
	{32, 1, 64, 0},
	{32, 1, 32, 1},
	{16, 4, 64, 2},
	{16, 4, 32, 2},
	{32, 2, 32, 2},
}

// tiles is s for the default tiling def's configuration, subgroups and head
// size; ok false where s does not divide into its matrices or breaks the
// kernel's constraints.
func (s attnCoopShape) tiles(def attnCoopTiles) (attnCoopTiles, bool) {
	if s.Rows%def.cfg.M != 0 {
		return attnCoopTiles{}, false
	}
	t := attnCoopTiles{cfg: def.cfg, FM: s.Rows / def.cfg.M, HD: def.HD, BKV: s.BKV, SG: s.SG, SGS: def.SGS, PF: s.PF}
	return t, t.valid() == nil
}

// attnCoopCandidates are the tilings of attention_coop.wgsl the autotuner
// times after def, the default: those of attnCoopShapes (g.attnShapes in
// tests) that fit the device and, lowered on an adapter with a loop limit,
// stay within it (attnLoopsOK). g.mu is held.
func (g *GPT2) attnCoopCandidates(def attnCoopTiles) []attnCoopTiles {
	out := []attnCoopTiles{def}
	shapes := attnCoopShapes
	if g.attnShapes != nil {
		shapes = g.attnShapes
	}
	for _, s := range shapes {
		t, ok := s.tiles(def)
		if ok && !slices.Contains(out, t) && t.fits(g.dev.Limits()) == nil && g.attnLoopsOK(t) {
			out = append(out, t)
		}
	}
	return out
}

// attnLoopsOK reports whether attention_coop.wgsl with tiling t, lowered,
// stays within the adapter's loop limit (coopLoopBudget) at the model's
// positions and the self-check's.
func (g *GPT2) attnLoopsOK(t attnCoopTiles) bool {
	return g.loopLimit == 0 || t.loweredLoops(max(g.positions, checkAttnPos0+checkAttnT)) <= coopLoopBudget
}

// attnChoice is the tuning file's Tiles for tiling t.
func (t attnCoopTiles) attnChoice() map[string]float64 {
	return map[string]float64{"coop": 1, "FM": float64(t.FM), "BKV": float64(t.BKV), "SG": float64(t.SG), "PF": float64(t.PF)}
}

// attnTilesOf is the tiling a choice's Tiles name, with def's
// configuration, head size and subgroup size; ok false for
// attention_shared.wgsl ({"coop": 0}).
func attnTilesOf(def attnCoopTiles, c map[string]float64) (attnCoopTiles, bool) {
	if c["coop"] != 1 {
		return attnCoopTiles{}, false
	}
	t := def
	t.FM, t.BKV, t.SG, t.PF = int(c["FM"]), int(c["BKV"]), int(c["SG"]), int(c["PF"])
	return t, true
}

// attnTuneRows caps the rows of a timed attention: B is cut to
// ⌈attnTuneRows/T⌉ sequences (more only add waves of the same work).
const attnTuneRows = 8192

// attnTuneB is the sequences an attention of B x T rows is timed with.
func attnTuneB(B, T int) int { return max(1, min(B, ceilDiv(attnTuneRows, T))) }

// attnTuneKey names the attention shape of a chunk of B sequences x T rows
// on g's coop attention, for the tuner: the configuration, the head size and
// heads, T rounded up to a power of two (as tuneM rounds rows) and the
// sequences timed.
func (g *GPT2) attnTuneKey(B, T int) string {
	T = tuneM(T)
	return fmt.Sprintf("attn %s HD%d H%d KV%d T%d B%d", g.coop.cfg, g.cfg.HeadDim(), g.cfg.NHead, g.cfg.KVHeads(), T, attnTuneB(B, T))
}

// validAttnChoice says whether c, read from a tuning file, is an attention
// choice: a shape "attn ..." with Tiles {"coop": 0} or {"coop": 1} and a
// tiling (whole FM, BKV and SG of sane sizes, PF 0, 1 or 2).
func validAttnChoice(c TuneChoice) bool {
	if !strings.HasPrefix(c.Shape, "attn ") {
		return false
	}
	switch c.Tiles["coop"] {
	case 0:
		_, ok := c.Tiles["coop"]
		return ok && len(c.Tiles) == 1
	case 1:
		if len(c.Tiles) != 5 {
			return false
		}
		for k, hi := range map[string]float64{"FM": 16, "BKV": 1024, "SG": 64, "PF": 2} {
			v, ok := c.Tiles[k]
			if !ok || v != math.Trunc(v) || v < 0 || v > hi || (k != "PF" && v < 1) {
				return false
			}
		}
		return true
	}
	return false
}

// ensureAttnTuned makes sure a batch of B sequences in chunks of T rows has
// its attention kernel chosen where there is a choice (see above): from
// memory, from the tuning file, or timed now (and the file rewritten). A
// timing that fails keeps the coop kernel, with the reason in the choice's
// Err. g.mu is held.
func (g *GPT2) ensureAttnTuned(B, T int) {
	if g.coop == nil || g.coop.attn == nil || g.tuneMode == TuneOff || (g.tuneMode == TuneAuto && !g.autoTune) {
		return
	}
	key := g.attnTuneKey(B, T)
	if _, ok := g.attnTuned[key]; ok && (g.tuneMode != TuneRedo || g.tuneRedone[key]) {
		return
	}
	if g.attnTuned == nil {
		g.attnTuned, g.attnPicks = map[string]TuneChoice{}, map[string]*attnCoop{}
	}
	path := g.tuneFile
	file := loadTuning(g.dev, path)
	if c, ok := file[key]; ok && g.tuneMode == TuneAuto && validAttnChoice(c) {
		g.attnPicks[key] = g.attnPick(&c)
		g.attnTuned[key] = c
		return
	}
	if c, a, ok := g.borrowAttn(key, B, T); ok {
		g.attnTuned[key], g.attnPicks[key] = c, a
		return
	}
	g.noteTuning(key)
	c, err := g.timeAttn(B, T)
	c.Shape = key
	if err != nil {
		c.Tiles, c.Err = g.coop.attn.tiles.attnChoice(), err.Error()
	}
	timed := c // as timed: attnPick may put what runs in c instead
	g.attnPicks[key] = g.attnPick(&c)
	g.attnTuned[key] = c
	if g.tuneRedone != nil {
		g.tuneRedone[key] = true
	}
	if path != "" && timed.Err == "" {
		// The timed choice, even where the fastest failed the self-check:
		// the next process reads that verdict and runs the same as this
		// one, without timing again.
		file[key] = timed
		g.keepTuning(file)
	}
}

// borrowAttn is borrowTuning for attention: the choice, and what runs for
// it, of the attention this process already has with the fewest keys (T
// rounded as attnTuneKey rounds it) and then sequences above key's (B x
// T): a batch's attention of fewer rows than one already run, a run's
// last, takes it instead of being timed (a run's last window, short, is
// one sequence of fewer positions). g.mu is held.
func (g *GPT2) borrowAttn(key string, B, T int) (TuneChoice, *attnCoop, bool) {
	if g.tuneMode != TuneAuto || g.tuneEachSize {
		return TuneChoice{}, nil, false
	}
	T0 := tuneM(T)
	B0 := attnTuneB(B, T0)
	for t := T0; t <= tuneMaxRows; t *= 2 {
		for b := 1; b <= attnTuneB(math.MaxInt, t); b++ {
			if t == T0 && b <= B0 {
				continue
			}
			k := g.attnTuneKey(b, t)
			if c, ok := g.attnTuned[k]; ok && c.Borrowed == "" && c.Err == "" {
				return TuneChoice{Shape: key, Tiles: c.Tiles, Borrowed: k}, g.attnPicks[k], true
			}
		}
	}
	return TuneChoice{}, nil, false
}

// attnPick is the attention that runs for choice c (pickTiling's order:
// c's, else the next fastest of its timed candidates that is usable, else
// the default): attention_shared.wgsl (nil, always usable), the default
// tiling (which decideMatrixUnits checked), or another tiling that fits,
// stays within the loop limit and passes the self-check (attnUsable). When
// that is not c's choice, c says so (Err, and Tiles what runs); the tuning
// file keeps the choice as timed, and the next process, finding the same
// verdicts, picks the same without timing. g.mu is held.
func (g *GPT2) attnPick(c *TuneChoice) *attnCoop {
	def := g.coop.attn
	of := func(m map[string]float64) attnCoopTiles {
		t, _ := attnTilesOf(def.tiles, m) // the zero tiling: attention_shared.wgsl
		return t
	}
	choice := func(t attnCoopTiles) map[string]float64 {
		if t == (attnCoopTiles{}) {
			return map[string]float64{"coop": 0}
		}
		return t.attnChoice()
	}
	t := pickTiling(c, def.tiles, of, choice, func(t attnCoopTiles) error {
		if t == (attnCoopTiles{}) {
			return nil
		}
		return g.attnUsable(t)
	})
	if t == (attnCoopTiles{}) {
		return nil
	}
	a, _ := g.attnCoopOf(t) // compiled by attnUsable, or the default
	return a
}

// attnUsable says why tiling t of attention_coop.wgsl may not run: beyond
// the device's limits or the adapter's loop limit, a failed compile, or a
// failed self-check (attnTilingVerdict); nil where it may (then compiled,
// in attnCoopOf's cache). g.mu is held.
func (g *GPT2) attnUsable(t attnCoopTiles) error {
	if err := t.fits(g.dev.Limits()); err != nil {
		return err
	}
	if !g.attnLoopsOK(t) {
		return fmt.Errorf("coop attention %v: past the adapter's loop limit", t)
	}
	a, err := g.attnCoopOf(t)
	if err != nil {
		return err
	}
	if v := g.attnTilingVerdict(a); !v.OK {
		return fmt.Errorf("coop attention %v failed the self-check: %s", t, v.Detail)
	}
	return nil
}

// attnTilingVerdict is the self-check's attention case for a's tiling,
// cached in the verdict file by configuration, tiling and kernel text.
func (g *GPT2) attnTilingVerdict(a *attnCoop) coopVerdict {
	key := fmt.Sprintf("%s | attention %v | %s", a.tiles.cfg, a.tiles, textHash(a.k))
	v, _, _ := g.verdictFor(key, func(r *checkRun) (bool, string, error) {
		return r.attnCase(a)
	})
	return v
}

// attnCoopOf is attention_coop.wgsl compiled with tiling t: the model's
// default, else once per tiling. g.mu is held.
func (g *GPT2) attnCoopOf(t attnCoopTiles) (*attnCoop, error) {
	if def := g.coop.attn; t == def.tiles {
		return def, nil
	}
	if a, ok := g.coopAttn[t]; ok {
		return a, nil
	}
	k, err := newAttnCoopKernel(g.dev, t)
	if err != nil {
		return nil, err
	}
	if g.coopAttn == nil {
		g.coopAttn = map[attnCoopTiles]*attnCoop{}
	}
	a := &attnCoop{tiles: t, k: k}
	g.coopAttn[t] = a
	return a, nil
}

// timeAttn times attention_coop.wgsl's candidate tilings
// (attnCoopCandidates) and attention_shared.wgsl on an attention of
// attnTuneB(B, T) sequences x T rows (pos0 0, the whole causal triangle)
// with random queries, keys and values, and returns the fastest (ties: the
// earlier, the default tiling first) with every timing.
func (g *GPT2) timeAttn(B, T int) (TuneChoice, error) {
	ch := TuneChoice{}
	B = attnTuneB(B, T)
	H, KV, hd := g.cfg.NHead, g.cfg.KVHeads(), g.cfg.HeadDim()
	ld := (H + 2*KV) * hd
	r := &checkRun{g: g}
	defer r.close()
	bufs := map[string]Buf{}
	for _, b := range []struct {
		name string
		n    int
	}{{"qkv", B * T * ld}, {"kc", B * KV * T * hd}, {"vc", B * KV * T * hd}, {"out", B * T * H * hd}} {
		buf, err := r.random(b.name, activations(uint32(len(bufs)+1), b.n))
		if err != nil {
			return ch, fmt.Errorf("tune attention: %w", err)
		}
		bufs[b.name] = Buf{Buffer: buf}
	}
	params := Params{"B": float64(B), "T": float64(T), "C": float64(H * hd), "H": float64(H), "KV": float64(KV),
		"S": float64(T), "pos0": 0, "ld": float64(ld), "lscale": 1}
	type run struct {
		k      *Kernel
		cs     constSet
		groups int
		err    error
	}
	var runs []run
	var tiles []map[string]float64
	for _, t := range g.attnCoopCandidates(g.coop.attn.tiles) {
		a, err := g.attnCoopOf(t)
		r := run{err: err}
		if err == nil {
			r = run{k: a.k, groups: t.groups(B, H, T)}
		}
		runs, tiles = append(runs, r), append(tiles, t.attnChoice())
	}
	simt := attnTilesFor(g.dev, hd)
	runs = append(runs, run{k: g.attnShared(simt), cs: simt.constSet(hd), groups: simt.groups(B, H, T)})
	tiles = append(tiles, map[string]float64{"coop": 0})
	compilePipelines(g.attnJobs())
	ran := ch.timeCandidates(tiles, g.clocked(tiles, func(i int, best uint64) (uint64, error) {
		if runs[i].err != nil {
			return 0, runs[i].err
		}
		return g.timePipeline(runs[i].k, runs[i].cs, bufs, params, perWorkgroup(runs[i].groups), best)
	}))
	if !ran {
		return ch, fmt.Errorf("tune attention: no kernel ran: %s", ch.Candidates[0].Err)
	}
	return ch, nil
}

// attnJobs are the pipelines timeAttn times: attention_coop.wgsl's
// candidate tilings (those that compile) and attention_shared.wgsl. g.mu is
// held.
func (g *GPT2) attnJobs() []pipelineJob {
	var jobs []pipelineJob
	for _, t := range g.attnCoopCandidates(g.coop.attn.tiles) {
		if a, err := g.attnCoopOf(t); err == nil {
			jobs = append(jobs, pipelineJob{a.k, constSet{}})
		}
	}
	simt := attnTilesFor(g.dev, g.cfg.HeadDim())
	return append(jobs, pipelineJob{g.attnShared(simt), simt.constSet(g.cfg.HeadDim())})
}

// AttentionTuning is the autotuner's attention choices of this model (see
// ensureAttnTuned), by shape: Tiles {"coop": 1, ...} where a tiling of
// attention_coop.wgsl was fastest.
func (g *GPT2) AttentionTuning() []TuneChoice {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]TuneChoice, 0, len(g.attnTuned))
	for _, c := range g.attnTuned {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b TuneChoice) int { return strings.Compare(a.Shape, b.Shape) })
	return out
}

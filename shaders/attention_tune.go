package shaders

import (
	"fmt"
	"slices"
	"strings"
)

// The autotuner's choice between the attention kernels: where the matrix
// units are in use with attention_coop.wgsl, a hardware GPU in TuneAuto
// (any adapter in TuneRedo) times it and attention_shared.wgsl once at a
// batch's attention shape and runs the faster; the choice is kept in the
// device's tuning file beside the matmuls' (shapes "attn ...", Tiles
// {"coop": 1} or {"coop": 0}).

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
// choice: a shape "attn ..." with Tiles {"coop": 0 or 1}.
func validAttnChoice(c TuneChoice) bool {
	v, ok := c.Tiles["coop"]
	return strings.HasPrefix(c.Shape, "attn ") && len(c.Tiles) == 1 && ok && (v == 0 || v == 1)
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
		g.attnTuned = map[string]TuneChoice{}
	}
	path := g.tuneFile
	file := loadTuning(g.dev, path)
	if c, ok := file[key]; ok && g.tuneMode == TuneAuto && validAttnChoice(c) {
		g.attnTuned[key] = c
		return
	}
	g.noteTuning(key)
	c, err := g.timeAttn(B, T)
	c.Shape = key
	if err != nil {
		c.Tiles, c.Err = map[string]float64{"coop": 1}, err.Error()
	}
	g.attnTuned[key] = c
	if g.tuneRedone != nil {
		g.tuneRedone[key] = true
	}
	if path != "" && c.Err == "" {
		file[key] = c
		_ = saveTuning(g.dev, path, file) // best effort, as ensureTuned's
	}
}

// timeAttn times attention_coop.wgsl and attention_shared.wgsl on an
// attention of attnTuneB(B, T) sequences x T rows (pos0 0, the whole causal
// triangle) with random queries, keys and values, and returns the faster
// (ties: the coop kernel) with both timings.
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
		buf, err := r.buffer(b.name, randomF32(uint32(len(bufs)+1), b.n))
		if err != nil {
			return ch, fmt.Errorf("tune attention: %w", err)
		}
		bufs[b.name] = Buf{Buffer: buf}
	}
	params := Params{"B": float64(B), "T": float64(T), "C": float64(H * hd), "H": float64(H), "KV": float64(KV),
		"S": float64(T), "pos0": 0, "ld": float64(ld)}
	simt := attnTilesFor(g.dev.AdapterInfo(), g.dev.Limits(), hd)
	a := g.coop.attn
	runs := []struct {
		k      *Kernel
		cs     constSet
		groups int
	}{{a.k, constSet{}, a.tiles.groups(B, H, T)}, {g.attentionShared, simt.constSet(hd), simt.groups(B, H, T)}}
	compilePipelines([]pipelineJob{{runs[0].k, runs[0].cs}, {runs[1].k, runs[1].cs}})
	ran := ch.timeCandidates([]map[string]float64{{"coop": 1}, {"coop": 0}}, func(i int, best uint64) (uint64, error) {
		return g.timePipeline(runs[i].k, runs[i].cs, bufs, params, perWorkgroup(runs[i].groups), best)
	})
	if !ran {
		return ch, fmt.Errorf("tune attention: no kernel ran: %s", ch.Candidates[0].Err)
	}
	return ch, nil
}

// AttentionTuning is the autotuner's attention choices of this model (see
// ensureAttnTuned), by shape: Tiles {"coop": 1} where attention_coop.wgsl
// was faster.
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

package shaders

import "sync"

// compileAhead starts creating, in the background, the pipelines of every
// candidate the tuning round of a batch of B sequences in chunks of T rows
// (rows = B x T) will time: the weight matmuls', the LM head's and
// attention's, for the shapes that memory and the tuning file lack and that
// borrow nothing (borrowTuning). The tuners time one shape after another,
// each compiling its own candidates first (compilePipelines), so without
// this a round compiled in as many waves as it has shapes, each as long as
// its slowest pipeline and using only as many cores as the shape has
// candidates (an H200's driver took some 2.5 s a pipeline from a cold shader
// cache, for about 60 of them); with it every core compiles the round's
// pipelines in the order they are timed, and the timing of the first shapes
// overlaps the compiling of the rest. A tuner that asks for a pipeline
// under way waits for it (Kernel.pipeline makes each once). The function
// returned waits for them all: SubmitWith calls it after the round, so that
// nothing compiles once the batch is recorded or the model is closed. The
// LM head's second round (its fastest tiling with other group sizes) is
// known only after the first, and compiles then. round reports whether
// there is a round: false where the tuners will time nothing. g.mu is held.
func (g *GPT2) compileAhead(B, T int) (wait func(), round bool) {
	jobs := g.roundJobs(B, T)
	if len(jobs) == 0 {
		return func() {}, false
	}
	var wg sync.WaitGroup
	wg.Go(func() { compilePipelines(jobs) })
	return wg.Wait, true
}

// roundJobs are the pipelines compileAhead compiles, in the order the
// tuners time them. g.mu is held.
func (g *GPT2) roundJobs(B, T int) []pipelineJob {
	if g.tuneMode == TuneOff || (g.tuneMode == TuneAuto && !g.autoTune) {
		return nil
	}
	rows := B * T
	var file map[string]TuneChoice
	inFile := func(key string, ok func(TuneChoice) bool) bool {
		if file == nil {
			file = loadTuning(g.dev, g.tuneFile)
		}
		c, have := file[key]
		return have && ok(c)
	}
	anyChoice := func(TuneChoice) bool { return true }
	// timed says whether the round times key: TuneRedo what it has not
	// redone; TuneAuto what is in neither memory nor the file and borrows
	// nothing.
	timed := func(key string, inMemory bool, fileOK func(TuneChoice) bool, borrows func() bool) bool {
		if g.tuneMode == TuneRedo {
			return !g.tuneRedone[key]
		}
		return !inMemory && !inFile(key, fileOK) && !borrows()
	}
	var jobs []pipelineJob
	if ck := g.coop; ck != nil {
		for _, sh := range g.matmulShapes() {
			key := coopTuneKey(ck.cfg, rows, sh.N, sh.K)
			_, picked := ck.picks[key]
			_, tuned := g.tuned[key]
			if timed(key, picked || tuned, anyChoice, func() bool {
				_, ok := g.borrowTuning(key, rows, func(m int) string { return coopTuneKey(ck.cfg, m, sh.N, sh.K) })
				return ok
			}) {
				jobs = append(jobs, g.coopJobs(ck, sh, g.coopCandidates(ck, sh.K))...)
			}
		}
		C, V := g.cfg.NEmbd, g.cfg.VocabSize
		key := coopHeadKey(ck.cfg, rows, C, V)
		_, picked := ck.picks[key]
		_, tuned := g.tuned[key]
		if timed(key, picked || tuned, anyChoice, func() bool {
			_, ok := g.borrowTuning(key, rows, func(m int) string { return coopHeadKey(ck.cfg, m, C, V) })
			return ok
		}) {
			jobs = append(jobs, g.coopHeadJobs(ck, g.coopHeadCandidates(ck))...)
		}
		if ck.attn != nil {
			key := g.attnTuneKey(B, T)
			_, tuned := g.attnTuned[key]
			if timed(key, tuned, validAttnChoice, func() bool {
				_, _, ok := g.borrowAttn(key, B, T)
				return ok
			}) {
				jobs = append(jobs, g.attnJobs()...)
			}
		}
		return jobs
	}
	if !g.sharedMatmul {
		return nil
	}
	for _, sh := range g.matmulShapes() {
		if sh.K%4 != 0 || sh.N%4 != 0 {
			continue // matmul.wgsl serves it
		}
		key := tuneKey(g.f16, rows, sh.N, sh.K)
		_, tuned := g.tuned[key]
		if timed(key, tuned, func(c TuneChoice) bool { return tilesOf(c.Tiles).fits(g.dev) == nil }, func() bool {
			_, ok := g.borrowTuning(key, rows, func(m int) string { return tuneKey(g.f16, m, sh.N, sh.K) })
			return ok
		}) {
			jobs = append(jobs, g.matmulJobs(sh, g.matmulCandidatesFit())...)
		}
	}
	return jobs
}

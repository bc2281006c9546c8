package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// Merge adds the results of the shards of one run (each a Result with Shard
// set, as --shard I/N writes them) into the result of the whole run: the
// exact sums added (so the merged result has the bits of the run unsharded),
// the counts exactly. It refuses results of different runs, naming what
// differs (the model's weights, the corpus, the tokenizer, the method, ctx,
// stride, BOS each window, max tokens, split, separator, precision, the shard
// count), a missing
// or doubled shard, naming it, and numbers that no run writes (CheckNumbers).
// The merged Seconds is the longest shard's (they ran in parallel).
func Merge(rs []*Result) (*Result, error) {
	if len(rs) == 0 {
		return nil, errors.New("merge: no results")
	}
	for i, r := range rs {
		if r == nil || r.Shard == nil {
			return nil, fmt.Errorf("merge: result %d is not a shard (no \"shard\" field): nothing to merge it with", i+1)
		}
		if r.Interrupted {
			return nil, fmt.Errorf("merge: shard %v was interrupted; rerun it", *r.Shard)
		}
		if err := r.Shard.Check(); err != nil || *r.Shard == (Shard{}) {
			return nil, fmt.Errorf("merge: result %d has an invalid shard %v", i+1, *r.Shard)
		}
		if err := r.CheckNumbers(); err != nil {
			return nil, fmt.Errorf("merge: shard %v: %w", *r.Shard, err)
		}
	}
	first := rs[0]
	n := first.Shard.Count
	byIndex := map[int]*Result{}
	for _, r := range rs {
		if err := sameRun(first, r); err != nil {
			return nil, fmt.Errorf("merge: shard %v and shard %v are of different runs: %w", *first.Shard, *r.Shard, err)
		}
		if byIndex[r.Shard.Index] != nil {
			return nil, fmt.Errorf("merge: shard %v given twice", *r.Shard)
		}
		byIndex[r.Shard.Index] = r
	}
	if len(byIndex) < n {
		var missing []string
		for i := 0; i < n && len(missing) < 10; i++ {
			if byIndex[i] == nil {
				missing = append(missing, Shard{i, n}.String())
			}
		}
		more := ""
		if n-len(byIndex) > len(missing) {
			more = fmt.Sprintf(" and %d more", n-len(byIndex)-len(missing))
		}
		return nil, fmt.Errorf("merge: missing shard %s%s of %d", strings.Join(missing, ", "), more, n)
	}

	out := *first
	out.Shard = nil
	var sums model.LossSums
	bytes, samples := 0, 0
	var devices []string
	out.Seconds = 0
	for i := range n {
		r := byIndex[i]
		if sums.Count > maxCount-r.Tokens || bytes > maxCount-r.ScoredBytes || samples > maxCount-r.Samples {
			return nil, errors.New("merge: the shards' counts add up beyond what any run scores")
		}
		sums.Add(r.Sums())
		bytes += r.ScoredBytes
		samples += r.Samples
		out.Seconds = max(out.Seconds, r.Seconds)
		if !slices.Contains(devices, r.Device) {
			devices = append(devices, r.Device)
		}
		if r.Provenance != nil && out.Provenance != nil && r.Provenance.Start.Before(out.Provenance.Start) {
			p := *out.Provenance
			p.Start = r.Provenance.Start
			out.Provenance = &p
		}
	}
	out.Device = strings.Join(devices, " + ")
	out.Fill(sums, bytes, first.BitsPerByte != 0 || bytes > 0)
	out.Samples = samples
	if sums.Count == 0 {
		return nil, errors.New("merge: the shards scored no tokens")
	}
	return &out, nil
}

// maxCount bounds the counts of a result read from a file (targets, bytes,
// samples, tokens): far above any corpus (2^50 is a petabyte of text), far
// below overflow when shards are added.
const maxCount = 1 << 50

// CheckNumbers reports numbers in res that no run writes: negative or huge
// counts, non-finite or negative sums, a squared sum below what the sum
// implies, exact sums missing or not matching their float64 roundings, metrics
// that do not follow from the sums. It guards what merge and resume read
// from files.
func (res *Result) CheckNumbers() error {
	for _, c := range []struct {
		name string
		v    int
	}{{"tokens", res.Tokens}, {"input_tokens", res.InputTokens}, {"words", res.Words}, {"scored_bytes", res.ScoredBytes}, {"samples", res.Samples}, {"ctx", res.Ctx}, {"stride", res.Stride}, {"total_tokens", res.TotalTokens}} {
		if c.v < 0 || c.v > maxCount {
			return fmt.Errorf("%s %d is out of range", c.name, c.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"nll_sum", res.NLLSum}, {"nll_sumsq", res.NLLSumSq}, {"mean_nll", res.MeanNLL}, {"stderr", res.StdErr}, {"seconds", res.Seconds}, {"bits_per_byte", res.BitsPerByte}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s %v is not a finite number", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"nll_sumsq", res.NLLSumSq}, {"seconds", res.Seconds}, {"stderr", res.StdErr}, {"bits_per_byte", res.BitsPerByte}} {
		if f.v < 0 {
			return fmt.Errorf("%s %v is below zero", f.name, f.v)
		}
	}
	if got := res.NLLSumExact.Float64(); got != res.NLLSum || !res.NLLSumExact.IsFinite() {
		return fmt.Errorf("nll_sum %v does not match nll_sum_exact %q (missing, or one was edited)", res.NLLSum, res.NLLSumExact.String())
	}
	if got := res.NLLSumSqExact.Float64(); got != res.NLLSumSq || !res.NLLSumSqExact.IsFinite() {
		return fmt.Errorf("nll_sumsq %v does not match nll_sumsq_exact %q (missing, or one was edited)", res.NLLSumSq, res.NLLSumSqExact.String())
	}
	// Cauchy-Schwarz: sum² <= n·sumsq, with room for rounding.
	if n := float64(res.Tokens); res.NLLSum*res.NLLSum > n*res.NLLSumSq*(1+1e-9)+1e-300 {
		return fmt.Errorf("nll_sum %v and nll_sumsq %v cannot both come from %d tokens", res.NLLSum, res.NLLSumSq, res.Tokens)
	}
	if res.Tokens > 0 {
		if mean := res.NLLSum / float64(res.Tokens); math.Abs(mean-res.MeanNLL) > 1e-12*max(1, math.Abs(mean)) {
			return fmt.Errorf("mean_nll %v is not nll_sum / tokens = %v", res.MeanNLL, mean)
		}
	}
	return nil
}

// sameRun reports the first thing that differs between two shard results.
func sameRun(a, b *Result) error {
	type field struct {
		name string
		x, y string
	}
	s := func(v any) string { return fmt.Sprint(v) }
	fs := []field{
		{"model", a.Model, b.Model},
		{"data", a.Data, b.Data},
		{"mode", a.Mode, b.Mode},
		{"BOS each window", s(a.BOSEachWindow), s(b.BOSEachWindow)},
		{"ctx", s(a.Ctx), s(b.Ctx)},
		{"stride", s(a.Stride), s(b.Stride)},
		{"input tokens", s(a.InputTokens), s(b.InputTokens)},
		{"words", s(a.Words), s(b.Words)},
		{"shard count", s(a.Shard.Count), s(b.Shard.Count)},
	}
	if a.Config != nil && b.Config != nil {
		fs = append(fs,
			field{"max tokens", s(a.Config.MaxTokens), s(b.Config.MaxTokens)},
			field{"split", a.Config.Split, b.Config.Split},
			field{"separator", fmt.Sprintf("%q", a.Config.Separator), fmt.Sprintf("%q", b.Config.Separator)},
			field{"precision", a.Config.Precision, b.Config.Precision},
		)
	} else if (a.Config == nil) != (b.Config == nil) {
		return errors.New("one has a config block and the other not")
	}
	if a.Provenance != nil && b.Provenance != nil {
		fs = append(fs,
			field{"model weights (sha256)", a.Provenance.Model.WeightsSHA256, b.Provenance.Model.WeightsSHA256},
			field{"corpus (sha256)", a.Provenance.Corpus.SHA256, b.Provenance.Corpus.SHA256},
			field{"tokenizer", a.Provenance.Tokenizer, b.Provenance.Tokenizer},
		)
	} else if (a.Provenance == nil) != (b.Provenance == nil) {
		return errors.New("one has a provenance block and the other not")
	}
	for _, f := range fs {
		if f.x != f.y {
			return fmt.Errorf("%s %s vs %s", f.name, cmp.Or(f.x, `""`), cmp.Or(f.y, `""`))
		}
	}
	return nil
}

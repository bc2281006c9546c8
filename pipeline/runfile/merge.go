package runfile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// Merge adds the results of the shards of one run (each a Result with Shard
// set, as --shard I/N writes them) into the result of the whole run: the
// exact sums added (so the merged result has the bits of the run unsharded),
// the counts exactly. It refuses results of different runs, naming what
// differs (the model's weights, the corpus, the tokenizer, the method, ctx,
// stride, BOS each window, max tokens, split, separator, precision, the shard
// count, how the bytes were counted), a missing
// or doubled shard, naming it, and numbers that no run writes (CheckNumbers).
// The merged Seconds is the longest shard's (they ran in parallel).
func Merge(rs []*pipeline.Result) (*pipeline.Result, error) { return MergeFiles(rs, nil) }

// MergeFiles is Merge for results read from files: names[i] is rs[i]'s file,
// which its errors name beside the shard (among dozens of shard files, the
// one at fault). names may be nil.
func MergeFiles(rs []*pipeline.Result, names []string) (*pipeline.Result, error) {
	if len(rs) == 0 {
		return nil, errors.New("merge: no results")
	}
	file := fileNamer(names, "result")
	for i, r := range rs {
		if r == nil || r.Shard == nil {
			return nil, fmt.Errorf("merge: %s is not a shard (no \"shard\" field): nothing to merge it with", file(i))
		}
		if r.Interrupted {
			return nil, fmt.Errorf("merge: shard %v (%s) was interrupted; rerun it", *r.Shard, file(i))
		}
		if err := r.Shard.Check(); err != nil || *r.Shard == (pipeline.Shard{}) {
			return nil, fmt.Errorf("merge: %s has an invalid shard %v", file(i), *r.Shard)
		}
		if err := r.CheckNumbers(); err != nil {
			return nil, fmt.Errorf("merge: shard %v (%s): %w", *r.Shard, file(i), err)
		}
	}
	first := rs[0]
	n := first.Shard.Count
	byIndex := map[int]*pipeline.Result{}
	fileOf := map[int]int{} // shard index -> position in rs
	for i, r := range rs {
		if err := sameRun(first, r); err != nil {
			return nil, fmt.Errorf("merge: shard %v (%s) and shard %v (%s) are of different runs: %w", *first.Shard, file(0), *r.Shard, file(i), err)
		}
		if byIndex[r.Shard.Index] != nil {
			return nil, fmt.Errorf("merge: shard %v given twice (%s and %s)", *r.Shard, file(fileOf[r.Shard.Index]), file(i))
		}
		byIndex[r.Shard.Index], fileOf[r.Shard.Index] = r, i
	}
	if len(byIndex) < n {
		return nil, fmt.Errorf("merge: missing shard %s of %d", missingShards(n, len(byIndex), func(i int) bool { return byIndex[i] != nil }), n)
	}

	out := *first
	out.Shard = nil
	out.Timings = nil // the shards' own, not the merged run's
	var sums model.LossSums
	bytes, samples := 0, 0
	var devices []string
	out.Seconds = 0
	for i := range n {
		r := byIndex[i]
		if sums.Count > pipeline.MaxCount-r.Tokens || bytes > pipeline.MaxCount-r.ScoredBytes || samples > pipeline.MaxCount-r.Samples {
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

// fileNamer names the i-th input of a merge: its file where names has it,
// else "<kind> i+1".
func fileNamer(names []string, kind string) func(i int) string {
	return func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("%s %d", kind, i+1)
	}
}

// sameRun reports the first thing that differs between two shard results.
// Where both name their model's weights and corpus by sha256, those are
// compared and the names they were given by are not: shards run on
// machines that keep the same model and corpus at other paths are shards of
// one run.
func sameRun(a, b *pipeline.Result) error {
	type field struct {
		name string
		x, y string
	}
	s := func(v any) string { return fmt.Sprint(v) }
	var fs []field
	if pa, pb := a.Provenance, b.Provenance; pa == nil || pb == nil || pa.Model.WeightsSHA256 == "" || pb.Model.WeightsSHA256 == "" {
		fs = append(fs, field{"model", a.Model, b.Model})
	}
	if pa, pb := a.Provenance, b.Provenance; pa == nil || pb == nil || pa.Corpus.SHA256 == "" || pb.Corpus.SHA256 == "" {
		fs = append(fs, field{"data", a.Data, b.Data})
	}
	fs = append(fs, []field{
		{"mode", a.Mode, b.Mode},
		{"BOS each window", s(a.BOSEachWindow), s(b.BOSEachWindow)},
		{"ctx", s(a.Ctx), s(b.Ctx)},
		{"stride", s(a.Stride), s(b.Stride)},
		{"input tokens", s(a.InputTokens), s(b.InputTokens)},
		{"words", s(a.Words), s(b.Words)},
		{"shard count", s(a.Shard.Count), s(b.Shard.Count)},
		{"bytes counted (a build before the text-only count wrote \"\")", a.BytesCounted, b.BytesCounted},
	}...)
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

// missingShards names the shards of n that present says are not there (the
// first ten, then how many more), of which there are n - have.
func missingShards(n, have int, present func(i int) bool) string {
	var missing []string
	for i := 0; i < n && len(missing) < 10; i++ {
		if !present(i) {
			missing = append(missing, pipeline.Shard{Index: i, Count: n}.String())
		}
	}
	more := ""
	if n-have > len(missing) {
		more = fmt.Sprintf(" and %d more", n-have-len(missing))
	}
	return strings.Join(missing, ", ") + more
}

package runfile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// MergePerToken merges the per-token files of the shards of one run (each
// written by --shard I/N --per-token) into the per-token file of the whole
// run: every record in corpus order, the header's sums its records' (exact,
// so those of an unsharded run). It refuses files of different runs (what Merge
// compares, plus the tokenizer and the top log-probabilities kept), a file
// that is not a shard's, and a missing or doubled shard, naming it.
func MergePerToken(files []*PerTokenFile) (*PerTokenFile, error) {
	return MergePerTokenFiles(files, nil)
}

// MergePerTokenFiles is MergePerToken whose errors name each input by
// names[i], its file, beside its shard. names may be nil.
func MergePerTokenFiles(files []*PerTokenFile, names []string) (*PerTokenFile, error) {
	if len(files) == 0 {
		return nil, errors.New("merge per-token: no files")
	}
	file := fileNamer(names, "file")
	for i, f := range files {
		if f == nil || f.Header.Shard == nil {
			return nil, fmt.Errorf("merge per-token: %s is not a shard's (its header has no shard)", file(i))
		}
		// Each header's shard is checked before it indexes anything: a
		// damaged file's count (0, negative, huge) must not size anything.
		if s := *f.Header.Shard; s.Check() != nil || s == (pipeline.Shard{}) {
			return nil, fmt.Errorf("merge per-token: %s has an invalid shard %v", file(i), s)
		}
	}
	first := files[0].Header
	n := first.Shard.Count
	byIndex := map[int]*PerTokenFile{}
	fileOf := map[int]int{} // shard index -> position in files
	total := 0
	for i, f := range files {
		h := f.Header
		if err := samePerTokenRun(first, h); err != nil {
			return nil, fmt.Errorf("merge per-token: shard %v (%s) and shard %v (%s) are of different runs: %w", *first.Shard, file(0), *h.Shard, file(i), err)
		}
		if byIndex[h.Shard.Index] != nil {
			return nil, fmt.Errorf("merge per-token: shard %v given twice (%s and %s)", *h.Shard, file(fileOf[h.Shard.Index]), file(i))
		}
		byIndex[h.Shard.Index], fileOf[h.Shard.Index] = f, i
		total += len(f.Tokens)
	}
	if len(byIndex) < n {
		return nil, fmt.Errorf("merge per-token: missing shard %s of %d", missingShards(n, len(byIndex), func(i int) bool { return byIndex[i] != nil }), n)
	}

	out := &PerTokenFile{Header: first, Tokens: make([]pipeline.TokenNLL, 0, total)}
	out.Header.Shard = nil
	for i := range n {
		f := byIndex[i]
		out.Tokens = append(out.Tokens, f.Tokens...)
		if p := f.Header.Provenance; p != nil && out.Header.Provenance != nil && p.Start.Before(out.Header.Provenance.Start) {
			q := *out.Header.Provenance
			q.Start = p.Start
			out.Header.Provenance = &q
		}
	}
	slices.SortFunc(out.Tokens, func(a, b pipeline.TokenNLL) int { return cmp.Or(cmp.Compare(a.Doc, b.Doc), cmp.Compare(a.Pos, b.Pos)) })
	for i := 1; i < len(out.Tokens); i++ {
		if p, t := out.Tokens[i-1], out.Tokens[i]; p.Doc == t.Doc && p.Pos == t.Pos {
			return nil, fmt.Errorf("merge per-token: two shards score document %d position %d: not shards of one run", t.Doc, t.Pos)
		}
	}
	out.setSum()
	return out, nil
}

// samePerTokenRun reports the first thing that differs between the runs of
// two per-token headers.
func samePerTokenRun(a, b PerTokenHeader) error {
	ra := &pipeline.Result{Model: a.Model, Data: a.Data, Mode: a.Mode, Ctx: a.Ctx, Stride: a.Stride, BOSEachWindow: a.BOSEachWindow,
		Shard: a.Shard, Config: a.Config, Provenance: a.Provenance}
	rb := &pipeline.Result{Model: b.Model, Data: b.Data, Mode: b.Mode, Ctx: b.Ctx, Stride: b.Stride, BOSEachWindow: b.BOSEachWindow,
		Shard: b.Shard, Config: b.Config, Provenance: b.Provenance}
	if err := sameRun(ra, rb); err != nil {
		return err
	}
	if a.Tokenizer != b.Tokenizer {
		return fmt.Errorf("tokenizer %s vs %s", a.Tokenizer, b.Tokenizer)
	}
	if a.VocabSize != b.VocabSize {
		return fmt.Errorf("vocabulary %d vs %d", a.VocabSize, b.VocabSize)
	}
	if a.TopLogprobs != b.TopLogprobs {
		return fmt.Errorf("top logprobs %d vs %d", a.TopLogprobs, b.TopLogprobs)
	}
	return nil
}

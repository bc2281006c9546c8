package runfile

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/internal/jsonformat"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// Comparison is the per-token report of two runs of the same corpus and
// tokenizer (wgpu-eval compare A B). Differences are B − A, in nats per token.
// The JSON names are part of the CLI's output.
type Comparison struct {
	A, B     string  `json:"-"` // names of the runs, for messages
	Targets  int     `json:"targets"`
	MeanNLLA float64 `json:"mean_nll_a"`
	MeanNLLB float64 `json:"mean_nll_b"`
	// MeanDiff is mean(B − A) over the targets; DiffStdErr its paired standard
	// error, the sample standard deviation of the per-token differences over
	// sqrt(Targets).
	MeanDiff   float64 `json:"mean_diff"`
	DiffStdErr float64 `json:"diff_stderr"`
	// PPLRatio is PPL(B)/PPL(A) = exp(mean NLL_B − mean NLL_A) = exp(MeanDiff),
	// as llama.cpp's KL-divergence report gives it; PPLRatioStdErr its standard
	// error, PPLRatio·DiffStdErr (the delta method); both at most 1.8e308
	// (math.MaxFloat64).
	PPLRatio       float64 `json:"ppl_ratio"`
	PPLRatioStdErr float64 `json:"ppl_ratio_stderr"`
	MaxAbsDiff     float64 `json:"max_abs_diff"`
	// Identical is the number of targets whose two NLLs are bit-identical;
	// IdenticalShare that over Targets.
	Identical      int         `json:"identical"`
	IdenticalShare float64     `json:"identical_share"`
	Top            []TokenDiff `json:"top"`     // the largest |B − A|, largest first
	Verdict        string      `json:"verdict"` // one line
	// Notes name run options that differ but leave the targets the same (ctx,
	// stride, BOS each window, device, precision, model).
	Notes []string `json:"notes,omitempty"`
	// KL is set when both files carry top log-probabilities (--top-logprobs).
	KL *KLStats `json:"kl,omitempty"`
}

// MarshalJSON is the Comparison's JSON, marked with ComparisonFormat and
// ComparisonFormatVersion.
func (c Comparison) MarshalJSON() ([]byte, error) {
	type fields Comparison // without this method
	return jsonformat.Marshal(ComparisonFormat, ComparisonFormatVersion, fields(c))
}

// ComparisonFormat and ComparisonFormatVersion mark a Comparison's JSON
// (compare --json): its first keys are "format" and "format_version", as
// a result's are (pipeline.ResultFormat).
const (
	ComparisonFormat        = "wgpu-eval compare"
	ComparisonFormatVersion = 1
)

// TokenDiff is one target of a Comparison.
type TokenDiff struct {
	Doc   int     `json:"doc"`
	Pos   int     `json:"pos"`
	Token int32   `json:"token"`
	Text  string  `json:"text,omitempty"` // the token decoded, when the tokenizer is known
	NLLA  float32 `json:"nll_a"`
	NLLB  float32 `json:"nll_b"`
	Diff  float64 `json:"diff"` // NLLB − NLLA
}

// Compare reports how b's per-token NLLs differ from a's, with the top
// largest differences. It refuses files of different corpora, tokenizers or
// targets, naming what differs. decode, when not nil, gives a token's text.
func Compare(a, b *PerTokenFile, top int, decode func(int32) string) (*Comparison, error) {
	if err := sameTargets(a, b); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	// Top is a list in the JSON even when empty (identical runs, --top 0).
	c := &Comparison{Targets: len(a.Tokens), Notes: notes(a.Header, b.Header), Top: []TokenDiff{}}
	n := float64(c.Targets)
	var sa, sb, sd, sdd float64
	diffs := make([]TokenDiff, len(a.Tokens))
	for i, x := range a.Tokens {
		y := b.Tokens[i]
		d := float64(y.NLL) - float64(x.NLL)
		sa += float64(x.NLL)
		sb += float64(y.NLL)
		sd += d
		sdd += d * d
		if math.Float32bits(x.NLL) == math.Float32bits(y.NLL) {
			c.Identical++
		}
		c.MaxAbsDiff = max(c.MaxAbsDiff, math.Abs(d))
		diffs[i] = TokenDiff{Doc: x.Doc, Pos: x.Pos, Token: x.Token, NLLA: x.NLL, NLLB: y.NLL, Diff: d}
	}
	if c.Targets > 0 {
		c.MeanNLLA, c.MeanNLLB, c.MeanDiff = sa/n, sb/n, sd/n
		c.IdenticalShare = float64(c.Identical) / n
	}
	c.DiffStdErr = pipeline.StdErr(sd, sdd, c.Targets)
	// The ratio of perplexities is a function of the mean difference alone,
	// r = exp(MeanDiff), so its standard error follows from the paired one by
	// the delta method: SE(r) ≈ |dr/dMeanDiff|·SE(MeanDiff) = r·DiffStdErr.
	// Both at most the largest float64, as a result's perplexity: a mean
	// difference past ln(MaxFloat64) would give +Inf, which JSON cannot hold.
	c.PPLRatio = min(math.Exp(c.MeanDiff), math.MaxFloat64)
	c.PPLRatioStdErr = min(c.PPLRatio*c.DiffStdErr, math.MaxFloat64)
	slices.SortStableFunc(diffs, func(p, q TokenDiff) int { return cmp.Compare(math.Abs(q.Diff), math.Abs(p.Diff)) })
	for _, d := range diffs[:min(max(top, 0), len(diffs))] {
		if d.Diff == 0 {
			break
		}
		if decode != nil {
			d.Text = decode(d.Token)
		}
		c.Top = append(c.Top, d)
	}
	switch ka, kb := a.Header.TopLogprobs, b.Header.TopLogprobs; {
	case ka > 0 && kb > 0:
		c.KL = klStats(a, b)
	case ka > 0 || kb > 0:
		c.Notes = append(c.Notes, fmt.Sprintf("top logprobs: %d in A, %d in B: no KL divergence without both", ka, kb))
	}
	c.Verdict = verdict(c)
	return c, nil
}

// verdict is the one-line summary of c.
func verdict(c *Comparison) string {
	switch {
	case c.Targets == 0:
		return "nothing to compare: no targets"
	case c.Identical == c.Targets:
		return fmt.Sprintf("identical: all %d per-token NLLs are bit-identical", c.Targets)
	case math.Abs(c.MeanDiff) <= 2*c.DiffStdErr:
		return fmt.Sprintf("no significant difference: B − A = %+.3g ± %.2g nats/token (paired SE); largest per-token difference %.3g",
			c.MeanDiff, c.DiffStdErr, c.MaxAbsDiff)
	}
	word := "worse"
	if c.MeanDiff < 0 {
		word = "better"
	}
	z := math.Inf(1)
	if c.DiffStdErr > 0 {
		z = math.Abs(c.MeanDiff) / c.DiffStdErr
	}
	ppl := fmt.Sprintf("PPL %+.3g%%", 100*(c.PPLRatio-1))
	if c.PPLRatio >= math.MaxFloat64 {
		ppl = fmt.Sprintf("PPL ratio >%.4g", math.MaxFloat64)
	}
	return fmt.Sprintf("B is %s than A by %.3g nats/token (%.1f paired SEs; %s); largest per-token difference %.3g",
		word, math.Abs(c.MeanDiff), z, ppl, c.MaxAbsDiff)
}

// sameTargets reports why a and b cannot be compared token by token.
func sameTargets(a, b *PerTokenFile) error {
	err := sameTargetList(a, b)
	ha, hb := a.Header, b.Header
	switch {
	case !errors.Is(err, errDifferentTargets): // none, or a difference the hints below do not explain
	case ha.BOSEachWindow != hb.BOSEachWindow:
		// The likeliest cause: the stream's first token is a target only with a BOS before each window.
		err = fmt.Errorf("%w (BOS each window: %v in A, %v in B)", err, ha.BOSEachWindow, hb.BOSEachWindow)
	case ha.Mode != "documents" && ha.Config != nil && hb.Config != nil && (ha.Config.Ctx != hb.Config.Ctx || ha.Config.Stride != hb.Config.Stride):
		// A window's first token is context, never a target: other windows, other targets.
		err = fmt.Errorf("%w (windows of ctx %d, stride %d in A; ctx %d, stride %d in B: the first token of each window is only context)",
			err, ha.Config.Ctx, ha.Config.Stride, hb.Config.Ctx, hb.Config.Stride)
	}
	return err
}

// errDifferentTargets is sameTargetList's error when the runs agree on
// everything but the targets themselves (their count or their tokens).
var errDifferentTargets = errors.New("different targets")

// sameTargetList is sameTargets without the hint.
func sameTargetList(a, b *PerTokenFile) error {
	ha, hb := a.Header, b.Header
	type field struct {
		name string
		x, y any
	}
	fields := []field{{"tokenizer", ha.Tokenizer, hb.Tokenizer}, {"mode", ha.Mode, hb.Mode}}
	if pa, pb := ha.Provenance, hb.Provenance; pa != nil && pb != nil {
		fields = append(fields, field{"corpus (sha256)", pa.Corpus.SHA256, pb.Corpus.SHA256})
	} else {
		fields = append(fields, field{"data", ha.Data, hb.Data})
	}
	if ca, cb := ha.Config, hb.Config; ca != nil && cb != nil {
		fields = append(fields, field{"split", ca.Split, cb.Split}, field{"separator", fmt.Sprintf("%q", ca.Separator), fmt.Sprintf("%q", cb.Separator)},
			field{"max tokens", ca.MaxTokens, cb.MaxTokens})
	}
	fields = append(fields, field{"shard", shardName(ha.Shard), shardName(hb.Shard)})
	for _, f := range fields {
		if f.x != f.y {
			return fmt.Errorf("different %s: %v in A, %v in B", f.name, f.x, f.y)
		}
	}
	if len(a.Tokens) != len(b.Tokens) {
		return fmt.Errorf("%w: %d in A, %d in B", errDifferentTargets, len(a.Tokens), len(b.Tokens))
	}
	for i, x := range a.Tokens {
		y := b.Tokens[i]
		if x.Doc != y.Doc || x.Pos != y.Pos || x.Token != y.Token {
			return fmt.Errorf("%w: target %d is token %d at document %d position %d in A, token %d at document %d position %d in B",
				errDifferentTargets, i, x.Token, x.Doc, x.Pos, y.Token, y.Doc, y.Pos)
		}
	}
	return nil
}

// shardName names a per-token file's shard for comparing: 0/1 (the whole
// corpus) is none.
func shardName(s *pipeline.Shard) string {
	if s == nil || s.Count <= 1 {
		return "none"
	}
	return s.String()
}

// notes names what differs between two comparable runs.
func notes(a, b PerTokenHeader) []string {
	var out []string
	add := func(name string, x, y any) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %v in A, %v in B", name, x, y))
		}
	}
	add("model", a.Model, b.Model)
	add("ctx", a.Ctx, b.Ctx)
	add("stride", a.Stride, b.Stride)
	add("BOS each window", a.BOSEachWindow, b.BOSEachWindow)
	if a.Provenance != nil && b.Provenance != nil {
		add("model weights (sha256)", a.Provenance.Model.WeightsSHA256, b.Provenance.Model.WeightsSHA256)
		add("device", a.Provenance.Device.Name, b.Provenance.Device.Name)
	}
	if a.Config != nil && b.Config != nil {
		add("precision", a.Config.Precision, b.Config.Precision)
	}
	return out
}

package pipeline

import (
	"fmt"
	"math"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/jsonformat"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
)

// Result is an evaluation's outcome. The JSON names are part of the CLI's output.
type Result struct {
	Model  string `json:"model"`
	Data   string `json:"data"`
	Mode   string `json:"mode"`
	Ctx    int    `json:"ctx"`
	Stride int    `json:"stride"` // windows advance by this (Ctx in stream mode; Ctx-1 there with BOSEachWindow)
	// BOSEachWindow is EvalConfig.BOSEachWindow: every window started with
	// the BOS (or <|endoftext|>) as context.
	BOSEachWindow bool `json:"bos_each_window,omitempty"`
	// Tokens is the number of targets scored, the denominator of MeanNLL.
	Tokens int `json:"tokens"`
	// InputTokens is the number of corpus ids evaluated (after MaxTokens): the
	// stream's length, or the documents' ids without the eot tokens added.
	InputTokens int     `json:"input_tokens"`
	NLLSum      float64 `json:"nll_sum"`  // nats
	MeanNLL     float64 `json:"mean_nll"` // nats per token
	PPL         float64 `json:"ppl"`      // exp(MeanNLL)
	// PPLStdErr is PPL's standard error, PPL·StdErr (the delta method), as
	// llama.cpp's perplexity prints it ("PPL = X +/- Y").
	PPLStdErr float64 `json:"ppl_stderr"`
	// BitsPerByte is NLLSum / ln 2 / the UTF-8 bytes of the scored targets
	// (of the text: a special token added to it, such as the <|endoftext|>
	// before a joined document, counts none),
	// and BytePerplexity 2^BitsPerByte = exp(NLLSum / those bytes):
	// lm-evaluation-harness's bits_per_byte and byte_perplexity, which divide
	// by the documents' bytes; in documents mode every token is a target, so
	// the two byte counts are the same.
	BitsPerByte    float64 `json:"bits_per_byte"`
	BytePerplexity float64 `json:"byte_perplexity"`
	// Words is the corpus's word count as lm-evaluation-harness counts it
	// (corpus.CountWords: the parts re.split(r"\s+", text) gives), 0 where
	// unknown (token files, --max-tokens); WordPerplexity is
	// exp(NLLSum / Words), its word_perplexity, for a whole run (0 for a
	// shard alone or an interrupted run; merge computes it).
	Words          int     `json:"words,omitempty"`
	WordPerplexity float64 `json:"word_perplexity,omitempty"`
	// StdErr is the standard error of MeanNLL: the sample standard deviation
	// of the per-token NLL over sqrt(Tokens).
	StdErr          float64 `json:"stderr"`
	Seconds         float64 `json:"seconds"`           // wall time of Evaluate
	TokensPerSecond float64 `json:"tokens_per_second"` // Tokens / Seconds
	Device          string  `json:"device"`            // Backend.Name()
	// Timings says where the wall time of the run went, the corpus's
	// reading and the model's loading included; the library fills it
	// (Evaluate leaves it nil), merge leaves it out.
	Timings *Timings `json:"timings,omitempty"`

	// NLLSumSq is the sum of the squared per-target NLLs, and ScoredBytes the
	// UTF-8 bytes of the scored targets: with NLLSum and Tokens, what merging
	// shards needs.
	NLLSumSq    float64 `json:"nll_sumsq"`
	ScoredBytes int     `json:"scored_bytes"`
	// BytesCounted names how ScoredBytes was counted: BytesOfText (the
	// text's bytes only) in results of this version; "" in results written
	// before, which also counted the special tokens added to the text as
	// the bytes of their names. Merge refuses to add the two.
	BytesCounted string `json:"bytes_counted,omitempty"`
	// NLLSumExact and NLLSumSqExact are NLLSum and NLLSumSq exactly (NLLSum
	// is NLLSumExact rounded once), so that merged shards give the bits of an
	// unsharded run; as JSON, "0xHEXp±EXP" strings (exactsum.Sum).
	NLLSumExact   exactsum.Sum `json:"nll_sum_exact"`
	NLLSumSqExact exactsum.Sum `json:"nll_sumsq_exact"`
	// Samples is the number of windows scored.
	Samples int `json:"samples"`
	// Shard is set for a run that scored one shard of the samples.
	Shard *Shard `json:"shard,omitempty"`
	// Interrupted is set on the partial result of a run that was cancelled;
	// TotalTokens is then the targets the whole run would have scored.
	Interrupted bool `json:"interrupted,omitempty"`
	TotalTokens int  `json:"total_tokens,omitempty"`
	// Config and Provenance say exactly what the numbers came from; the
	// library and the CLI fill them (Evaluate leaves them nil).
	Config     *RunConfig  `json:"config,omitempty"`
	Provenance *Provenance `json:"provenance,omitempty"`
	// PerToken is every scored target in corpus order (by Doc, then Pos),
	// with EvalConfig.PerToken; it is not part of the JSON (runfile.WritePerToken writes it).
	PerToken []TokenNLL `json:"-"`
	// TopLogprobs is EvalConfig.TopLogprobs: how many top log-probabilities
	// each of PerToken holds.
	TopLogprobs int `json:"-"`
	// VocabSize is EvalConfig.VocabSize, for the per-token file's header.
	VocabSize int `json:"-"`
}

// Timings splits a run's wall time, from the start of the corpus's reading
// to the last batch's end, into disjoint parts, in seconds. Compile, Tune
// and Check are a GPU's work once per device, driver, batch shape or
// process (SetupTimes): a first run's, which later ones find cached.
type Timings struct {
	Tokenize float64 `json:"tokenize"` // the corpus read and tokenized, or its tokens read from the token cache
	Load     float64 `json:"load"`     // the model put on the device, its weights' hash included; 0 where an earlier run of the same Evaluator loaded it
	Compile  float64 `json:"compile"`  // pipelines made for the batches
	Tune     float64 `json:"tune"`     // the autotuner's rounds
	Check    float64 `json:"check"`    // the matrix units' self-check
	Score    float64 `json:"score"`    // the rest of Seconds: the batches
}

// NewTimings makes a run's Timings from the tokenizing's wall time, the
// loading's (setup work done in it included), the setup work done in the
// loading and in the scoring, and the scoring's wall time (Seconds, that
// setup work included).
func NewTimings(tokenize, load time.Duration, inLoad, inScore SetupTimes, seconds float64) *Timings {
	all := inLoad.Add(inScore)
	return &Timings{
		Tokenize: tokenize.Seconds(),
		Load:     max(load-inLoad.Total(), 0).Seconds(),
		Compile:  all.Compile.Seconds(),
		Tune:     all.Tune.Seconds(),
		Check:    all.Check.Seconds(),
		Score:    max(seconds-inScore.Total().Seconds(), 0),
	}
}

// Setup is the work once per device, driver, batch shape or process:
// Compile + Tune + Check.
func (t *Timings) Setup() float64 { return t.Compile + t.Tune + t.Check }

// ResultFormat and ResultFormatVersion mark a Result's JSON (the --json
// file of a run and of merge): its first keys are "format": ResultFormat and
// "format_version": ResultFormatVersion, which grows whenever a key is
// removed or changes meaning. Results of builds before the mark have
// neither key.
const (
	ResultFormat        = "wgpu-eval result"
	ResultFormatVersion = 1
)

// MarshalJSON is the Result's JSON, marked with ResultFormat and
// ResultFormatVersion.
func (res Result) MarshalJSON() ([]byte, error) {
	type fields Result // without this method
	return jsonformat.Marshal(ResultFormat, ResultFormatVersion, fields(res))
}

// BytesOfText is Result.BytesCounted where a target stands for the bytes of
// the text it was encoded from, and a special token added to the text (a
// separator, the tokenizer's BOS or EOS) for none.
const BytesOfText = "text"

// expCapped is e^x, at most the largest float64: a perplexity beyond
// float64's range reads as 1.8e308 instead of +Inf, which JSON cannot hold.
func expCapped(x float64) float64 { return min(math.Exp(x), math.MaxFloat64) }

// sessionSpeed makes TokensPerSecond this session's: the targets scored since
// the resume (resumed of them were scored before) over this session's Seconds.
func (res *Result) sessionSpeed(resumed int) {
	if res.Seconds > 0 {
		res.TokensPerSecond = float64(res.Tokens-resumed) / res.Seconds
	}
}

// Fill sets the metrics from sums of NLL over targets of bytes UTF-8 bytes
// (bits per byte only when withBytes), and the speed from Seconds.
func (res *Result) Fill(sums model.LossSums, bytes int, withBytes bool) {
	res.Tokens = sums.Count
	res.NLLSumExact, res.NLLSumSqExact = sums.Sum, sums.SumSq
	res.NLLSum = sums.Sum.Float64()
	res.NLLSumSq = sums.SumSq.Float64()
	res.ScoredBytes = bytes
	res.MeanNLL, res.PPL, res.BitsPerByte, res.BytePerplexity, res.WordPerplexity = 0, 0, 0, 0, 0
	if sums.Count > 0 {
		res.MeanNLL = res.NLLSum / float64(sums.Count)
		res.PPL = expCapped(res.MeanNLL)
	}
	if withBytes && bytes > 0 {
		res.BitsPerByte = res.NLLSum / math.Ln2 / float64(bytes)
		res.BytePerplexity = expCapped(res.NLLSum / float64(bytes))
	}
	if res.Words > 0 && sums.Count > 0 {
		// A text with few spaces (Chinese, code) has few words: the
		// exponent can pass float64's range.
		res.WordPerplexity = expCapped(res.NLLSum / float64(res.Words))
	}
	res.StdErr = StdErr(res.NLLSum, res.NLLSumSq, sums.Count)
	res.PPLStdErr = min(res.PPL*res.StdErr, math.MaxFloat64)
	res.TokensPerSecond = 0
	if res.Seconds > 0 {
		res.TokensPerSecond = float64(res.Tokens) / res.Seconds
	}
}

// StdErr is the sample standard deviation of count values divided by
// sqrt(count), from their sum and sum of squares; 0 for fewer than two.
func StdErr(sum, sumSq float64, count int) float64 {
	n := float64(count)
	if count < 2 {
		return 0
	}
	mean := sum / n
	variance := max((sumSq-sum*mean)/(n-1), 0) // rounding can push a tiny variance below 0
	return math.Sqrt(variance / n)
}

// Sums is the result's sums of NLL.
func (res *Result) Sums() model.LossSums {
	return model.LossSums{Sum: res.NLLSumExact, SumSq: res.NLLSumSqExact, Count: res.Tokens}
}

// MaxCount bounds the counts of a result read from a file (targets, bytes,
// samples, tokens): far above any corpus (2^50 is a petabyte of text), far
// below overflow when shards are added.
const MaxCount = 1 << 50

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
		if c.v < 0 || c.v > MaxCount {
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
	if t := res.Timings; t != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{{"tokenize", t.Tokenize}, {"load", t.Load}, {"compile", t.Compile}, {"tune", t.Tune}, {"check", t.Check}, {"score", t.Score}} {
			if !(f.v >= 0) || math.IsInf(f.v, 1) {
				return fmt.Errorf("timings: %s %v is not a finite number of seconds, zero or more", f.name, f.v)
			}
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

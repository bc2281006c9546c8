package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// DefaultBatchTokens is EvalConfig.BatchTokens when it is zero.
const DefaultBatchTokens = 8192

// EvalConfig says what Evaluate scores and how.
type EvalConfig struct {
	Model string // the model's name, copied into Result
	Data  string // the corpus's name, copied into Result

	// Tokens is the tokenized corpus (required).
	Tokens *corpus.Tokens
	// EOT is the document separator: it precedes each document in documents
	// mode, and each separate document of the stream in the other modes
	// where the tokenizer puts nothing before a text (corpus.Tokens.Stream).
	// It is GPT-2's <|endoftext|>, or the tokenizer's BOS where it has one
	// (tokenizer.Tokenizer.DocSeparator: Llama's <s>).
	EOT int32
	// Mode is the evaluation method; "" means ModeStream.
	Mode Mode
	// Ctx is the window length in tokens (at least 2, at most the model's
	// positions; required).
	Ctx int
	// Stride is how far windows advance in strided mode, and in documents mode for
	// documents longer than Ctx; 0 means Ctx/2. Stream mode ignores it.
	Stride int
	// BOSEachWindow starts every window with EOT (the tokenizer's BOS where it
	// has one, else <|endoftext|>), as context only, as llama.cpp's
	// perplexity tool starts its chunks with BOS: in stream and strided modes
	// a window is EOT followed by up to Ctx-1 stream tokens, every one of them
	// scored once (the stream's first token too, predicted from EOT alone),
	// none overwritten; stream windows then advance by Ctx-1 and a Stride
	// must be at most Ctx-1 (CheckBOSWindow). A stream that begins with EOT
	// already (Llama 2's <s>) has it start the first window, not doubled. In
	// documents mode every window of a document longer than Ctx starts with
	// EOT, not only its first. It is not Hugging Face's evaluation of
	// tokenizer(text), which has no token before a window but the text's own.
	BOSEachWindow bool
	// BatchTokens bounds the padded size of a batch, sequences x width, passed
	// to one Backend.Submit (a batch holds at least one sequence); 0 means the
	// backend's Feed().BatchTokens, or DefaultBatchTokens when that is 0 too.
	BatchTokens int
	// MaxTokens, when positive, keeps only the first MaxTokens ids: of the stream
	// in stream and strided modes, of the documents' ids (the added eot tokens not
	// counted) in documents mode, the last document cut short.
	MaxTokens int
	// VocabSize, when positive, is checked against every id before any work.
	VocabSize int
	// Words is the corpus's word count (corpus.CountWords), for
	// Result.WordPerplexity; 0 where unknown.
	Words int
	// TokenLen gives the UTF-8 bytes of a token, for bits per byte; nil leaves
	// BitsPerByte zero.
	TokenLen func(id int32) int
	// Progress, when set, is called with how far the run has got: once
	// before the first batch, after each batch, and inside a batch whenever
	// the backend reports on it (Batch.Progress: the CPU, after each layer).
	// A cancelled run ends with a report of what its result counts (Done
	// = Scored), which is less than the reports of a batch cut short said.
	Progress func(Progress)
	// Shard, when its Count is above 1, scores only the samples (windows or
	// documents' windows, in corpus order) i with i mod Count == Index; the
	// shards' sums add up to an unsharded run's. A Count of 1 or more marks
	// the result as that shard (0/1: the whole run, mergeable alone).
	Shard Shard
	// Resume, when not nil, is the state of an interrupted run of the same
	// configuration: its samples are skipped and its sums are the start. The
	// totals equal an uninterrupted run's to the last bit, since the batches
	// after it are cut as they would have been.
	Resume *State
	// OnBatch, when set, is called after each batch, in order, with the state so
	// far (to save a checkpoint); an error from it stops Evaluate.
	OnBatch func(State) error
	// PerToken keeps every scored target's NLL in Result.PerToken, in corpus
	// order (the backend reads them back per batch: Batch.PerToken). With a
	// Resume that has samples done it needs their records in ResumePerToken.
	PerToken bool
	// TopLogprobs, with PerToken, also keeps the TopLogprobs highest
	// log-probabilities of every target's position (TokenNLL.Top; at most
	// MaxTopLogprobs); 0 keeps none.
	TopLogprobs int
	// ResumePerToken is, with PerToken and a Resume, the records of the
	// resumed samples in the order OnPerToken got them; they are checked
	// against those samples' targets.
	ResumePerToken []TokenNLL
	// OnPerToken, when set with PerToken, is called after each batch, before
	// OnBatch, with that batch's records (in batching order, not corpus
	// order): what a checkpointed run appends to its sidecar. An error from it
	// stops Evaluate. It must not keep the slice.
	OnPerToken func([]TokenNLL) error
}

// Progress is how far an evaluation has got, as EvalConfig.Progress gets it.
type Progress struct {
	// Done is the targets scored of the run's Total: those of the batches
	// finished, plus, inside a batch whose backend reports on it, the part of
	// the batch's targets its work done stands for.
	Done, Total int
	// Scored is the targets of the batches finished (a resumed run's
	// included), NLLSum the sum of their NLL in nats (the exact sum rounded
	// once): NLLSum / Scored is the running mean NLL. Scored is Done at a
	// batch's end and at most Done inside one.
	Scored int
	NLLSum float64
}

// MeanNLL is the running mean NLL, NLLSum / Scored; 0 before any target.
func (p Progress) MeanNLL() float64 {
	if p.Scored == 0 {
		return 0
	}
	return p.NLLSum / float64(p.Scored)
}

// TokenNLL is one scored target: where it is in the corpus (Sample.Doc and
// Sample.Pos), its id and its NLL in nats as the backend computed it.
type TokenNLL struct {
	Doc, Pos int
	Token    int32
	NLL      float32
	// Top is, with EvalConfig.TopLogprobs, the position's highest
	// log-probabilities over the whole vocabulary, highest first.
	Top []TokenLogprob
}

// TokenLogprob is a vocabulary id and its log-probability (nats).
type TokenLogprob = model.TokenLogprob

// State is how far an evaluation got: the first Samples samples in batching
// order are scored, with these sums and UTF-8 bytes of targets.
type State struct {
	Samples int            `msgpack:"samples"`
	Sums    model.LossSums `msgpack:"sums"`
	Bytes   int            `msgpack:"bytes"`
	// Batches is how many batches scored those samples: the next batch's
	// Batch.Index, so that a resumed run on several devices gives each
	// batch to the device an uninterrupted run gives it to.
	Batches int `msgpack:"batches"`
	// BatchTokens is the batch budget in force (it halves when a batch does
	// not fit); a resumed run keeps it, so that its batches are cut as an
	// uninterrupted run's would be.
	BatchTokens int `msgpack:"batch_tokens"`
}

// Evaluate cuts cfg.Tokens into sequences as cfg.Mode says, groups them into
// batches of similar length (longest first, ties in corpus order, so the same
// input always gives the same batches and the same sums) padded to the
// backend's bucket widths, keeps up to Feed().InFlight batches submitted to b,
// adds their sums exactly (so batching, sharding and resuming do not change
// the result's bits) and derives the metrics. A batch
// that does not fit the backend's memory (ErrBatchTooLarge) is split and the
// rest of the run uses batches half as large. When ctx is cancelled it submits
// nothing more, waits for the batches already submitted (they run to their
// end on a device anyway: up to Feed().InFlight batches, which bounds how
// long a cancel takes) and counts them, and stops with ctx's error and the
// partial result of the batches scored (Interrupted set); when those were
// the last, the result is complete and there is no error. Other errors
// return no result. Evaluate does not close b.
func Evaluate(ctx context.Context, b Backend, cfg EvalConfig) (*Result, error) {
	start := time.Now()
	if b == nil {
		return nil, errors.New("evaluate: no backend")
	}
	name := cmp.Or(cfg.Data, "corpus") // for messages
	samples, res, err := plan(cfg)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", name, err)
	}
	res.Device = b.Name()
	res.VocabSize = cfg.VocabSize
	res.Words = cfg.Words
	batchTokens := cfg.BatchTokens
	if batchTokens <= 0 {
		batchTokens = cmp.Or(b.Feed().BatchTokens, DefaultBatchTokens)
	}

	total := 0
	for _, s := range samples {
		total += s.Scored()
	}
	var st State
	resumed := 0 // targets scored by earlier sessions
	if r := cfg.Resume; r != nil {
		if err := checkResume(*r, samples); err != nil {
			return nil, fmt.Errorf("evaluate %s: resume: %w", name, err)
		}
		if cfg.PerToken && r.Samples > 0 {
			if err := checkResumeRecords(cfg.ResumePerToken, samples[:r.Samples], cfg.TopLogprobs, r.Sums.Sum); err != nil {
				return nil, fmt.Errorf("evaluate %s: per-token output cannot resume this run: %w", name, err)
			}
		}
		st, resumed = *r, r.Sums.Count
		if r.BatchTokens > 0 {
			batchTokens = r.BatchTokens
		}
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(Progress) {}
	}
	// at is the progress at the last batch's end; inBatch adds a batch's
	// targets done so far to it, which is right for a backend that scores
	// one batch at a time, as the CPU does (InFlight 1, inside Submit).
	at := Progress{Done: st.Sums.Count, Total: total, Scored: st.Sums.Count, NLLSum: st.Sums.Sum.Float64()}
	progress(at)
	var inBatch func(int)
	if cfg.Progress != nil {
		inBatch = func(done int) {
			p := at
			p.Done += done
			progress(p)
		}
	}

	if err := CheckTopLogprobs(cfg.TopLogprobs, cfg.VocabSize); err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", name, err)
	}
	if cfg.TopLogprobs > 0 && !cfg.PerToken {
		return nil, fmt.Errorf("evaluate %s: top log-probabilities are kept only with per-token output", name)
	}
	var keep *keeper
	if cfg.PerToken {
		res.PerToken = make([]TokenNLL, 0, total)
		res.PerToken = append(res.PerToken, cfg.ResumePerToken[:min(len(cfg.ResumePerToken), st.Sums.Count)]...)
		res.TopLogprobs = cfg.TopLogprobs
		keep = &keeper{k: cfg.TopLogprobs, out: &res.PerToken, on: cfg.OnPerToken}
	}
	st, err = run(ctx, b, samples, st, batchTokens, keep, inBatch, func(s State) error {
		at = Progress{Done: s.Sums.Count, Total: total, Scored: s.Sums.Count, NLLSum: s.Sums.Sum.Float64()}
		progress(at)
		if cfg.OnBatch != nil {
			return cfg.OnBatch(s)
		}
		return nil
	})
	res.Seconds = time.Since(start).Seconds()
	slices.SortFunc(res.PerToken, func(a, b TokenNLL) int { return cmp.Or(cmp.Compare(a.Doc, b.Doc), cmp.Compare(a.Pos, b.Pos)) })
	if err != nil {
		err = fmt.Errorf("evaluate %s on %s: %w", name, res.Device, err)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// The batch cut short is dropped: the last report says what
			// the result counts, below what the batch's reports said.
			at.Done = at.Scored
			progress(at)
			res.Interrupted, res.TotalTokens = true, total
			res.Fill(st.Sums, st.Bytes, cfg.TokenLen != nil)
			res.Samples = st.Samples
			res.sessionSpeed(resumed)
			res.WordPerplexity = 0 // of part of the words
			return res, err
		}
		return nil, err
	}
	res.Fill(st.Sums, st.Bytes, cfg.TokenLen != nil)
	res.Samples = st.Samples
	res.sessionSpeed(resumed)
	if cfg.Shard.Count > 1 {
		res.WordPerplexity = 0 // the words are the whole corpus's: merge computes it
	}
	return res, nil
}

// checkResume reports a state that cannot belong to this plan of samples.
func checkResume(r State, samples []Sample) error {
	if r.Samples < 0 || r.Samples > len(samples) {
		return fmt.Errorf("%d samples done, but this run has %d", r.Samples, len(samples))
	}
	if r.Batches < 0 || r.Batches > r.Samples {
		return fmt.Errorf("%d batches for %d samples", r.Batches, r.Samples)
	}
	want := 0
	for _, s := range samples[:r.Samples] {
		want += s.Scored()
	}
	if r.Sums.Count != want {
		return fmt.Errorf("%d targets scored in %d samples, but those samples have %d", r.Sums.Count, r.Samples, want)
	}
	return nil
}

// plan validates cfg, cuts the samples in batching order (longest first, stable)
// and fills the Result fields that do not depend on the scores.
func plan(cfg EvalConfig) ([]Sample, *Result, error) {
	if cfg.Tokens == nil {
		return nil, nil, errors.New("no tokens to evaluate")
	}
	mode := cfg.Mode
	if mode == "" {
		mode = ModeStream
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, nil, err
	}
	bos := cfg.BOSEachWindow
	stride := cfg.Stride
	switch {
	case mode == ModeStream && bos:
		stride = cfg.Ctx - 1 // a window holds the BOS and Ctx-1 stream tokens
	case mode == ModeStream:
		stride = cfg.Ctx
	case stride == 0:
		stride = max(cfg.Ctx/2, 1)
	}
	if err := CheckModeWindow(mode, cfg.Ctx, stride, bos); err != nil {
		return nil, nil, err
	}
	if cfg.MaxTokens < 0 {
		return nil, nil, fmt.Errorf("max tokens %d: must not be negative", cfg.MaxTokens)
	}
	res := &Result{Model: cfg.Model, Data: cfg.Data, Mode: string(mode), Ctx: cfg.Ctx, Stride: stride, BOSEachWindow: bos, BytesCounted: BytesOfText}

	switch {
	case mode == ModeDocuments && cfg.EOT < 0:
		return nil, nil, errors.New("documents mode puts <|endoftext|> (or the tokenizer's BOS) before each document, and the model's " +
			"tokenizer has no such token: use --mode stream or strided, or a tokenizer with <|endoftext|> or a BOS")
	case bos && cfg.EOT < 0:
		return nil, nil, errors.New("a BOS at the start of every window (--bos-each-window) needs the tokenizer's BOS or <|endoftext|>, " +
			"and the model's tokenizer has neither: evaluate without it")
	case (mode == ModeDocuments || bos) && cfg.VocabSize > 0 && int(cfg.EOT) >= cfg.VocabSize:
		return nil, nil, fmt.Errorf("end-of-text id %d is not below the vocabulary size %d", cfg.EOT, cfg.VocabSize)
	}
	var seqs []placed
	text := textBytes{tokenLen: cfg.TokenLen, docs: mode == ModeDocuments}
	if mode == ModeDocuments {
		docs, spans := cfg.Tokens.DocumentsText(cfg.EOT)
		docs, text.spans = headDocs(docs, cfg.MaxTokens), spans
		for i, d := range docs {
			res.InputTokens += len(d)
			if err := checkIDs(d, cfg.VocabSize); err != nil {
				return nil, nil, fmt.Errorf("document %d: %w", i, err)
			}
		}
		if bos {
			seqs = documentsBOS(docs, cfg.EOT, cfg.Ctx, stride)
		} else {
			seqs = documents(docs, cfg.EOT, cfg.Ctx, stride)
		}
	} else {
		stream := cfg.Tokens.Stream(cfg.EOT)
		text.spans = cfg.Tokens.StreamText(cfg.EOT)
		if cfg.MaxTokens > 0 && len(stream) > cfg.MaxTokens {
			stream = stream[:cfg.MaxTokens]
		}
		res.InputTokens = len(stream)
		if err := checkIDs(stream, cfg.VocabSize); err != nil {
			return nil, nil, err
		}
		if bos {
			seqs = streamBOS(stream, cfg.EOT, cfg.Ctx, stride)
		} else {
			seqs = appendStrided(nil, stream, cfg.Ctx, stride, 0, 0) // == Stream when stride == Ctx
		}
	}
	if len(seqs) == 0 {
		need := "at least two tokens"
		if bos {
			need = "a token after its BOS"
		}
		return nil, nil, fmt.Errorf("nothing to score: %s in %s mode at context %d "+
			"(a window needs %s)", Count(res.InputTokens, "token"), mode, cfg.Ctx, need)
	}

	if err := cfg.Shard.Check(); err != nil {
		return nil, nil, err
	}
	if cfg.Shard.Count > 1 {
		var mine []placed
		for i, q := range seqs {
			if i%cfg.Shard.Count == cfg.Shard.Index {
				mine = append(mine, q)
			}
		}
		if len(mine) == 0 {
			return nil, nil, fmt.Errorf("shard %v has no samples: the corpus has only %d", cfg.Shard, len(seqs))
		}
		seqs = mine
	}
	if cfg.Shard.Count >= 1 {
		// --shard 0/1 too: a script run with N = 1 merges its one shard
		// as it would N of them.
		sh := cfg.Shard
		res.Shard = &sh
	}
	samples := make([]Sample, len(seqs))
	for i, s := range seqs {
		samples[i] = Sample{Sequence: s.Sequence, Doc: s.doc, Pos: s.pos, Bytes: text.of(s)}
	}
	// Length bucketing: longest first; SortStableFunc keeps corpus order among equals.
	slices.SortStableFunc(samples, func(a, b Sample) int { return cmp.Compare(len(b.Tokens), len(a.Tokens)) })
	return samples, res, nil
}

// textBytes counts the UTF-8 bytes of targets for bits per byte: a
// target's token's bytes (tokenLen) where the tokenizer encoded it from the
// corpus's text, none where it was added (a separator before a document,
// the tokenizer's BOS or EOS: corpus.Tokens.StreamText, DocumentsText), so
// that the bytes scored are bytes of the text whatever the tokenizer adds.
type textBytes struct {
	tokenLen func(id int32) int
	// spans are the stream's text spans (in stream positions), or with docs
	// each document's (in its ids' positions).
	spans []corpus.Span
	docs  bool
}

// of is the bytes of the text that w's targets stand for.
func (t textBytes) of(w placed) int {
	if t.tokenLen == nil {
		return 0
	}
	spans := t.spans
	if t.docs {
		spans = t.spans[w.doc : w.doc+1]
	}
	// The first span that ends after the first target.
	i, _ := slices.BinarySearchFunc(spans, w.pos, func(s corpus.Span, pos int) int { return cmp.Compare(s.End-1, pos) })
	n := 0
	for k, id := range w.Tokens[w.First:] {
		p := w.pos + k
		for i < len(spans) && spans[i].End <= p {
			i++
		}
		if i < len(spans) && spans[i].Begin <= p {
			n += t.tokenLen(id)
		}
	}
	return n
}

// RecordBytes returns the UTF-8 bytes of the text a documents-mode record
// of tokens stands for (as Evaluate counts them for bits per byte): its
// token's tokenLen, or 0 for a special token the tokenizer added to the
// document (its EOS, such as Llama's </s> with add_eos_token). sep is
// EvalConfig.EOT.
func RecordBytes(tokens *corpus.Tokens, sep int32, tokenLen func(id int32) int) func(TokenNLL) int {
	_, spans := tokens.DocumentsText(sep)
	return func(r TokenNLL) int {
		if r.Doc < 0 || r.Doc >= len(spans) || r.Pos < spans[r.Doc].Begin || r.Pos >= spans[r.Doc].End {
			return 0
		}
		return tokenLen(r.Token)
	}
}

// headDocs keeps the first n ids of docs (all when n <= 0), cutting the last
// document kept short.
func headDocs(docs [][]int32, n int) [][]int32 {
	if n <= 0 {
		return docs
	}
	var out [][]int32
	for _, d := range docs {
		if n == 0 {
			break
		}
		if len(d) > n {
			d = d[:n]
		}
		out = append(out, d)
		n -= len(d)
	}
	return out
}

// checkIDs returns an error for the first id outside [0, vocab), when vocab > 0.
func checkIDs(ids []int32, vocab int) error {
	if vocab <= 0 {
		return nil
	}
	for i, id := range ids {
		if id < 0 || int(id) >= vocab {
			return fmt.Errorf("token %d: id %d is not below the vocabulary size %d", i, id, vocab)
		}
	}
	return nil
}

// planned is a batch of samples[lo:hi] and the targets it must score.
type planned struct {
	lo, hi int
	batch  Batch
	want   int
	bytes  int
}

// next cuts the batch that starts at samples[lo]: samples are sorted longest
// first, so the first sets the padded width.
func next(samples []Sample, lo int, feed Feed, batchTokens int) planned {
	width := feed.Width(len(samples[lo].Tokens))
	p := planned{lo: lo, hi: lo, batch: Batch{Width: width}}
	for p.hi < len(samples) && (p.hi == lo || (p.hi-lo+1)*width <= batchTokens) {
		p.batch.Seqs = append(p.batch.Seqs, samples[p.hi].Sequence) // fresh slice: a backend may keep it
		p.want += samples[p.hi].Scored()
		p.bytes += samples[p.hi].Bytes
		p.hi++
	}
	return p
}

// run scores samples with b from state st on: batches of at most
// batchTokens padded tokens, up to Feed().InFlight of them submitted at once,
// their sums added in order. keep, when not nil, asks for per-target NLLs
// (Batch.PerToken) and gets each batch's samples with them, in order.
// inBatch, when not nil, is every batch's Batch.Progress. done gets the state
// after each batch; an error from it stops the run. It returns the state
// reached, also on error; a cancel once the last batch is submitted is no
// error, since those batches are counted and nothing is left out.
func run(ctx context.Context, b Backend, samples []Sample, st State, batchTokens int, keep *keeper, inBatch func(int), done func(State) error) (State, error) {
	feed := b.Feed()
	inFlight := max(feed.InFlight, 1)
	type flight struct {
		planned
		p Pending
	}
	// A submitted batch runs to its end on the device whatever ctx says (a
	// command buffer cannot be taken back), so it is waited for without
	// cancellation and counted; a cancel stops the loop before the next
	// Submit, and the batches in flight then are waited for too.
	uncancelled := context.WithoutCancel(ctx)
	wait := func(f flight) error {
		got, err := f.p.Wait(uncancelled)
		switch {
		case err != nil:
			return batchError(f.planned, err)
		case got.Count != f.want:
			return fmt.Errorf("the backend scored %d targets of a batch that has %d", got.Count, f.want)
		case !got.Finite():
			return fmt.Errorf("the NLL of a batch of %d sequences is not finite (sum %v); "+
				"the model's weights or the backend's arithmetic are broken", len(f.batch.Seqs), got.Sum.Float64())
		}
		if keep != nil {
			if err := keep.batch(b.Name(), f.p, samples[f.lo:f.hi], f.want); err != nil {
				return err
			}
		}
		st.Sums.Add(got)
		st.Samples = f.hi
		st.Bytes += f.bytes
		st.Batches++
		st.BatchTokens = batchTokens
		return done(st)
	}
	var queue []flight // submitted, in sample order
	nextLo := st.Samples
	for nextLo < len(samples) || len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			// Nothing new is submitted; the batches in flight are counted.
			for _, f := range queue {
				if wait(f) != nil {
					break
				}
			}
			if st.Samples == len(samples) {
				return st, nil // the cancel came after the last batch was submitted: nothing is left out
			}
			return st, err
		}
		var failed planned // the batch that ran out of memory
		var tooLarge error
		if nextLo < len(samples) && len(queue) < inFlight {
			pl := next(samples, nextLo, feed, batchTokens)
			pl.batch.Progress = inBatch
			pl.batch.Index = st.Batches + len(queue) // the queue's batches finish first, in order
			if keep != nil {
				pl.batch.PerToken, pl.batch.TopLogprobs = true, keep.k
			}
			p, err := b.Submit(ctx, pl.batch)
			if err == nil {
				queue = append(queue, flight{planned: pl, p: p})
				nextLo = pl.hi
				continue
			}
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				continue // cut short by the cancel: the batches in flight are still counted, above
			}
			failed, tooLarge = pl, batchError(pl, err)
		} else {
			f := queue[0]
			queue = queue[1:]
			err := wait(f)
			if err == nil {
				continue
			}
			failed, tooLarge = f.planned, err
		}
		if !errors.Is(tooLarge, ErrBatchTooLarge) {
			return st, tooLarge
		}
		// Out of memory: keep the batches before the one that failed, finish
		// and drop those after it (so the device's memory is free), and go on
		// from it with batches half its size.
		lo := failed.lo
		for _, f := range queue {
			if f.lo > lo {
				f.p.Wait(ctx)
				continue
			}
			if err := wait(f); err != nil {
				if !errors.Is(err, ErrBatchTooLarge) {
					return st, err
				}
				lo, failed = f.lo, f.planned
			}
		}
		if len(failed.batch.Seqs) == 1 {
			return st, fmt.Errorf("one sequence of %d tokens does not fit the device: %w", len(samples[failed.lo].Tokens), tooLarge)
		}
		queue, nextLo = nil, lo
		batchTokens = max(len(failed.batch.Seqs)*failed.batch.Width/2, 1)
	}
	return st, nil
}

// batchError says which batch failed.
func batchError(p planned, err error) error {
	return fmt.Errorf("batch of %d sequences x %d positions: %w", len(p.batch.Seqs), p.batch.Width, err)
}

// Count spells n things of a kind: "1 token", "2 tokens".
func Count(n int, kind string) string {
	if n == 1 {
		return "1 " + kind
	}
	return fmt.Sprintf("%d %ss", n, kind)
}

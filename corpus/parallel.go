package corpus

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// Cutter is a HeadEncoder that says where a text may be cut so that its
// pieces, encoded apart, give exactly its ids (*tokenizer.Tokenizer is one:
// see model/tokenizer's cut.go for where each kind of tokenizer may be cut,
// and which are never cut). Tokenize encodes the pieces of a long text on
// several goroutines.
type Cutter interface {
	HeadEncoder
	// Cut returns the first place i, n <= i < len(text), where text may be
	// cut, or len(text) where there is none.
	Cut(text string, n int) int
	// EncodePiece encodes a piece of a text cut where Cut allows (first:
	// the piece starts the text), as EncodeHead does the whole text: the
	// pieces' ids, each piece encoded whole, are the text's, and a piece
	// encoded with a limit stops where EncodeHead of the whole text would
	// stop with the ids before the piece taken off its limit.
	EncodePiece(ctx context.Context, piece string, first bool, limit int, progress func(done int)) (ids []int32, whole bool, err error)
}

// pieceBytes is about how much text one job of the parallel encoding holds:
// a piece of a long text, or whole documents (a variable for tests).
var pieceBytes = 256 << 10

// jobsPerThread bounds how far the encoding runs ahead of the corpus order:
// at most jobsPerThread*threads jobs are taken and not yet collected, which
// bounds the memory of ids waiting for their turn and the work done past
// MaxTokens.
const jobsPerThread = 4

// job is a part of the corpus that one goroutine encodes: documents
// [doc, doc+docs) whole, or, when docs is 0, the bytes [begin, end) of
// document doc.
type job struct {
	doc, docs  int
	begin, end int
}

// jobResult is what a job gave: ids per document (one slice for a piece).
type jobResult struct {
	ids  [][]int32
	err  error
	done chan struct{}
}

// planJobs cuts the corpus into jobs of about pieceBytes: runs of short
// documents, and the pieces of a document longer than that where tok can
// cut it (see Cutter); a document that cannot be cut is one job.
func planJobs(docs []string, tok Tokenizer) []job {
	cutter, _ := tok.(Cutter)
	var jobs []job
	run, runBytes := job{}, 0 // the run of short documents being gathered
	flush := func(next int) {
		if run.docs > 0 {
			jobs = append(jobs, run)
		}
		run, runBytes = job{doc: next}, 0
	}
	for i, d := range docs {
		if len(d) <= pieceBytes || cutter == nil {
			if run.docs == 0 {
				run.doc = i
			}
			run.docs++
			runBytes += len(d)
			if runBytes >= pieceBytes {
				flush(i + 1)
			}
			continue
		}
		flush(i)
		for begin := 0; begin < len(d); {
			end := len(d)
			if len(d)-begin > pieceBytes {
				end = begin + cutter.Cut(d[begin:], pieceBytes)
			}
			jobs = append(jobs, job{doc: i, begin: begin, end: end})
			begin = end
		}
		run.doc = i + 1
	}
	flush(len(docs))
	return jobs
}

// encodeJob encodes job j of the corpus: a piece with tok's EncodePiece,
// each document of a run with Encode (one longer than chunkBytes, which a
// tokenizer that cannot cut leaves whole, through encodeHead, checking ctx).
func encodeJob(ctx context.Context, docs []string, tok Tokenizer, j job) ([][]int32, error) {
	if j.docs == 0 {
		ids, _, err := tok.(Cutter).EncodePiece(ctx, docs[j.doc][j.begin:j.end], j.begin == 0, 0, nil)
		return [][]int32{ids}, err
	}
	out := make([][]int32, j.docs)
	for k, d := range docs[j.doc : j.doc+j.docs] {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ids, _, err := encodeHead(ctx, tok, d, 0, nil)
		if err != nil {
			return nil, err
		}
		out[k] = ids
	}
	return out, nil
}

// tokenizeParallel is Tokenize's encoding on threads goroutines (see the
// design note on Tokenize): the jobs are encoded in any order, at most
// jobsPerThread*threads ahead of the first not yet collected, and collected
// in corpus order on the calling goroutine, which makes the same decisions
// as the sequential loop (tokenizeSequential): it stops at MaxTokens where
// that loop stops, encoding again with the limit the one job in which the
// sequential encoding would have stopped, and reports progress.
func tokenizeParallel(ctx context.Context, c *Corpus, tok Tokenizer, opt TokenizeOptions, jobs []job, threads int, report func(int64)) ([][]int32, bool, error) {
	wrap := func(err error) error { return fmt.Errorf("tokenize %s: %w", infile.Quote(c.Name), err) }
	work, cancel := context.WithCancel(ctx)
	results := make([]jobResult, len(jobs))
	for k := range results {
		results[k].done = make(chan struct{})
	}
	window := make(chan struct{}, jobsPerThread*threads)
	next := make(chan int)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Go(func() {
		defer close(next)
		for k := range jobs {
			select {
			case window <- struct{}{}:
			case <-work.Done():
				return
			}
			select {
			case next <- k:
			case <-work.Done():
				return
			}
		}
	})
	for range threads {
		wg.Go(func() {
			for k := range next {
				runJob(work, c, tok, jobs[k], &results[k])
			}
		})
	}

	docs := make([][]int32, 0, len(c.Docs))
	total := 0      // ids in docs
	var doc []int32 // the document being put together from its pieces
	limit := 0      // the limit of its encoding, as the sequential loop's
	var encoded int64
	for k, j := range jobs {
		select {
		case <-results[k].done:
		case <-ctx.Done():
			return nil, false, wrap(ctx.Err())
		}
		<-window
		r := &results[k]
		if err := ctx.Err(); err != nil {
			return nil, false, wrap(err)
		}
		if r.err != nil {
			return nil, false, wrap(r.err)
		}
		if j.docs > 0 {
			for i, d := range c.Docs[j.doc : j.doc+j.docs] {
				if opt.MaxTokens > 0 && total >= opt.MaxTokens {
					return docs, false, nil
				}
				ids, whole := r.ids[i], true
				if opt.MaxTokens > 0 && len(d) > chunkBytes && len(ids) >= opt.MaxTokens-total {
					// The sequential loop's encodeHead stopped in this
					// document: encode its head as that loop does.
					var err error
					ids, whole, err = encodeHead(ctx, tok, d, opt.MaxTokens-total, func(done int) { report(encoded + int64(done)) })
					if err != nil {
						return nil, false, wrap(err)
					}
				}
				encoded += int64(len(d))
				report(encoded)
				docs = append(docs, ids)
				total += len(ids)
				if !whole {
					return docs, false, nil
				}
			}
			continue
		}
		text := c.Docs[j.doc]
		if j.begin == 0 {
			if opt.MaxTokens > 0 && total >= opt.MaxTokens {
				return docs, false, nil
			}
			limit = 0
			if opt.MaxTokens > 0 && len(text) > chunkBytes {
				limit = opt.MaxTokens - total
			}
			size := len(text)/3 + 1
			if limit > 0 {
				size = min(size, limit+64)
			}
			doc = make([]int32, 0, size)
		}
		ids := r.ids[0]
		if limit > 0 && len(doc)+len(ids) >= limit {
			// EncodeHead of the whole text stops in this piece.
			head, whole, err := tok.(Cutter).EncodePiece(ctx, text[j.begin:j.end], j.begin == 0, limit-len(doc),
				func(done int) { report(encoded + int64(done)) })
			if err != nil {
				return nil, false, wrap(err)
			}
			if !whole {
				return append(docs, append(doc, head...)), false, nil
			}
		}
		doc = append(doc, ids...)
		r.ids = nil
		encoded += int64(j.end - j.begin)
		report(encoded)
		if j.end == len(text) {
			docs = append(docs, doc)
			total += len(doc)
			doc = nil
		}
	}
	return docs, true, nil
}

// runJob encodes job j into r and marks it done. A tokenizer that panics
// (a bug) makes an error of it, as the calling goroutine could have
// recovered from it on its own.
func runJob(ctx context.Context, c *Corpus, tok Tokenizer, j job, r *jobResult) {
	defer close(r.done)
	defer func() {
		if p := recover(); p != nil {
			r.ids, r.err = nil, fmt.Errorf("the tokenizer panicked: %v\n%s", p, debug.Stack())
		}
	}()
	r.ids, r.err = encodeJob(ctx, c.Docs, tok, j)
}

// share is the end of the k-th of parts shares of n, k*n/parts, without
// overflowing an int of 32 bits (n near 2^31, k up to parts).
func share(n, k, parts int) int {
	return int(int64(n) * int64(k) / int64(parts))
}

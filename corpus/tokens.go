package corpus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"unicode"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// Tokenizer is what the pipeline needs of a tokenizer (*tokenizer.Tokenizer of
// package model/tokenizer satisfies it).
type Tokenizer interface {
	// Encode returns the ids of text, with no special tokens added.
	Encode(text string) []int32
	// ID identifies the tokenizer's files, for cache keys.
	ID() string
	// EOT is the end-of-text id.
	EOT() int32
	// VocabSize is the number of ids.
	VocabSize() int
	// Specials are the ids the tokenizer's post-processor puts before and
	// after a text (transformers' tokenizer(text)): Llama 2's BOS before;
	// none for GPT-2.
	Specials() (lead, trail []int32)
}

// HeadEncoder is a Tokenizer that encodes the head of a text itself
// (*tokenizer.Tokenizer is one): the first ids of Encode(text), at least
// limit of them (all where limit <= 0), whole false when it stopped before
// the end, checking ctx as it goes and calling progress (when not nil) with
// the bytes of text encoded so far. Tokenize uses it for long texts; other
// tokenizers have their text cut into pieces where GPT-2's pre-tokenizer
// allows (see Tokenize).
type HeadEncoder interface {
	EncodeHead(ctx context.Context, text string, limit int, progress func(done int)) (ids []int32, whole bool, err error)
}

// Tokens is a tokenized corpus.
type Tokens struct {
	// Docs holds the ids: one slice for a continuous text or a token file, one per
	// document for a corpus of documents.
	Docs [][]int32
	// Separated is true when Docs are separate documents (see Corpus.Separated).
	Separated bool
	// Lead and Trail are the ids the tokenizer puts before and after each
	// text (Tokenizer.Specials; none for a token file), which Stream and
	// Documents add.
	Lead, Trail []int32
	// Partial is true when tokenizing stopped at TokenizeOptions.MaxTokens
	// before the end of the corpus: Docs hold at least that many ids, but
	// not all of the corpus's.
	Partial bool
	// SepAdded is true when the separator ids in Docs were put there by
	// whoever wrote the corpus, between its documents (an llm.c token file:
	// <|endoftext|> before each document), not encoded from text: they
	// stand for no byte of it (StreamText).
	SepAdded bool
}

// Len is the number of ids in all of Docs.
func (t *Tokens) Len() int {
	n := 0
	for _, d := range t.Docs {
		n += len(d)
	}
	return n
}

// Stream returns the ids as one sequence, for the stream and strided modes,
// each text as the tokenizer encodes it with its special tokens (Lead, Trail):
// a continuous text (or token file) as it is; separate documents one after
// another, each preceded by sep where the tokenizer puts nothing before a
// text (GPT-2: <|endoftext|>, as GPT-2's training data and llm.c's token
// files lay them out).
func (t *Tokens) Stream(sep int32) []int32 {
	if !t.Separated && len(t.Docs) == 1 && len(t.Lead)+len(t.Trail) == 0 {
		return t.Docs[0]
	}
	out := make([]int32, 0, t.Len()+len(t.Docs)*(1+len(t.Lead)+len(t.Trail)))
	for _, d := range t.Docs {
		if t.Separated && len(t.Lead) == 0 {
			out = append(out, sep)
		}
		out = append(append(append(out, t.Lead...), d...), t.Trail...)
	}
	return out
}

// Documents returns the ids as documents, for the documents mode, which
// puts sep before each as context: separate documents as the tokenizer
// encodes them (Lead, Trail), less the first lead token (sep: the
// tokenizer's BOS); a continuous stream cut at its sep tokens (the document
// boundaries of an llm.c token file; a text holds none, unless it spells out
// the tokenizer's separator, and stays one document). Separate documents
// keep their numbers: an empty one (a JSONL line whose text is "") stays, as
// an empty slice, so that document i is the corpus's document i (the doc of
// per-document scores); the empty pieces of a cut stream are dropped.
func (t *Tokens) Documents(sep int32) [][]int32 {
	docs, _ := t.DocumentsText(sep)
	return docs
}

// Span is the ids [Begin, End) of a sequence.
type Span struct{ Begin, End int }

// DocumentsText is Documents with, for each document, the span of its ids
// that the tokenizer encoded from the corpus's text: the ids outside it are
// special tokens the tokenizer added (Lead after the first, Trail, such as
// Llama's </s> with add_eos_token), which stand for no byte of the text.
func (t *Tokens) DocumentsText(sep int32) ([][]int32, []Span) {
	var docs [][]int32
	var spans []Span
	for _, d := range t.Docs {
		text := Span{len(t.Lead), len(t.Lead) + len(d)} // of d within Lead+d+Trail
		if len(t.Lead)+len(t.Trail) > 0 {
			d = append(append(append(make([]int32, 0, len(t.Lead)+len(d)+len(t.Trail)), t.Lead...), d...), t.Trail...)
		}
		if t.Separated {
			if len(t.Lead) > 0 {
				d = d[1:]
				text = Span{text.Begin - 1, text.End - 1}
			}
			docs, spans = append(docs, d), append(spans, text)
			continue
		}
		piece := func(begin, end int) {
			docs = append(docs, d[begin:end:end])
			spans = append(spans, Span{min(max(text.Begin-begin, 0), end-begin), max(min(text.End, end)-begin, 0)})
		}
		start := 0
		for i, id := range d {
			if id == sep {
				if i > start {
					piece(start, i)
				}
				start = i + 1
			}
		}
		if len(d) > start {
			piece(start, len(d))
		}
	}
	return docs, spans
}

// StreamText returns the spans of Stream(sep) that the tokenizer encoded
// from the corpus's text, in order: every other id was added (sep before a
// separate document, the tokenizer's Lead and Trail; with SepAdded, a token
// file's own sep ids) and stands for no byte of the text.
func (t *Tokens) StreamText(sep int32) []Span {
	if t.SepAdded && !t.Separated && len(t.Docs) == 1 && len(t.Lead)+len(t.Trail) == 0 {
		var spans []Span
		start := 0
		for i, id := range t.Docs[0] {
			if id == sep {
				if i > start {
					spans = append(spans, Span{start, i})
				}
				start = i + 1
			}
		}
		if n := len(t.Docs[0]); n > start {
			spans = append(spans, Span{start, n})
		}
		return spans
	}
	spans := make([]Span, 0, len(t.Docs))
	at := 0
	for _, d := range t.Docs {
		if t.Separated && len(t.Lead) == 0 {
			at++
		}
		at += len(t.Lead)
		spans = append(spans, Span{at, at + len(d)})
		at += len(d) + len(t.Trail)
	}
	return spans
}

// TokenizeOptions tunes Tokenize. The zero value is usable.
type TokenizeOptions struct {
	// CacheDir is the root of wgpu-eval's cache; "" means os.UserCacheDir()/wgpu-eval.
	// Tokenized corpora are kept in CacheDir/tokens.
	CacheDir string
	// NoCache skips reading and writing the cache.
	NoCache bool
	// CacheError, when set, is told of a cache that could not be written (or
	// whose path names something other than a regular file, which is then
	// neither read nor written); the cache is only an accelerator, so Tokenize
	// goes on regardless.
	CacheError func(error)
	// MaxTokens, when positive, is the most ids the caller will use (of the
	// stream, or of the documents, as pipeline.EvalConfig.MaxTokens keeps
	// them): tokenizing stops once at least that many are made, so that the
	// head of a huge corpus costs what the head costs. Such a partial result
	// is not cached (a whole one from the cache is used).
	MaxTokens int
	// Progress, when set, is called as tokenizing a text of a MiB or more
	// proceeds (not for ids read from the cache): done of total bytes of text
	// encoded, about every MiB and at the end. It is called on the
	// goroutine that called Tokenize, done growing.
	Progress func(done, total int64)
	// Threads is how many goroutines encode at once: 0 means
	// runtime.GOMAXPROCS(0) (all cores), which also bounds any count; 1
	// encodes on the calling goroutine only. The ids are the same whatever
	// the count (see Tokenize).
	Threads int
}

// progressBytes is how many bytes of text Tokenize encodes at least between
// two calls of TokenizeOptions.Progress (the tokenizer's own reports, about
// every MiB, are passed on at that pace).
const progressBytes = 1 << 20

// chunkBytes is about how much text one Encode call gets when Tokenize stops
// at TokenizeOptions.MaxTokens (a variable for tests).
var chunkBytes = 1 << 20

// Tokenize encodes c with tok. Text is encoded document by document (a
// continuous text as one piece, exactly as the tokenizer splits it); the result
// is cached under CacheDir/tokens, keyed by c.SHA256 and tok.ID(). A token file's
// ids are checked against tok.VocabSize() and used as they are; a file of
// uint16 ids is refused for a tokenizer of more than 65,536 ids, which such
// a file cannot have been written for.
//
// With opt.MaxTokens, a long text is encoded only until enough ids are made:
// by the tokenizer's EncodeHead where it has one (HeadEncoder), else in
// pieces of about chunkBytes, cut only before a space or a line break that
// has an ASCII letter or digit on each side: GPT-2's pre-tokenizer never
// joins such a character to the one before it, so the pieces' ids are
// exactly the head of the whole text's.
// Estimated memory for the ids (4 bytes per 4 bytes of text, or per wanted
// id) is checked against what the machine has before tokenizing, and, for
// a tokenizer that is a MergeMemorer, the memory its merges hold at once
// (see mergeUpFront): a text with a piece too long to merge in the memory
// there is (a run of one character of hundreds of megabytes) is refused
// with an error that says where the piece is.
//
// With opt.Threads other than 1, the corpus is encoded on that many
// goroutines (all cores by default), with exactly the ids of the encoding
// on one: documents are independent, so runs of short documents (about
// pieceBytes of text together) are encoded apart, and a text longer than
// pieceBytes is cut into pieces of about that size where a tokenizer that
// is a Cutter (*tokenizer.Tokenizer) says its pieces encode to the whole
// text's ids (a tokenizer whose steps allow no cut leaves its texts whole,
// as does any tokenizer that is not a Cutter). The jobs run in any order,
// at most jobsPerThread per goroutine ahead of the first one not yet
// collected (which bounds the ids held waiting, added to the memory
// estimate, and the work done past MaxTokens); the calling goroutine
// collects them in corpus order and makes the sequential loop's
// decisions: it stops at MaxTokens after the same document, and encodes
// again, with the limit the sequential loop's EncodeHead had, the one
// piece or document in which that loop stopped, so even a partial result
// is the sequential one. Progress is reported as jobs are collected
// (done grows, to the total); ctx is checked while waiting, and the
// workers, which encode with it too, are stopped and waited for before
// Tokenize returns. The encoding stays on one goroutine when that cannot
// gain: a corpus of one job, or a MaxTokens head smaller than a job per
// goroutine, or MaxTokens with a tokenizer that cannot cut (which would
// encode a long text whole only to keep its head).
//
// A tokenizer used with more than one thread must be safe for concurrent
// use (*tokenizer.Tokenizer is).
func Tokenize(ctx context.Context, c *Corpus, tok Tokenizer, opt TokenizeOptions) (*Tokens, error) {
	if c.Format == FormatTokens {
		vocab := tok.VocabSize()
		if c.IDBytes == 2 && vocab > 1<<16 {
			// Its ids would pass the check below, and be another tokenizer's.
			return nil, fmt.Errorf("corpus %s: an llm.c token file of uint16 ids (GPT-2's format) cannot hold the ids of this "+
				"model's tokenizer (a vocabulary of %d): it was tokenized for another model (GPT-2's); tokenize the text for "+
				"this one (llm.c: --model_desc llama-3 for Llama 3), or give the text itself", infile.Quote(c.Name), vocab)
		}
		for i, id := range c.Tokens {
			if id < 0 || int(id) >= vocab {
				return nil, fmt.Errorf("corpus %s: token %d: id %d is not below the vocabulary size %d", infile.Quote(c.Name), i, id, vocab)
			}
		}
		return &Tokens{Docs: [][]int32{c.Tokens}, SepAdded: true}, nil
	}

	var path string
	if !opt.NoCache {
		root, err := cacheRoot(opt.CacheDir)
		if err != nil {
			reportCacheError(opt, err)
		} else {
			path = cachePath(root, c.SHA256, tok.ID())
			if _, err := infile.Check(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				reportCacheError(opt, err) // a FIFO there would block both the read and the write
				path = ""
			} else if docs, ok := readCache(path, c.SHA256, tok.ID(), len(c.Docs), tok.VocabSize()); ok {
				lead, trail := tok.Specials()
				return &Tokens{Docs: docs, Separated: c.Separated, Lead: lead, Trail: trail}, nil
			}
		}
	}

	threads := runtime.GOMAXPROCS(0) // more goroutines than that would gain nothing
	if opt.Threads > 0 {
		threads = min(threads, opt.Threads)
	}
	var jobs []job
	_, cuts := tok.(Cutter)
	if threads > 1 && (cuts || opt.MaxTokens == 0) && (opt.MaxTokens == 0 || opt.MaxTokens >= threads*pieceBytes/4) {
		jobs = planJobs(c.Docs, tok)
	}
	need := uint64(c.Bytes()) // ids: about one per 4 bytes of text, 4 bytes each
	if opt.MaxTokens > 0 {
		need = min(need, 4*uint64(opt.MaxTokens)+uint64(4*chunkBytes))
	}
	if len(jobs) > 1 {
		need += uint64(jobsPerThread * threads * pieceBytes) // the ids of the jobs waiting for their turn
	}
	what := fmt.Sprintf("tokenizing corpus %s (%d bytes of text)", infile.Quote(c.Name), c.Bytes())
	if mm, ok := tok.(MergeMemorer); ok {
		merges, largest := mergeUpFront(c, tok, mm, opt, jobs, threads)
		if largest.need == unmergeable {
			return nil, errUnmergeable("tokenizing corpus "+infile.Quote(c.Name), c.Docs, largest)
		}
		need = satAdd(need, merges)
		if merges >= need/4 && largest.need > 0 {
			what = fmt.Sprintf("tokenizing corpus %s (%d bytes of text; %s hold %s, whose merge takes up to %s)",
				infile.Quote(c.Name), c.Bytes(), longPiece(c.Docs, largest), whyLong, sysmem.Bytes(largest.need))
		}
	}
	if err := sysmem.Check(what, need); err != nil {
		return nil, err
	}
	var reported int64 // bytes of text reported to opt.Progress
	textBytes := int64(c.Bytes())
	report := func(done int64) {
		if opt.Progress != nil && textBytes >= progressBytes && (done-reported >= progressBytes || done == textBytes) {
			opt.Progress(done, textBytes)
			reported = done
		}
	}
	var docs [][]int32
	var complete bool
	var err error
	if len(jobs) > 1 {
		docs, complete, err = tokenizeParallel(ctx, c, tok, opt, jobs, threads, report)
	} else {
		docs, complete, err = tokenizeSequential(ctx, c, tok, opt, report)
	}
	if err != nil {
		return nil, err
	}
	if path != "" && complete {
		if err := writeCache(path, c.SHA256, tok.ID(), docs); err != nil {
			reportCacheError(opt, err)
		}
	}
	lead, trail := tok.Specials()
	return &Tokens{Docs: docs, Separated: c.Separated, Lead: lead, Trail: trail, Partial: !complete}, nil
}

// tokenizeSequential is Tokenize's encoding on the calling goroutine:
// document by document, the long ones through encodeHead, stopping once
// opt.MaxTokens ids are made; complete is false when it stopped before the
// end.
func tokenizeSequential(ctx context.Context, c *Corpus, tok Tokenizer, opt TokenizeOptions, report func(int64)) (docs [][]int32, complete bool, err error) {
	docs = make([][]int32, 0, len(c.Docs))
	total := 0
	var encoded int64 // bytes of text encoded
	for _, d := range c.Docs {
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("tokenize %s: %w", infile.Quote(c.Name), err)
		}
		if opt.MaxTokens > 0 && total >= opt.MaxTokens {
			return docs, false, nil
		}
		ids, whole, err := encodeHead(ctx, tok, d, opt.MaxTokens-total, func(done int) { report(encoded + int64(done)) })
		if err != nil {
			return nil, false, fmt.Errorf("tokenize %s: %w", infile.Quote(c.Name), err)
		}
		encoded += int64(len(d))
		report(encoded)
		docs = append(docs, ids)
		total += len(ids)
		if !whole {
			return docs, false, nil
		}
	}
	return docs, true, nil
}

// encodeHead returns the ids of text: all of them in one Encode call when
// text is short; else, checking ctx as it goes, all of them (limit <= 0) or
// at least limit of them, through the tokenizer's EncodeHead where it has
// one, else through those of pieces of text (see Tokenize); whole is false
// when text was not encoded to its end. A long text is never encoded
// without ctx: a 30 MB document takes seconds. progress, when not nil, is
// told the bytes of text encoded as pieces are done.
func encodeHead(ctx context.Context, tok Tokenizer, text string, limit int, progress func(done int)) (ids []int32, whole bool, err error) {
	if len(text) <= chunkBytes {
		return tok.Encode(text), true, nil
	}
	if cut, ok := tok.(Cutter); ok && limit > 0 {
		if mm, ok := tok.(MergeMemorer); ok {
			return encodeHeadChecked(ctx, cut, mm, text, limit, progress)
		}
	}
	if h, ok := tok.(HeadEncoder); ok {
		return h.EncodeHead(ctx, text, max(limit, 0), progress)
	}
	if progress == nil {
		progress = func(int) {}
	}
	for done := 0; limit <= 0 || len(ids) < limit; progress(done) {
		if text == "" {
			return ids, true, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		cut := safeCut(text, chunkBytes)
		ids = append(ids, tok.Encode(text[:cut])...)
		text, done = text[cut:], done+cut
	}
	return ids, text == "", nil
}

// safeCut returns the first place at or after n where text may be cut
// without changing its tokens: before a ' ' or '\n' with an ASCII letter or
// digit on each side; len(text) when there is none.
func safeCut(text string, n int) int {
	for i := max(n, 1); i+1 < len(text); i++ {
		if (text[i] == ' ' || text[i] == '\n') && isAlnum(text[i-1]) && isAlnum(text[i+1]) {
			return i
		}
	}
	return len(text)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func reportCacheError(opt TokenizeOptions, err error) {
	if opt.CacheError != nil {
		opt.CacheError(fmt.Errorf("token cache: %w", err))
	}
}

// CountWords counts the words of text as lm-evaluation-harness does for its
// word_perplexity: the number of parts Python's re.split(r"\s+", text) gives,
// that is, the runs of whitespace plus one (so a leading or trailing run
// counts an empty word, and "" is one word). Whitespace is what Python's \s
// matches in a str pattern: Go's unicode.IsSpace and U+001C..U+001F.
func CountWords(text string) int {
	n, inSpace := 1, false
	for _, r := range text {
		space := unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
		if space && !inSpace {
			n++
		}
		inSpace = space
	}
	return n
}

package corpus

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// MergeMemorer is a Tokenizer that bounds the memory its merges hold
// beyond the text and its ids (*tokenizer.Tokenizer is one). BPE holds the
// whole of each piece of text the tokenizer's pre-tokenizer makes while it
// merges it, at some bytes per byte: a piece of many megabytes (a run of one
// character, a long line without spaces for a tokenizer that cuts only at
// spaces) takes gigabytes, however few ids it gives. Tokenize adds the bound
// to its memory check, so that such a corpus is refused before it is
// encoded rather than killed for want of memory.
type MergeMemorer interface {
	// MergeMemory is the most memory, in bytes, that encoding piece holds
	// at once (first: the piece starts its text, as in
	// Cutter.EncodePiece), found by running the tokenizer's pre-tokenizer
	// over it: a fraction of the time encoding takes; math.MaxUint64
	// (unmergeable) where piece holds a piece longer than the tokenizer
	// merges at all.
	MergeMemory(piece string, first bool) uint64
	// PieceMemory bounds MergeMemory of any text of n bytes without
	// reading it (as if it were all one piece).
	PieceMemory(n int) uint64
}

// scanFrom is the length from which a text's merges are bounded by
// MergeMemory, which reads it, rather than by PieceMemory, which does not
// (a variable for tests). Below it, PieceMemory bounds them to little
// (about 20 MB for GPT-2's tokenizer); above it, the text is a stretch in
// which the tokenizer found no place to cut (see planJobs), which only a
// text of very long pieces, or a tokenizer that cannot cut at all, has.
var scanFrom = 1 << 20

// mergeBound is the most memory the merges of a text hold at once, and the
// text: document doc, bytes [begin, end).
type mergeBound struct {
	need            uint64
	doc, begin, end int
}

// textMerge bounds the memory the merges of text hold (first: it starts its
// document).
func textMerge(mm MergeMemorer, text string, first bool) uint64 {
	if len(text) < scanFrom {
		return mm.PieceMemory(len(text))
	}
	return mm.MergeMemory(text, first)
}

// jobMerge bounds the memory the merges of job j hold: the largest of its
// documents', or its piece's.
func jobMerge(docs []string, mm MergeMemorer, j job) mergeBound {
	if j.docs == 0 {
		return mergeBound{textMerge(mm, docs[j.doc][j.begin:j.end], j.begin == 0), j.doc, j.begin, j.end}
	}
	var b mergeBound
	for k, d := range docs[j.doc : j.doc+j.docs] {
		if n := textMerge(mm, d, true); n > b.need || k == 0 {
			b = mergeBound{n, j.doc + k, 0, len(d)}
		}
	}
	return b
}

// mergeNeed bounds the memory the merges of jobs hold at once when threads
// goroutines encode them: the sum of the threads largest jobs' bounds. It
// returns the largest job's bound too, for the error that names it.
func mergeNeed(docs []string, mm MergeMemorer, jobs []job, threads int) (need uint64, largest mergeBound) {
	bounds := make([]mergeBound, len(jobs))
	for k, j := range jobs {
		bounds[k] = jobMerge(docs, mm, j)
	}
	slices.SortStableFunc(bounds, func(a, b mergeBound) int {
		switch {
		case a.need > b.need:
			return -1
		case a.need < b.need:
			return 1
		}
		return 0
	})
	for _, b := range bounds[:min(threads, len(bounds))] {
		need = satAdd(need, b.need)
	}
	if len(bounds) > 0 {
		largest = bounds[0]
	}
	return need, largest
}

// satAdd is a + b, or math.MaxUint64 where that overflows.
func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// longPiece names the stretch of text whose merges need the most memory,
// b, for the error that refuses it: where it is and how it starts.
func longPiece(docs []string, b mergeBound) string {
	head := docs[b.doc][b.begin:b.end]
	if len(head) > 24 {
		head = strings.ToValidUTF8(head[:24], "") + "..."
	}
	if len(docs) > 1 {
		return fmt.Sprintf("document %d's bytes %d to %d (%q)", b.doc, b.begin, b.end, head)
	}
	return fmt.Sprintf("bytes %d to %d (%q)", b.begin, b.end, head)
}

// whyLong says why a stretch of text takes much memory to encode.
const whyLong = "a piece that the tokenizer merges whole (BPE, as Hugging Face's tokenizers do) and cannot split (a long run without spaces or line breaks)"

// unmergeable is MergeMemorer's bound of a text with a piece longer than
// the tokenizer merges at all.
const unmergeable = math.MaxUint64

// errUnmergeable refuses stretch b of docs for what, whose merges are
// unmergeable.
func errUnmergeable(what string, docs []string, b mergeBound) error {
	return fmt.Errorf("%s: %s hold %s, longer than any the tokenizer can merge (2^31 symbols)", what, longPiece(docs, b), whyLong)
}

// mergeUpFront is the memory Tokenize checks up front for the merges of c's
// texts, and the largest job's bound. Where all of c is encoded, or its jobs
// on several goroutines, it is mergeNeed of every job (planned here for one
// goroutine); on several with MaxTokens, the jobs past the head count too,
// as the workers run ahead and where the head ends is known only once it is
// encoded. With MaxTokens on one goroutine it is what a text of chunkBytes
// can take: encodeHead encodes a text that short whole, and checks each
// piece of a longer one just before it encodes it (encodeHeadChecked).
func mergeUpFront(c *Corpus, tok Tokenizer, mm MergeMemorer, opt TokenizeOptions, jobs []job, threads int) (uint64, mergeBound) {
	switch {
	case len(jobs) > 1:
	case opt.MaxTokens > 0:
		return mm.PieceMemory(chunkBytes), mergeBound{}
	default:
		jobs, threads = planJobs(c.Docs, tok), 1
	}
	return mergeNeed(c.Docs, mm, jobs, threads)
}

// A head of a text is encoded in pieces of headBytesPerID bytes for each id
// still wanted (a generous bound: GPT-2 averages about 4 bytes an id on
// English), at least minHeadPiece, at most chunkBytes: a piece too short
// only makes one more.
const (
	headBytesPerID = 16
	minHeadPiece   = 64 << 10
)

// headPiece is about how many bytes of a text encodeHeadChecked encodes next
// when it still wants ids ids.
func headPiece(ids int) int {
	if ids >= chunkBytes/headBytesPerID {
		return chunkBytes
	}
	return min(chunkBytes, max(minHeadPiece, headBytesPerID*ids))
}

// encodeHeadChecked is encodeHead of a long text, at least limit ids
// (limit > 0), by a tokenizer that cuts and bounds its merges' memory: the
// text is encoded in pieces of about chunkBytes, or of headBytesPerID bytes
// for each id still wanted where that is less (at least minHeadPiece), cut
// where the tokenizer allows, each piece's merges checked against the
// memory available just before it is encoded (with MaxTokens, Tokenize
// checks no more up front than the head it keeps, which it cannot know until
// it is encoded). The ids are EncodeHead's (see Cutter). A piece of
// scanFrom bytes or more has its check read it whole (MergeMemory): for a
// head of a few ids, 9 ms spent on a megabyte it would not encode.
func encodeHeadChecked(ctx context.Context, tok Cutter, mm MergeMemorer, text string, limit int, progress func(done int)) ([]int32, bool, error) {
	var ids []int32
	for begin := 0; begin < len(text); {
		end := begin + tok.Cut(text[begin:], headPiece(limit-len(ids)))
		b := mergeBound{textMerge(mm, text[begin:end], begin == 0), 0, begin, end}
		if b.need == unmergeable {
			return nil, false, errUnmergeable("encoding", []string{text}, b)
		}
		if err := sysmem.Check(fmt.Sprintf("encoding %s, which hold %s,", longPiece([]string{text}, b), whyLong), b.need); err != nil {
			return nil, false, err
		}
		var report func(int)
		if progress != nil {
			report = func(done int) { progress(begin + done) }
		}
		head, whole, err := tok.EncodePiece(ctx, text[begin:end], begin == 0, limit-len(ids), report)
		if err != nil {
			return nil, false, err
		}
		ids = append(ids, head...)
		if !whole {
			return ids, false, nil
		}
		begin = end
	}
	return ids, true, nil
}

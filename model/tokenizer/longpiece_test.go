package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A piece of more than MaxPieceSymbols symbols (2^31) is too large for a
// test: these lower maxPieceSymbols, which every encoder checks, and
// check that no merge sees more symbols than it (mergeSeen), as no merge
// may see more than MaxPieceSymbols.

// withMaxPiece lowers maxPieceSymbols to n for the rest of the test.
func withMaxPiece(t testing.TB, n int) {
	t.Helper()
	old := maxPieceSymbols
	maxPieceSymbols = n
	t.Cleanup(func() { maxPieceSymbols = old })
}

// watchMerges records the longest sequence of symbols merged, until the
// test ends.
func watchMerges(t testing.TB) *int {
	longest := new(int)
	mergeSeen = func(n int) { *longest = max(*longest, n) }
	t.Cleanup(func() { mergeSeen = nil })
	return longest
}

// encoders are the public ways to encode a text, each with its error (or
// errEncodeNil where it returns nil for a text that is not empty: Encode,
// EncodeWithSpecials, which return no error).
var encoders = []struct {
	name string
	run  func(tok *Tokenizer, s string) ([]int32, error)
}{
	{"Encode", func(tok *Tokenizer, s string) ([]int32, error) { return nilErr(tok.Encode(s)) }},
	{"EncodeWithSpecials", func(tok *Tokenizer, s string) ([]int32, error) {
		ids, err := nilErr(tok.EncodeWithSpecials(s))
		lead, trail := tok.Specials()
		if err == nil {
			ids = ids[len(lead) : len(ids)-len(trail)]
		}
		return ids, err
	}},
	{"EncodeContext", func(tok *Tokenizer, s string) ([]int32, error) {
		return tok.EncodeContext(context.Background(), s, func(int) {})
	}},
	{"EncodeHead", func(tok *Tokenizer, s string) ([]int32, error) {
		ids, _, err := tok.EncodeHead(context.Background(), s, 0, nil)
		return ids, err
	}},
	{"EncodeHead/limit", func(tok *Tokenizer, s string) ([]int32, error) {
		ids, _, err := tok.EncodeHead(context.Background(), s, 1<<30, nil)
		return ids, err
	}},
	{"EncodePiece/first", func(tok *Tokenizer, s string) ([]int32, error) {
		ids, _, err := tok.EncodePiece(context.Background(), s, true, 0, nil)
		return ids, err
	}},
}

var errEncodeNil = errors.New("nil ids")

func nilErr(ids []int32) ([]int32, error) {
	if ids == nil {
		return nil, errEncodeNil
	}
	return ids, nil
}

// pieceTokenizers are GPT-2's tokenizer and every golden tokenizer.json, by
// name.
func pieceTokenizers(t *testing.T) map[string]*Tokenizer {
	t.Helper()
	gpt2, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	toks := map[string]*Tokenizer{"gpt2": gpt2}
	for _, name := range testdataTokenizers(t) {
		if toks[name], err = Load(filepath.Join("testdata", "hf", name)); err != nil {
			t.Fatal(err)
		}
	}
	return toks
}

// TestPieceTooLong encodes memoryTexts with every tokenizer and every
// public encoder, maxPieceSymbols lowered below some of their pieces (to
// 20, where the word cache may already hold a piece and mergeScan merges
// it, and to 1000, mergeHeap's): no merge sees more symbols than that;
// each encoder fails with ErrPieceTooLong (Encode and EncodeWithSpecials
// return nil) exactly where the text has a longer piece, which for GPT-2's
// path and byte-level BPE is where the encoding without the limit merges
// more symbols at once; MergeMemory says Unmergeable wherever one fails;
// and the others give the ids they give without the limit.
func TestPieceTooLong(t *testing.T) {
	texts := append([]string{"to be " + strings.Repeat("a", 1000) + " or " + strings.Repeat("b", 1001)}, memoryTexts...)
	refused := 0
	for name, tok := range pieceTokenizers(t) {
		exact := tok.hf == nil || tok.hf.model.byteLevel && !tok.hf.model.ignoreMerges
		for _, limit := range []int{20, 1000} {
			t.Run(fmt.Sprintf("%s/%d", name, limit), func(t *testing.T) {
				for _, s := range texts {
					longest := watchMerges(t)
					clearCaches(tok)
					want := tok.Encode(s)
					unlimited := *longest

					withMaxPiece(t, limit)
					*longest = 0
					var failed []string
					for _, enc := range encoders {
						ids, err := enc.run(tok, s)
						switch {
						case err == nil && !slices.Equal(ids, want):
							t.Errorf("%s(%.30q): ids differ from those without the limit", enc.name, s)
						case err != nil && err != errEncodeNil && !errors.Is(err, ErrPieceTooLong):
							t.Errorf("%s(%.30q): %v, not ErrPieceTooLong", enc.name, s, err)
						case err != nil && ids != nil:
							t.Errorf("%s(%.30q): %d ids and an error", enc.name, s, len(ids))
						case err != nil:
							failed = append(failed, enc.name)
						}
					}
					if *longest > limit {
						t.Errorf("%.30q: a merge of %d symbols, past the limit %d", s, *longest, limit)
					}
					if len(failed) > 0 && len(failed) < len(encoders) {
						t.Errorf("%.30q: only %v fail", s, failed)
					}
					if len(failed) > 0 {
						refused++
						if got := tok.MergeMemory(s, true); got != Unmergeable {
							t.Errorf("%.30q: encoding fails, but MergeMemory is %d, not Unmergeable", s, got)
						}
					}
					if exact && (len(failed) > 0) != (unlimited > limit) {
						t.Errorf("%.30q: failed %v, but the longest merge without the limit is of %d symbols", s, failed, unlimited)
					}
					if n := wordSymbols(tok, s); (len(failed) > 0) != (n > limit) {
						t.Errorf("%.30q: failed %v, but its longest piece or word has %d symbols", s, failed, n)
					}
					maxPieceSymbols = MaxPieceSymbols
				}
			})
		}
	}
	if total := 2 * len(texts) * len(pieceTokenizers(t)); refused < total/10 || refused > total/2 {
		t.Errorf("%d of %d encodings refused: the test tests little", refused, total)
	}
}

// wordSymbols is the most symbols of a piece (byte-level BPE, GPT-2's
// path) or SentencePiece-style word that encoding s merges at once, BPE
// taking all of them: for byte-level BPE the bytes of its longest piece.
func wordSymbols(tok *Tokenizer, s string) int {
	if tok.hf == nil {
		return longestGPT2(s)
	}
	p, n := tok.hf, 0
	p.walk(s, false, func(int32) error { return nil }, p.preTokenize, func(piece string, _ pieceAt) error {
		n = max(n, p.model.longestWord(piece))
		return nil
	})
	return n
}

// TestPieceAtLimit encodes a run of one letter after words with each
// tokenizer, maxPieceSymbols set to the symbols of its longest piece (or
// SentencePiece-style word): it encodes as without the limit, no merge of
// more symbols; one less is refused, by every encoder. For GPT-2's path
// and byte-level BPE, that piece is merged whole at the limit.
func TestPieceAtLimit(t *testing.T) {
	for name, tok := range pieceTokenizers(t) {
		exact := tok.hf == nil || tok.hf.model.byteLevel && !tok.hf.model.ignoreMerges
		for _, n := range []int{40, 3000} { // mergeScan's, mergeHeap's
			s := "to be " + strings.Repeat("a", n)
			longest := watchMerges(t)
			want := tok.Encode(s)
			limit := wordSymbols(tok, s)
			if limit < n {
				continue // a Split that removes the letters
			}
			*longest = 0

			withMaxPiece(t, limit)
			clearCaches(tok)
			for _, enc := range encoders {
				if ids, err := enc.run(tok, s); err != nil || !slices.Equal(ids, want) {
					t.Errorf("%s, a piece of %d symbols, the limit: %s: %v, ids equal %v", name, limit, enc.name, err, slices.Equal(ids, want))
				}
			}
			if *longest > limit || exact && *longest != limit {
				t.Errorf("%s: the longest merge at the limit %d is of %d symbols", name, limit, *longest)
			}
			maxPieceSymbols = limit - 1
			for _, enc := range encoders {
				if _, err := enc.run(tok, s); err != errEncodeNil && !errors.Is(err, ErrPieceTooLong) {
					t.Errorf("%s, a piece of %d symbols, one past the limit: %s: %v, not ErrPieceTooLong", name, limit, enc.name, err)
				}
			}
			maxPieceSymbols = MaxPieceSymbols
		}
	}
}

// TestPieceTooLongPastHead: EncodeHead and EncodePiece with a limit that
// the ids before a long piece reach stop before it, with the ids of the
// text without the piece's limit; without it they refuse it. A part after
// a cut (EncodePiece, first false) is refused alike.
func TestPieceTooLongPastHead(t *testing.T) {
	toks := pieceTokenizers(t)
	for _, name := range []string{"gpt2", "bl-llama3", "bl-qwen", "sp", "ms-always-split", "ms-first"} {
		tok := toks[name]
		s := strings.Repeat("to be or not ", 20) + strings.Repeat("a", 500)
		want := tok.Encode(s)
		withMaxPiece(t, 100)
		head, whole, err := tok.EncodeHead(context.Background(), s, 5, nil)
		if err != nil || whole || len(head) < 5 || !slices.Equal(head, want[:len(head)]) {
			t.Errorf("%s: EncodeHead of 5 ids: %d ids (whole %v), %v", name, len(head), whole, err)
		}
		head, whole, err = tok.EncodePiece(context.Background(), s, false, 5, nil)
		if err != nil || whole || len(head) < 5 {
			t.Errorf("%s: EncodePiece of 5 ids: %d ids (whole %v), %v", name, len(head), whole, err)
		}
		for _, first := range []bool{true, false} {
			if _, _, err := tok.EncodePiece(context.Background(), s, first, 0, nil); !errors.Is(err, ErrPieceTooLong) {
				t.Errorf("%s: EncodePiece (first %v) of the whole: %v, not ErrPieceTooLong", name, first, err)
			}
		}
		maxPieceSymbols = MaxPieceSymbols
	}
}

// TestPieceTooLongMessage: the error names where the piece is, how long it
// is and the limit, and says what to do.
func TestPieceTooLongMessage(t *testing.T) {
	toks := pieceTokenizers(t)
	withMaxPiece(t, 20)
	for name, want := range map[string]string{
		// " aaa...": bytes 5 to 36
		"gpt2": "encode: a piece too long to merge: bytes 5 to 36 of the text hold a piece of 31 symbols, which BPE merges whole, " +
			"more than the 20 it can (MaxPieceSymbols): break the run of text without spaces or line breaks there, or leave it out",
		"bl-llama3": "about bytes 5 to 36 of the text hold a piece of 31 symbols",
		// "▁a...a" (bytes 10 to 43 of "▁to▁be▁a...a", as normalized)
		"sp": "about bytes 8 to 36 of the text hold a piece of 31 symbols",
	} {
		_, err := toks[name].EncodeContext(context.Background(), "to be "+strings.Repeat("a", 30), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	_, err := toks["gpt2"].EncodeContext(context.Background(), "x\xff"+strings.Repeat("=", 25), nil)
	if want := "bytes 2 to 27 of the text hold a piece of 25 symbols"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("after an invalid byte: %v, want %q", err, want)
	}
}

// TestPieceAtOffset: the offset of a piece in a segment of a text is
// reckoned without overflow where the segment's length times the piece's
// offset in it is past an int (segments of a few GiB).
func TestPieceAtOffset(t *testing.T) {
	type offsetCase struct {
		at        pieceAt
		off, want int
	}
	half := math.MaxInt / 2
	cases := []offsetCase{
		{pieceAt{start: 10, end: 20, base: 4, nlen: 8}, 0, 15},
		{pieceAt{start: 10, end: 20, base: 4, nlen: 8}, 10, 20},
		{pieceAt{start: 10, end: 10, base: 0, nlen: 0}, 3, 10},
		{pieceAt{start: 0, end: half, base: half / 2, nlen: half}, 0, half / 2},
		{pieceAt{start: 1, end: 1 + half, base: half / 2, nlen: half}, half / 4, 1 + half/2 + half/4},
		{pieceAt{start: 0, end: half, base: half, nlen: 1}, 0, half},
	}
	if strconv.IntSize == 64 {
		g := 1 << 30 // a variable: 4 GiB overflows a constant int of 32 bits
		// Segments of 4 GiB: 4 GiB times 3 GiB overflows an int.
		cases = append(cases,
			offsetCase{pieceAt{start: 7, end: 7 + 4*g, base: 3 * g, nlen: 4 * g}, 0, 7 + 3*g},
			offsetCase{pieceAt{start: 7, end: 7 + 4*g, base: 3 * g, nlen: 6 * g}, 0, 7 + 2*g})
	}
	for _, c := range cases {
		if got := c.at.offset(c.off); got != c.want {
			t.Errorf("%+v.offset(%d) = %d, want %d", c.at, c.off, got, c.want)
		}
	}
}

// FuzzPieceLimit encodes any text with GPT-2's tokenizer and three golden
// tokenizer.json files (byte-level with a Split, Metaspace, SentencePiece)
// under any small maxPieceSymbols: no merge sees more symbols; the ids are
// those without the limit, or the error is ErrPieceTooLong and MergeMemory
// says Unmergeable; for GPT-2's, exactly where the encoding without the
// limit merges more at once.
func FuzzPieceLimit(f *testing.F) {
	for _, s := range append([]string{"to be " + strings.Repeat("a", 70), "x\xff" + strings.Repeat("=", 25), "日本語日本語 ▁▁ab"}, edgeCases...) {
		f.Add(s, uint8(10))
	}
	gpt2, err := GPT2()
	if err != nil {
		f.Fatal(err)
	}
	toks := []*Tokenizer{gpt2}
	for _, name := range []string{"bl-llama3", "ms-always-split", "sp-unk-fused"} {
		tok, err := Load(filepath.Join("testdata", "hf", name))
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, tok)
	}
	f.Fuzz(func(t *testing.T, s string, limit uint8) {
		longest := watchMerges(t)
		for i, tok := range toks {
			*longest = 0
			clearCaches(tok)
			want := tok.Encode(s)
			unlimited := *longest

			withMaxPiece(t, 2+int(limit)%100)
			*longest = 0
			ids, err := tok.EncodeContext(context.Background(), s, nil)
			switch {
			case *longest > maxPieceSymbols:
				t.Fatalf("tokenizer %d, %q, limit %d: a merge of %d symbols", i, s, maxPieceSymbols, *longest)
			case err == nil && !slices.Equal(ids, want):
				t.Fatalf("tokenizer %d, %q, limit %d: %v, without the limit %v", i, s, maxPieceSymbols, ids, want)
			case err != nil && !errors.Is(err, ErrPieceTooLong):
				t.Fatalf("tokenizer %d, %q, limit %d: %v", i, s, maxPieceSymbols, err)
			case err != nil && tok.MergeMemory(s, true) != Unmergeable:
				t.Fatalf("tokenizer %d, %q, limit %d: %v, and MergeMemory says %d", i, s, maxPieceSymbols, err, tok.MergeMemory(s, true))
			case tok.hf == nil && (err != nil) != (unlimited > maxPieceSymbols):
				t.Fatalf("tokenizer %d, %q, limit %d: %v, the longest merge without the limit %d", i, s, maxPieceSymbols, err, unlimited)
			}
			maxPieceSymbols = MaxPieceSymbols
		}
	})
}

package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// iota returns the ids base, base+1, ..., base+n-1, so that a token's value tells
// its absolute index.
func iota32(n int, base int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = base + int32(i)
	}
	return s
}

// window is a sequence in the terms of its absolute position: tokens [Begin, End)
// of the input, scoring those at index >= Begin+First.
type window struct{ Begin, End, First int }

// windows turns sequences cut from iota32(n, base) back into absolute windows.
func windows(t *testing.T, seqs []model.Sequence, base int32) []window {
	t.Helper()
	var ws []window
	for _, s := range seqs {
		b := int(s.Tokens[0] - base)
		for i, v := range s.Tokens {
			if int(v-base) != b+i {
				t.Fatalf("sequence %v is not a contiguous slice of the input", s.Tokens)
			}
		}
		ws = append(ws, window{b, b + len(s.Tokens), s.First})
	}
	return ws
}

func TestStreamTable(t *testing.T) {
	for _, c := range []struct {
		n, ctx int
		want   []window
	}{
		{0, 4, nil},
		{1, 4, nil},
		{2, 4, []window{{0, 2, 1}}},
		{4, 4, []window{{0, 4, 1}}},
		{5, 4, []window{{0, 4, 1}}}, // a 1-token tail predicts nothing
		{6, 4, []window{{0, 4, 1}, {4, 6, 1}}},
		{10, 4, []window{{0, 4, 1}, {4, 8, 1}, {8, 10, 1}}},
		{9, 4, []window{{0, 4, 1}, {4, 8, 1}}},
		{5, 2, []window{{0, 2, 1}, {2, 4, 1}}},
	} {
		got := windows(t, Stream(iota32(c.n, 7), c.ctx), 7)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Stream(n=%d, ctx=%d) = %v, want %v", c.n, c.ctx, got, c.want)
		}
	}
}

func TestStridedTable(t *testing.T) {
	for _, c := range []struct {
		n, ctx, stride int
		want           []window
	}{
		// Worked by hand from the Hugging Face loop (trg_len = end - prev_end).
		{10, 4, 2, []window{{0, 4, 1}, {2, 6, 2}, {4, 8, 2}, {6, 10, 2}}},
		{10, 4, 3, []window{{0, 4, 1}, {3, 7, 1}, {6, 10, 1}}},
		{10, 4, 1, []window{{0, 4, 1}, {1, 5, 3}, {2, 6, 3}, {3, 7, 3}, {4, 8, 3}, {5, 9, 3}, {6, 10, 3}}},
		{10, 4, 4, []window{{0, 4, 1}, {4, 8, 1}, {8, 10, 1}}},
		{9, 4, 4, []window{{0, 4, 1}, {4, 8, 1}}},
		{3, 8, 2, []window{{0, 3, 1}}},
		{9, 6, 4, []window{{0, 6, 1}, {4, 9, 2}}},
		{1, 4, 2, nil},
		{0, 4, 2, nil},
	} {
		got := windows(t, Strided(iota32(c.n, 100), c.ctx, c.stride), 100)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Strided(n=%d, ctx=%d, stride=%d) = %v, want %v", c.n, c.ctx, c.stride, got, c.want)
		}
	}
}

// hfStrided transliterates the Hugging Face loop: labels are the window's ids with
// the first len-trg_len masked (-100); the model shifts labels by one, so label j
// (j >= 1) is a target when unmasked. It returns, per window, the absolute indices
// scored.
func hfStrided(n, ctx, stride int) (begins []int, scored [][]int) {
	prevEnd := 0
	for begin := 0; begin < n; begin += stride {
		end := min(begin+ctx, n)
		trgLen := end - prevEnd
		l := end - begin
		var s []int
		for j := 1; j < l; j++ {
			if j >= l-trgLen { // labels[:, :-trg_len] = -100 masks j < l-trg_len
				s = append(s, begin+j)
			}
		}
		begins, scored = append(begins, begin), append(scored, s)
		prevEnd = end
		if end == n {
			break
		}
	}
	return begins, scored
}

func TestStridedProperties(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for ctx := 2; ctx <= 12; ctx++ {
			for stride := 1; stride <= ctx; stride++ {
				name := fmt.Sprintf("n=%d ctx=%d stride=%d", n, ctx, stride)
				seqs := Strided(iota32(n, 0), ctx, stride)
				ws := windows(t, seqs, 0)

				// Same windows and targets as the Hugging Face loop (empty windows dropped).
				begins, scored := hfStrided(n, ctx, stride)
				var wantWins [][]int
				for i := range begins {
					if len(scored[i]) > 0 {
						wantWins = append(wantWins, scored[i])
					}
				}
				var gotWins [][]int
				count := make([]int, n)
				for i, w := range ws {
					if w.End-w.Begin > ctx || w.First < 1 || w.First >= w.End-w.Begin {
						t.Fatalf("%s: window %d = %+v is malformed", name, i, w)
					}
					var s []int
					for j := w.Begin + w.First; j < w.End; j++ {
						s = append(s, j)
						count[j]++
					}
					gotWins = append(gotWins, s)
					if seqs[i].Scored() != len(s) {
						t.Fatalf("%s: Scored() = %d, want %d", name, seqs[i].Scored(), len(s))
					}
				}
				if !reflect.DeepEqual(gotWins, wantWins) {
					t.Fatalf("%s: targets %v, Hugging Face loop %v", name, gotWins, wantWins)
				}

				if stride == ctx {
					if want := windows(t, Stream(iota32(n, 0), ctx), 0); !reflect.DeepEqual(ws, want) {
						t.Fatalf("%s: Strided %v != Stream %v", name, ws, want)
					}
					continue
				}
				// stride < ctx: every target 1..n-1 is scored exactly once.
				for j := 1; j < n; j++ {
					if count[j] != 1 {
						t.Fatalf("%s: index %d scored %d times", name, j, count[j])
					}
				}
			}
		}
	}
}

func TestStreamCounts(t *testing.T) {
	for n := 0; n <= 50; n++ {
		for ctx := 2; ctx <= 9; ctx++ {
			seqs := Stream(iota32(n, 0), ctx)
			// Every window of L tokens scores L-1; a 1-token tail is dropped.
			want, scored := 0, 0
			for b := 0; b < n; b += ctx {
				want += min(ctx, n-b) - 1
			}
			for _, s := range seqs {
				if s.First != 1 || len(s.Tokens) < 2 || len(s.Tokens) > ctx {
					t.Fatalf("n=%d ctx=%d: bad window %+v", n, ctx, s)
				}
				scored += s.Scored()
			}
			if scored != want {
				t.Fatalf("n=%d ctx=%d: %d scored, want %d", n, ctx, scored, want)
			}
		}
	}
}

func TestDocumentsTable(t *testing.T) {
	const eot = 50256
	docs := [][]int32{{1, 2, 3}, {}, {4}, {11, 12, 13, 14, 15, 16}}
	got := Documents(docs, eot, 4, 2)
	want := []model.Sequence{
		{Tokens: []int32{eot, 1, 2, 3}, First: 1},
		{Tokens: []int32{eot, 4}, First: 1},
		// eot 11 12 13 14 15 16 is 7 tokens > ctx 4: strided by 2.
		{Tokens: []int32{eot, 11, 12, 13}, First: 1},
		{Tokens: []int32{12, 13, 14, 15}, First: 2},
		{Tokens: []int32{14, 15, 16}, First: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Documents = %v, want %v", got, want)
	}
}

func TestDocumentsScoreEveryToken(t *testing.T) {
	const eot = -1
	for ctx := 2; ctx <= 9; ctx++ {
		for stride := 1; stride <= ctx; stride++ {
			var docs [][]int32
			base := int32(0)
			for n := 0; n <= 25; n++ {
				docs = append(docs, iota32(n, base))
				base += int32(n)
			}
			count := make([]int, base)
			for _, s := range Documents(docs, eot, ctx, stride) {
				if len(s.Tokens) > ctx || s.First < 1 {
					t.Fatalf("ctx=%d stride=%d: bad sequence %+v", ctx, stride, s)
				}
				for _, v := range s.Tokens[s.First:] {
					if v == eot {
						t.Fatalf("ctx=%d stride=%d: eot scored in %+v", ctx, stride, s)
					}
					count[v]++
				}
			}
			// Windows stride over eot+doc, so with stride == ctx a window start
			// inside a long document goes unscored, as in Stream; otherwise every
			// real token is predicted exactly once.
			for v, c := range count {
				if stride < ctx && c != 1 {
					t.Fatalf("ctx=%d stride=%d: token %d scored %d times", ctx, stride, v, c)
				}
				if c > 1 {
					t.Fatalf("ctx=%d stride=%d: token %d scored %d times", ctx, stride, v, c)
				}
			}
		}
	}
}

func TestCheckWindow(t *testing.T) {
	for _, c := range []struct {
		ctx, stride int
		err         string
	}{
		{2, 1, ""}, {2, 2, ""}, {1024, 512, ""},
		{1, 1, "context length 1"}, {0, 0, "context length 0"},
		{4, 0, "stride 0"}, {4, 5, "stride 5"}, {4, -1, "stride -1"},
	} {
		err := CheckWindow(c.ctx, c.stride)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckWindow(%d, %d) = %v, want %q", c.ctx, c.stride, err, c.err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Stream with ctx 1 did not panic")
		}
	}()
	Stream([]int32{1, 2}, 1)
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"stream", "strided", "documents"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("sliding"); err == nil {
		t.Error("ParseMode(sliding) succeeded")
	}
}

func TestCheckModeWindow(t *testing.T) {
	for _, c := range []struct {
		mode        Mode
		ctx, stride int
		bos         bool
		err         string
	}{
		{ModeStrided, 4, 4, false, ""}, // the stream's windows, as Stream
		{ModeStrided, 4, 4, true, "stride 4"},
		{ModeDocuments, 4, 3, false, ""},
		{ModeDocuments, 4, 4, false, "stride 4: documents mode"},
		{ModeDocuments, 4, 4, true, "stride 4"},
		{ModeDocuments, 2, 1, false, ""},
		{ModeDocuments, 2, 2, false, "between 1 and 1"},
		{ModeStream, 4, 4, false, ""},
		{ModeDocuments, 1, 1, false, "context length 1"},
	} {
		err := CheckModeWindow(c.mode, c.ctx, c.stride, c.bos)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckModeWindow(%s, %d, %d, %v) = %v, want %q", c.mode, c.ctx, c.stride, c.bos, err, c.err)
		}
	}
}

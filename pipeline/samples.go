package pipeline

import (
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// Mode is an evaluation method: how the corpus tokens are cut into windows.
type Mode string

// The evaluation methods of DESIGN.md.
const (
	// ModeStream cuts the token stream into non-overlapping windows of ctx tokens.
	ModeStream Mode = "stream"
	// ModeStrided slides a window of ctx tokens by stride tokens, scoring each
	// token once (Hugging Face's "perplexity of fixed-length models").
	ModeStrided Mode = "strided"
	// ModeDocuments scores each document on its own, after an <|endoftext|> token.
	ModeDocuments Mode = "documents"
)

// ParseMode returns the Mode named s ("stream", "strided" or "documents").
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeStream, ModeStrided, ModeDocuments:
		return m, nil
	}
	return "", fmt.Errorf("unknown evaluation mode %q (want stream, strided or documents)", s)
}

// Sample is a sequence to score together with the number of UTF-8 bytes its
// targets decode to, the denominator of bits per byte.
type Sample struct {
	model.Sequence
	// Bytes is the UTF-8 bytes of the text the scored targets Tokens[First:]
	// stand for: a special token added to the text (a separator, the
	// tokenizer's BOS or EOS) stands for none.
	Bytes int
	// Doc and Pos say where the targets are in the corpus: Doc is the
	// document's index in the corpus (documents mode: empty documents, which
	// give no sample, counted; 0 in the other modes) and Pos the position of the first
	// target, Tokens[First], in the document's ids (the added eot not
	// counted) or in the stream (a BOS added by EvalConfig.BOSEachWindow not
	// counted); target k is at Pos+k.
	Doc, Pos int
}

// placed is a window with where its targets are: the index of its document
// and the position of its first target, Tokens[First], in the ids it was cut
// from (Sample.Doc and Sample.Pos).
type placed struct {
	model.Sequence
	doc, pos int
}

func sequences(ps []placed) []model.Sequence {
	seqs := make([]model.Sequence, len(ps))
	for i, p := range ps {
		seqs[i] = p.Sequence
	}
	return seqs
}

// CheckWindow reports whether ctx and stride describe valid windows: a window
// needs at least two tokens to predict one, and a stride must advance by at
// least one token without skipping any (1 <= stride <= ctx).
// Its errors are *SettingError ("context length" or "stride").
func CheckWindow(ctx, stride int) error {
	if ctx < 2 {
		return &SettingError{"context length", ctx, "must be at least 2"}
	}
	if stride < 1 || stride > ctx {
		return &SettingError{"stride", stride, fmt.Sprintf("must be between 1 and the context length %d", ctx)}
	}
	return nil
}

// SettingError is a setting out of its range (CheckWindow, CheckBOSWindow,
// CheckTopLogprobs): its name as messages spell it, its value and why.
type SettingError struct {
	Setting string
	Value   int
	Reason  string
}

// Error reads "setting value: reason".
func (e *SettingError) Error() string { return fmt.Sprintf("%s %d: %s", e.Setting, e.Value, e.Reason) }

// CheckBOSWindow is CheckWindow for windows that start with a BOS
// (EvalConfig.BOSEachWindow): such a window holds the BOS and at most ctx-1
// corpus tokens, so a stride must be between 1 and ctx-1 for no token to be
// skipped.
func CheckBOSWindow(ctx, stride int) error {
	if err := CheckWindow(ctx, stride); err != nil {
		return err
	}
	if stride > ctx-1 {
		return &SettingError{"stride", stride, fmt.Sprintf("with a BOS at the start of every window, a window holds ctx-1 = %d corpus tokens, "+
			"so the stride must be between 1 and %d", ctx-1, ctx-1)}
	}
	return nil
}

// CheckModeWindow is the check of ctx and stride that mode needs:
// CheckBOSWindow where every window starts with a BOS (bos, in the strided
// and documents modes; stream mode sets its own stride), else CheckWindow,
// and in documents mode, which predicts every token of a document, a stride
// below ctx: windows of a long document that advance by the whole context
// would start each later window with a token no window predicts.
func CheckModeWindow(mode Mode, ctx, stride int, bos bool) error {
	if bos {
		return CheckBOSWindow(ctx, stride)
	}
	if err := CheckWindow(ctx, stride); err != nil {
		return err
	}
	if mode == ModeDocuments && stride > ctx-1 {
		return &SettingError{"stride", stride, fmt.Sprintf("documents mode predicts every token of a document, and windows of a longer "+
			"document advancing by the whole context %d would leave the first token of each later one unpredicted, "+
			"so the stride must be between 1 and %d", ctx, ctx-1)}
	}
	return nil
}

// Stream cuts tokens into consecutive non-overlapping windows of ctx tokens; each
// window predicts its tokens 2..L from their prefix (First = 1). The last, shorter
// window counts too, unless it holds a single token, which predicts nothing.
// The windows share tokens' backing array.
//
// Stream panics if ctx < 2 (see CheckWindow); callers validate user input first.
func Stream(tokens []int32, ctx int) []model.Sequence {
	mustWindow(ctx, ctx)
	seqs := make([]model.Sequence, 0, (len(tokens)+ctx-1)/ctx)
	for begin := 0; begin < len(tokens); begin += ctx {
		end := min(begin+ctx, len(tokens))
		if end-begin < 2 {
			break
		}
		seqs = append(seqs, model.Sequence{Tokens: tokens[begin:end:end], First: 1})
	}
	return seqs
}

// Strided is the Hugging Face "perplexity of fixed-length models" loop: windows
// of up to ctx tokens start every stride tokens (0, stride, 2*stride, ...); each
// scores only the targets no earlier window scored (absolute index >= the previous
// window's end), never its own first token; the loop stops after the window
// that reaches the end of tokens. With stride < ctx every token but the first is
// scored exactly once; with stride == ctx, Strided equals Stream.
//
// Strided panics if CheckWindow(ctx, stride) fails; callers validate user input first.
func Strided(tokens []int32, ctx, stride int) []model.Sequence {
	mustWindow(ctx, stride)
	return sequences(appendStrided(nil, tokens, ctx, stride, 0, 0))
}

// appendStrided appends Strided's windows of tokens, of document doc, whose
// tokens[0] is at position base of the document (-1 for an added eot).
func appendStrided(seqs []placed, tokens []int32, ctx, stride, doc, base int) []placed {
	prevEnd := 0
	for begin := 0; begin < len(tokens); begin += stride {
		end := min(begin+ctx, len(tokens))
		first := max(prevEnd-begin, 1)
		if end-begin > first {
			seqs = append(seqs, placed{model.Sequence{Tokens: tokens[begin:end:end], First: first}, doc, base + begin + first})
		}
		prevEnd = end
		if end == len(tokens) {
			break
		}
	}
	return seqs
}

// Documents scores each document on its own: the document is prefixed with eot
// (<|endoftext|>) so that every one of its tokens is predicted. A document whose
// eot+tokens do not fit in ctx is strided over (Strided with ctx and stride).
// Empty documents score nothing and give no sequence. The sequences do not share
// memory with docs (each document is copied once, after its eot).
//
// Documents panics if CheckWindow(ctx, stride) fails; callers validate user input first.
func Documents(docs [][]int32, eot int32, ctx, stride int) []model.Sequence {
	mustWindow(ctx, stride)
	return sequences(documents(docs, eot, ctx, stride))
}

// documents is Documents with each window's place (the added eot is not
// counted in the positions).
func documents(docs [][]int32, eot int32, ctx, stride int) []placed {
	var seqs []placed
	for i, doc := range docs {
		if len(doc) == 0 {
			continue
		}
		buf := make([]int32, 0, len(doc)+1)
		buf = append(append(buf, eot), doc...)
		if len(buf) <= ctx {
			seqs = append(seqs, placed{model.Sequence{Tokens: buf, First: 1}, i, 0})
			continue
		}
		seqs = appendStrided(seqs, buf, ctx, stride, i, -1)
	}
	return seqs
}

// appendBOSStrided appends the windows of ids, of document doc, whose ids[0]
// is at position base, when every window starts with bos
// (EvalConfig.BOSEachWindow): windows of bos followed by up to ctx-1 ids start
// every stride ids (0, stride, 2*stride, ...), until one reaches the end of
// ids. Each scores the ids no earlier window scored, its first id included
// (predicted from bos alone), so with stride <= ctx-1 every id is scored
// exactly once; bos is context, never a target. With stride == ctx-1 the
// windows do not overlap (stream mode). The windows are copies: they do not
// share ids' memory.
func appendBOSStrided(seqs []placed, ids []int32, bos int32, ctx, stride, doc, base int) []placed {
	n := ctx - 1 // ids per window
	prevEnd := 0
	for begin := 0; begin < len(ids); begin += stride {
		end := min(begin+n, len(ids))
		first := max(prevEnd-begin, 0) // ids[begin:begin+first] were scored by an earlier window
		if end-begin > first {
			w := make([]int32, 0, 1+end-begin)
			w = append(append(w, bos), ids[begin:end]...)
			seqs = append(seqs, placed{model.Sequence{Tokens: w, First: 1 + first}, doc, base + begin + first})
		}
		prevEnd = end
		if end == len(ids) {
			break
		}
	}
	return seqs
}

// streamBOS is the stream's windows when every window starts with bos: a
// stream that begins with bos already (a Llama 2-style tokenizer puts its
// BOS before the text; a token file or documents joined with GPT-2's
// <|endoftext|> before each) has that token start its first window, so it is
// not doubled and, as without BOSEachWindow, it is no target.
func streamBOS(stream []int32, bos int32, ctx, stride int) []placed {
	if len(stream) > 0 && stream[0] == bos {
		return appendBOSStrided(nil, stream[1:], bos, ctx, stride, 0, 1)
	}
	return appendBOSStrided(nil, stream, bos, ctx, stride, 0, 0)
}

// documentsBOS is documents when every window starts with bos: each
// document's windows are appendBOSStrided's. A document that fits in one
// window gives documents' window; a longer one has bos before each of its
// windows, not only before its first.
func documentsBOS(docs [][]int32, bos int32, ctx, stride int) []placed {
	var seqs []placed
	for i, doc := range docs {
		seqs = appendBOSStrided(seqs, doc, bos, ctx, stride, i, 0)
	}
	return seqs
}

func mustWindow(ctx, stride int) {
	if err := CheckWindow(ctx, stride); err != nil {
		panic("pipeline: " + err.Error())
	}
}

// MaxTopLogprobs is the most top log-probabilities a target may keep
// (--top-logprobs K). Every backend keeps this many: package backend fails
// to compile if the GPU kernels' capacity (shaders.MaxTopLogprobs) falls
// below it.
const MaxTopLogprobs = 100

// CheckTopLogprobs reports a --top-logprobs K outside 0..MaxTopLogprobs (0:
// none), or above the vocabulary size vocab when vocab > 0, as a
// *SettingError.
func CheckTopLogprobs(k, vocab int) error {
	if k < 0 || k > MaxTopLogprobs {
		return &SettingError{"top-logprobs", k, fmt.Sprintf("want 1 to %d", MaxTopLogprobs)}
	}
	if vocab > 0 && k > vocab {
		return &SettingError{"top-logprobs", k, fmt.Sprintf("the vocabulary has only %d tokens", vocab)}
	}
	return nil
}

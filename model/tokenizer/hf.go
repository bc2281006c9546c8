package tokenizer

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
)

// pipeline is how a tokenizer.json (other than GPT-2's) encodes, the steps
// of Hugging Face's tokenizers in their order: added tokens found in the raw
// text; the rest normalized; added tokens marked "normalized" found in that;
// the rest pre-tokenized into pieces; each piece run through the model.
type pipeline struct {
	added     *addedMatcher // tokens matched in the raw text
	addedNorm *addedMatcher // tokens matched in normalized text
	norm      []normStep
	normRest  []normStep // norm less its Prepend steps: for the stretch that continues a text cut before it (EncodePiece)
	pre       []preStep
	model     *hfModel
	decoder   []decStep
	pieces    []string // id -> the token's text in the file (for the decoder); a normalized added token's, normalized
	cuts      bool     // a text may be cut before a space between ASCII letters or digits (cut.go)
}

// loadHF builds the tokenizer of a tokenizer.json that is not GPT-2-style.
// checked is f.Model.Vocab's checkVocab.
func loadHF(f *hfFile, checked checkedVocab, merges []mergeRule, path string, cfg *tokenizerConfig, id string) (*Tokenizer, error) {
	if checked.err != nil {
		return nil, checked.err
	}
	vocab, byID, size := checked.ids, checked.byID, checked.size
	if p := f.Model.SubwordPrefix; p != nil && *p != "" {
		return nil, fmt.Errorf("load %s: BPE with continuing_subword_prefix %q is not supported", path, *p)
	}
	if s := f.Model.EndOfWord; s != nil && *s != "" {
		return nil, fmt.Errorf("load %s: BPE with end_of_word_suffix %q is not supported", path, *s)
	}
	added, err := checkAdded(f.AddedTokens, vocab, byID, path)
	if err != nil {
		return nil, err
	}
	for _, a := range added {
		size = max(size, int(a.ID)+1)
	}
	p := &pipeline{}
	if p.norm, err = parseNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	for _, st := range p.norm {
		if st.kind != "Prepend" {
			p.normRest = append(p.normRest, st)
		}
	}
	if p.pre, err = parsePreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := checkPreSteps(p.pre); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	byteLevel := slices.ContainsFunc(p.pre, func(s preStep) bool { return s.byteLevel })
	if p.model, err = newHFModel(f.Model, vocab, merges, byteLevel, size, path); err != nil {
		return nil, err
	}
	if !byteLevel {
		p.model.wordStart = wordStartOf(p.norm, p.pre, vocab, p.model.chars)
	}
	if p.decoder, err = parseDecoder(f.Decoder, "decoder"); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	tmpl, err := parsePostProcessor(f.PostProcessor, "post_processor", size)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}

	var raw, normalized []addedToken
	for _, a := range added {
		if a.Normalized {
			a.Content = normalize(p.norm, a.Content)
			normalized = append(normalized, a)
		} else {
			raw = append(raw, a)
		}
	}
	p.added = newAddedMatcher(raw, cfg.SplitSpecialTokens)
	p.addedNorm = newAddedMatcher(normalized, cfg.SplitSpecialTokens)
	p.cuts = p.cutsAllowed()

	p.pieces = make([]string, size)
	for text, i := range vocab {
		p.pieces[i] = text
	}
	for _, a := range raw {
		p.pieces[a.ID] = a.Content
	}
	for _, a := range normalized {
		p.pieces[a.ID] = a.Content // decoded normalized, as Hugging Face does
	}
	t := &Tokenizer{id: id, tokens: make([]string, size), eot: -1, bos: -1, hf: p, lead: tmpl.lead, trail: tmpl.trail}
	for i, piece := range p.pieces {
		if piece != "" {
			t.tokens[i] = decode(p.decoder, []string{piece}, true)
		}
	}
	if err := t.setSpecials(cfg, added, vocab); err != nil {
		return nil, err
	}
	return t, nil
}

// wordStartOf is the word-start character of a SentencePiece-style model
// (see findWordStart): what its normalizer or Metaspace pre-tokenizer puts
// for spaces or before the text, when that is one character; -1 when there
// is none.
func wordStartOf(norm []normStep, pre []preStep, vocab map[string]int32, chars map[rune]int32) rune {
	var candidates []string
	for _, st := range norm {
		c := st.prepend
		if st.kind == "Replace" {
			c = st.replace.content
		}
		candidates = append(candidates, c)
	}
	for _, st := range pre {
		if st.meta != nil {
			candidates = append(candidates, string(st.meta.repl))
		}
	}
	for _, c := range candidates {
		if r, n := utf8.DecodeRuneInString(c); n > 0 && n == len(c) && r != utf8.RuneError {
			if w := findWordStart(r, vocab, chars); w >= 0 {
				return w
			}
		}
	}
	return -1
}

// setSpecials finds the tokenizer's BOS and EOT and, for the Llama classes
// of tokenizer_config.json, the template transformers uses instead of the
// file's post-processor.
func (t *Tokenizer) setSpecials(cfg *tokenizerConfig, added []addedToken, vocab map[string]int32) error {
	lookup := func(name string, what string) (int32, error) {
		id, ok := idOf(name, added, vocab)
		if !ok {
			return -1, fmt.Errorf("load %s: %s %q is not in the vocabulary", cfg.path, what, name)
		}
		return id, nil
	}
	lead, trail, decides, err := cfg.template()
	if err != nil {
		return fmt.Errorf("load %w", err)
	}
	if decides {
		t.lead, t.trail = nil, nil
		for _, name := range lead {
			id, err := lookup(name, "bos_token")
			if err != nil {
				return err
			}
			t.lead = append(t.lead, id)
		}
		for _, name := range trail {
			id, err := lookup(name, "eos_token")
			if err != nil {
				return err
			}
			t.trail = append(t.trail, id)
		}
	}
	switch {
	case len(t.lead) > 0:
		t.bos = t.lead[0]
	case cfg.BOS != "":
		if t.bos, err = lookup(string(cfg.BOS), "bos_token"); err != nil {
			return err
		}
	}
	for _, name := range []string{eotText, "<|end_of_text|>"} {
		if id, ok := idOf(name, added, vocab); ok {
			t.eot = id
			return nil
		}
	}
	if cfg.EOS != "" {
		t.eot, err = lookup(string(cfg.EOS), "eos_token")
	}
	return err
}

// encode appends the ids of text (no special tokens added) to e.dst. With
// rest, text is the part of a longer one after a cut (see Cut): its first
// stretch continues a stretch of that text, so it gets no Prepend and does
// not start the text.
func (p *pipeline) encode(e *encoding, text string, rest bool) error {
	return p.walk(text, rest, e.special, p.preTokenize, func(piece string, at pieceAt) error {
		return p.model.encodeSteps(e, piece, at)
	})
}

// pieceAt is where a piece that the model gets lies: in the segment
// [start, end) of the text between added tokens, from byte base of the
// segment's normalized form, which is nlen bytes long.
type pieceAt struct{ start, end, base, nlen int }

// offset is the offset in the text that off bytes of the piece stand for:
// the segment's start, plus the part of it that the pieces so far stand for
// (for progress and errors), in 128 bits: the product of two lengths of a
// few GiB overflows an int.
func (a pieceAt) offset(off int) int {
	span, done := uint64(a.end-a.start), uint64(a.base+off)
	hi, lo := bits.Mul64(span, done)
	if n := uint64(max(a.nlen, 1)); hi < n { // else the quotient is 2^64 or more: past span
		q, _ := bits.Div64(hi, lo, n)
		span = min(span, q)
	}
	return a.start + int(span)
}

// preTokenize is preTokenize with the pipeline's pre-tokenizer.
func (p *pipeline) preTokenize(s string, first bool, emit func(piece string) error) error {
	return preTokenize(p.pre, s, first, emit)
}

// walk runs the steps before the model on text (rest as for encode):
// added tokens found in the raw text, the rest normalized, added tokens
// found in that, the rest pre-tokenized by pre (p.preTokenize, but for
// MergeMemory). It calls special with each added token's id and fn with
// each piece, in order, and stops at their first error.
func (p *pipeline) walk(text string, rest bool, special func(id int32) error,
	pre func(s string, first bool, emit func(piece string) error) error, fn func(piece string, at pieceAt) error) error {
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	return p.added.split(text, func(start, end int) error {
		steps := p.norm
		if rest && start == 0 {
			steps = p.normRest
		}
		n, lead := normalizeLead(steps, text[start:end])
		done := 0 // bytes of n pre-tokenized
		return p.addedNorm.split(n, func(s2, e2 int) error {
			// The stretch starts the text (Metaspace's "first") when it
			// is at byte 0 of the text, before any added token.
			first := !rest && start == 0 && s2 == 0 && lead
			return pre(n[s2:e2], first, func(piece string) error {
				at := pieceAt{start: start, end: end, base: done, nlen: len(n)}
				done += len(piece)
				return fn(piece, at)
			})
		}, special)
	}, special)
}

// replaceInvalid replaces each byte of s that is not part of valid UTF-8
// with U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

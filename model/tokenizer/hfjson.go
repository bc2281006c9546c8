package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
)

// hfFile is a Hugging Face tokenizer.json as this package reads it.
type hfFile struct {
	AddedTokens   []addedToken    `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         *modelJSON      `json:"model"`
}

// gpt2Style reports whether f is a GPT-2 tokenizer, which this package runs
// as it runs vocab.json + merges.txt: its pre-tokenizer is a lone ByteLevel,
// or none (then GPT-2's split is used) with a byte-level vocabulary.
func (f *hfFile) gpt2Style() bool {
	var c component
	if !isNull(f.PreTokenizer) {
		return json.Unmarshal(f.PreTokenizer, &c) == nil && c.Type == "ByteLevel"
	}
	if f.Model.ByteFallback {
		return false
	}
	for b := range 256 {
		if _, ok := f.Model.Vocab[string(byteToRune[b])]; !ok {
			return false
		}
	}
	return true
}

// template is what a post-processor puts around a text (its "single"
// template): ids before and after.
type template struct {
	lead, trail []int32
}

// parsePostProcessor reads a post-processor (null, ByteLevel,
// TemplateProcessing or a Sequence of those) into the template of a single
// text; ByteLevel changes only offsets. size bounds the ids.
func parsePostProcessor(raw json.RawMessage, where string, size int) (template, error) {
	var t template
	if isNull(raw) {
		return t, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return t, fmt.Errorf("%s: %w", where, err)
	}
	switch c.Type {
	case "ByteLevel":
		return t, nil
	case "TemplateProcessing":
		return parseTemplate(raw, where, size)
	case "Sequence":
		var seq struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return t, fmt.Errorf("%s: %w", where, err)
		}
		templates := 0
		for i, sub := range seq.Processors {
			st, err := parsePostProcessor(sub, fmt.Sprintf("%s.processors[%d]", where, i), size)
			if err != nil {
				return t, err
			}
			var sc component
			_ = json.Unmarshal(sub, &sc)
			if sc.Type != "ByteLevel" {
				if templates++; templates > 1 {
					return t, fmt.Errorf("%s: more than one template in a Sequence is not supported", where)
				}
				t = st
			}
		}
		return t, nil
	}
	return t, fmt.Errorf("%s: post_processor %q is not supported (supported: ByteLevel, TemplateProcessing, Sequence)", where, c.Type)
}

// parseTemplate reads a TemplateProcessing's "single" template: special
// tokens (their ids from "special_tokens") around the sequence $A.
func parseTemplate(raw json.RawMessage, where string, size int) (template, error) {
	var tp struct {
		Single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int64 `json:"ids"`
		} `json:"special_tokens"`
	}
	var t template
	if err := json.Unmarshal(raw, &tp); err != nil {
		return t, fmt.Errorf("%s: TemplateProcessing: %w", where, err)
	}
	seen := false
	for i, piece := range tp.Single {
		switch {
		case piece.Sequence != nil && piece.SpecialToken == nil:
			if piece.Sequence.ID != "A" || seen {
				return t, fmt.Errorf("%s: TemplateProcessing single[%d]: want the sequence $A once, got $%s", where, i, piece.Sequence.ID)
			}
			seen = true
		case piece.SpecialToken != nil && piece.Sequence == nil:
			st, ok := tp.SpecialTokens[piece.SpecialToken.ID]
			if !ok {
				return t, fmt.Errorf("%s: TemplateProcessing single[%d]: special token %q is not in special_tokens", where, i, piece.SpecialToken.ID)
			}
			for _, id := range st.IDs {
				if id < 0 || id >= int64(size) {
					return t, fmt.Errorf("%s: TemplateProcessing special token %q: id %d is outside the vocabulary (%d tokens)", where, piece.SpecialToken.ID, id, size)
				}
				if seen {
					t.trail = append(t.trail, int32(id))
				} else {
					t.lead = append(t.lead, int32(id))
				}
			}
		default:
			return t, fmt.Errorf(`%s: TemplateProcessing single[%d]: want {"SpecialToken": ...} or {"Sequence": ...}`, where, i)
		}
	}
	if !seen {
		return t, fmt.Errorf("%s: TemplateProcessing single has no $A", where)
	}
	return t, nil
}

// checkedVocab is a vocabulary checked by checkVocab: ids in range, each
// used once, as int32; the token of each id; one past the largest id; or
// the error that stops it.
type checkedVocab struct {
	ids  map[string]int32
	byID map[int32]string
	size int
	err  error
}

// checkVocab checks a vocabulary's ids (in range, each used once).
func checkVocab(vocab map[string]int64, where string) checkedVocab {
	v := make(map[string]int32, len(vocab))
	byID := make(map[int32]string, len(vocab))
	size := 0
	for text, i := range vocab {
		if i < 0 || i >= maxID {
			return checkedVocab{err: fmt.Errorf("load %s: token %q has id %d, outside [0, %d)", where, text, i, maxID)}
		}
		if prev, dup := byID[int32(i)]; dup {
			a, b := min(prev, text), max(prev, text)
			return checkedVocab{err: fmt.Errorf("load %s: tokens %q and %q share id %d", where, a, b, i)}
		}
		v[text] = int32(i)
		byID[int32(i)] = text
		size = max(size, int(i)+1)
	}
	return checkedVocab{ids: v, byID: byID, size: size}
}

// checkAdded checks the added tokens against the ids Hugging Face gives them
// when it loads the file (the vocabulary's id for a token already in it, else
// the next id after the vocabulary's entries and the added tokens so far): a
// file that says otherwise would be tokenized with other ids than it claims.
// It returns the tokens without repeats (the later flags win).
func checkAdded(added []addedToken, vocab map[string]int32, byID map[int32]string, where string) ([]addedToken, error) {
	assigned := map[string]int64{}
	largest := int64(-1) // the largest id given to an added token so far
	var out []addedToken
	for i, a := range added {
		if a.ID < 0 || a.ID >= maxID {
			return nil, fmt.Errorf("load %s: added token %q has id %d, outside [0, %d)", where, a.Content, a.ID, maxID)
		}
		if a.Content == "" {
			return nil, fmt.Errorf("load %s: added_tokens[%d] (id %d) has no content", where, i, a.ID)
		}
		want, ok := assigned[a.Content]
		if !ok {
			if id, inVocab := vocab[a.Content]; inVocab {
				want = int64(id)
			} else {
				want = int64(len(vocab))
				if largest >= 0 && (largest >= want || len(vocab) == 0) {
					want = largest + 1
				}
			}
			assigned[a.Content] = want
			largest = max(largest, want)
		}
		if a.ID != want {
			return nil, fmt.Errorf("load %s: added token %q has id %d, but Hugging Face's tokenizers would give it id %d (the vocabulary has %d entries)", where, a.Content, a.ID, want, len(vocab))
		}
		if other, taken := byID[int32(a.ID)]; taken && other != a.Content {
			return nil, fmt.Errorf("load %s: added token %q and vocabulary token %q share id %d", where, a.Content, other, a.ID)
		}
		if j := slices.IndexFunc(out, func(o addedToken) bool { return o.Content == a.Content }); j >= 0 {
			out[j] = a
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// idOf returns the id of the token text: an added token's, else the
// vocabulary's.
func idOf(text string, added []addedToken, vocab map[string]int32) (int32, bool) {
	for _, a := range added {
		if a.Content == text {
			return int32(a.ID), true
		}
	}
	id, ok := vocab[text]
	return id, ok
}

// parseSequence parses a component of type Sequence: the list under key of
// raw, each element parsed by parse (which names it where[key][i]), their
// steps in order.
func parseSequence[T any](raw json.RawMessage, key, where string, parse func(json.RawMessage, string) ([]T, error)) ([]T, error) {
	var seq map[string]json.RawMessage
	if err := json.Unmarshal(raw, &seq); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var subs []json.RawMessage
	if list, ok := seq[key]; ok {
		if err := json.Unmarshal(list, &subs); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", where, key, err)
		}
	}
	var steps []T
	for i, sub := range subs {
		s, err := parse(sub, fmt.Sprintf("%s.%s[%d]", where, key, i))
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	return steps, nil
}

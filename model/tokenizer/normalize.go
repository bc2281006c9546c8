package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/regex"
)

// normStep is one normalizer of a tokenizer.json: a Unicode normal form, a
// Prepend or a Replace. A Sequence is flattened into its steps.
type normStep struct {
	kind    string    // "NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace"
	form    norm.Form // the normal forms
	prepend string
	replace replacer
}

// apply normalizes s as the step does, Hugging Face's way.
func (n *normStep) apply(s string) string {
	switch n.kind {
	case "Prepend":
		// Hugging Face prepends to non-empty text only.
		if s == "" {
			return s
		}
		return n.prepend + s
	case "Replace":
		return n.replace.apply(s)
	}
	return normalForm(n.form, s)
}

// normalize applies the steps in order.
func normalize(steps []normStep, s string) string {
	n, _ := normalizeLead(steps, s)
	return n
}

// normalizeLead is normalize, and whether the result still starts where s
// did: false once a Replace has deleted the characters at its start (matched
// them and put nothing), after which Hugging Face's offsets put the
// normalized text's start past byte 0 of s (Metaspace's prepend_scheme
// "first" then puts no replacement before it).
func normalizeLead(steps []normStep, s string) (string, bool) {
	lead := true
	for i := range steps {
		st := &steps[i]
		if lead && st.kind == "Replace" && st.replace.content == "" && st.replace.matchesStart(s) {
			lead = false
		}
		s = st.apply(s)
	}
	return s, lead
}

// replacer replaces every match of a literal or a regular expression with
// content, as the Replace normalizer and decoder do.
type replacer struct {
	literal string        // a String pattern
	re      *regex.Regexp // a Regex pattern
	content string
}

func (r *replacer) apply(s string) string {
	if r.re == nil {
		if r.literal == "" {
			return s
		}
		return strings.ReplaceAll(s, r.literal, r.content)
	}
	var b strings.Builder
	last := 0
	r.re.Matcher().FindAll(s, func(start, end int) bool {
		b.WriteString(s[last:start])
		b.WriteString(r.content)
		last = end
		return true
	})
	if last == 0 && b.Len() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchesStart reports whether the first match in s is at its start and
// not empty.
func (r *replacer) matchesStart(s string) bool {
	if r.re == nil {
		return r.literal != "" && strings.HasPrefix(s, r.literal)
	}
	found := false
	r.re.Matcher().FindAll(s, func(start, end int) bool {
		found = start == 0 && end > 0
		return false
	})
	return found
}

// pattern is a tokenizer.json pattern: {"String": "..."} or {"Regex": "..."}.
type pattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// compile returns the literal or the compiled expression of p.
func (p *pattern) compile() (literal string, re *regex.Regexp, err error) {
	switch {
	case p.String != nil && p.Regex == nil:
		return *p.String, nil, nil
	case p.Regex != nil && p.String == nil:
		re, err := regex.Compile(*p.Regex)
		return "", re, err
	}
	return "", nil, fmt.Errorf(`pattern: want {"String": ...} or {"Regex": ...}`)
}

// component is the head of any tokenizer.json component: its type.
type component struct {
	Type string `json:"type"`
}

// parseNormalizer reads a normalizer (null, a normal form, Prepend, Replace
// or a Sequence of those) into steps; where names it in errors
// ("normalizer", "normalizer.normalizers[1]").
func parseNormalizer(raw json.RawMessage, where string) ([]normStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	switch c.Type {
	case "NFC", "NFD", "NFKC", "NFKD":
		forms := map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}
		return []normStep{{kind: c.Type, form: forms[c.Type]}}, nil
	case "Prepend":
		var p struct {
			Prepend *string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p.Prepend == nil {
			return nil, fmt.Errorf(`%s: Prepend needs a "prepend" string`, where)
		}
		return []normStep{{kind: "Prepend", prepend: *p.Prepend}}, nil
	case "Replace":
		r, err := parseReplace(raw, where)
		if err != nil {
			return nil, err
		}
		return []normStep{{kind: "Replace", replace: r}}, nil
	case "Sequence":
		return parseSequence(raw, "normalizers", where, parseNormalizer)
	}
	return nil, fmt.Errorf("%s: normalizer %q is not supported (supported: NFC, NFD, NFKC, NFKD, Prepend, Replace, Sequence)", where, c.Type)
}

// parseReplace reads the pattern and content of a Replace normalizer or decoder.
func parseReplace(raw json.RawMessage, where string) (replacer, error) {
	var r struct {
		Pattern *pattern `json:"pattern"`
		Content *string  `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Pattern == nil || r.Content == nil {
		return replacer{}, fmt.Errorf(`%s: Replace needs a "pattern" and a "content"`, where)
	}
	lit, re, err := r.Pattern.compile()
	if err != nil {
		return replacer{}, fmt.Errorf("%s: %w", where, err)
	}
	return replacer{literal: lit, re: re, content: *r.Content}, nil
}

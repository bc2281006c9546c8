package tokenizer

import (
	"unicode"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/ucd"
)

// addedToken is an entry of a tokenizer.json's "added_tokens".
type addedToken struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	Special    bool   `json:"special"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	SingleWord bool   `json:"single_word"`
	Normalized bool   `json:"normalized"`
}

// addedMatcher finds added tokens in text as Hugging Face's
// AddedVocabulary does: the leftmost place where one starts, the longest one
// there (Aho-Corasick, leftmost-longest), then the token's flags: a
// single_word token must not touch word characters, an lstrip or rstrip token
// takes in the whitespace before or after it.
type addedMatcher struct {
	tokens  []addedToken
	nodes   []trieNode // nodes[0] is the root
	first   [256]bool  // bytes some token starts with
	skip    bool       // skip special tokens (split_special_tokens)
	longest int        // the longest token's length in bytes
}

// trieNode is a node of a byte trie of the tokens' contents.
type trieNode struct {
	edges []trieEdge
	token int32 // the token ending here, -1 if none
}

type trieEdge struct {
	b  byte
	to int32
}

func newAddedMatcher(tokens []addedToken, skipSpecial bool) *addedMatcher {
	m := &addedMatcher{tokens: tokens, nodes: []trieNode{{token: -1}}, skip: skipSpecial}
	for i, t := range tokens {
		if t.Content == "" {
			continue
		}
		m.first[t.Content[0]] = true
		m.longest = max(m.longest, len(t.Content))
		n := int32(0)
		for j := range len(t.Content) {
			n = m.child(n, t.Content[j])
		}
		m.nodes[n].token = int32(i)
	}
	return m
}

// child returns the child of node n along byte b, making it if need be.
func (m *addedMatcher) child(n int32, b byte) int32 {
	for _, e := range m.nodes[n].edges {
		if e.b == b {
			return e.to
		}
	}
	m.nodes = append(m.nodes, trieNode{token: -1})
	to := int32(len(m.nodes) - 1)
	m.nodes[n].edges = append(m.nodes[n].edges, trieEdge{b, to})
	return to
}

// longestAt returns the longest token starting at s[i] and its end, or -1.
func (m *addedMatcher) longestAt(s string, i int) (tok int32, end int) {
	tok, n := -1, int32(0)
	for j := i; j < len(s); j++ {
		next := int32(-1)
		for _, e := range m.nodes[n].edges {
			if e.b == s[j] {
				next = e.to
				break
			}
		}
		if next < 0 {
			break
		}
		n = next
		if t := m.nodes[n].token; t >= 0 {
			tok, end = t, j+1
		}
	}
	return tok, end
}

// split calls text for each stretch of s between added tokens (never empty)
// and token for each added token, in order. It stops at the first error.
func (m *addedMatcher) split(s string, text func(start, end int) error, token func(id int32) error) error {
	done := 0 // s[:done] is handed out
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		t, matchEnd := m.longestAt(s, i)
		if t < 0 {
			i++
			continue
		}
		tok := &m.tokens[t]
		start, stop := i, matchEnd
		i = matchEnd // the search goes on after the match, whatever the flags make of it
		if m.skip && tok.Special {
			continue
		}
		if tok.SingleWord && (start > 0 && endsWithWord(s[:start]) || stop < len(s) && startsWithWord(s[stop:])) {
			continue
		}
		if tok.LStrip {
			start = max(trailingSpaceStart(s[:start]), done)
		}
		if tok.RStrip {
			stop += leadingSpaceLen(s[stop:])
		}
		if done < start {
			if err := text(done, start); err != nil {
				return err
			}
		}
		if err := token(int32(tok.ID)); err != nil {
			return err
		}
		done = stop
	}
	if done < len(s) {
		return text(done, len(s))
	}
	return nil
}

// isWordRune is \w of Rust's regex crate (Unicode 16.0), which Hugging Face
// uses for single_word: Alphabetic, marks, decimal digits, connector
// punctuation and the joiners.
func isWordRune(r rune) bool { return ucd.IsRegexWord(r) }

// isSpace is \s of Rust's regex crate, which Hugging Face uses for lstrip
// and rstrip: White_Space.
func isSpace(r rune) bool { return unicode.Is(ucd.WhiteSpace, r) }

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordRune(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRune(r)
}

// trailingSpaceStart is where the whitespace at the end of s starts.
func trailingSpaceStart(s string) int {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !isSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return len(s)
}

// leadingSpaceLen is the length of the whitespace at the start of s.
func leadingSpaceLen(s string) int {
	n := 0
	for n < len(s) {
		r, w := utf8.DecodeRuneInString(s[n:])
		if !isSpace(r) {
			break
		}
		n += w
	}
	return n
}

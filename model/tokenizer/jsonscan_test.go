package tokenizer

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// vocabCases are vocabularies in the forms the scan reads and in those it
// leaves to encoding/json.
var vocabCases = []string{
	`{"a": 0, "b": 1, "ab": 2}`,
	` { "a" :0 ,"b":1 } `,
	`{}`,
	`{"a": 1, "a": 2}`, // the last value
	`{"\u0120t": 5, "\"": 6, "\\": 7, "\/": 8}`,   // escapes
	"{\"\xff\": 1, \"ok\": 2}",                    // invalid UTF-8: U+FFFD, as encoding/json
	`{"\ud800": 1}`,                               // a lone surrogate
	`{"a": -3}`,                                   // negative (checkVocab refuses it)
	`{"a": 1.0}`,                                  // refused by encoding/json
	`{"a": 1e3}`,                                  // refused
	`{"a": null, "b": 2}`,                         // null: the zero value
	`{"a": "1"}`,                                  // refused
	`{"a": 123456789012345678}`,                   // 18 digits
	`{"a": 1234567890123456789}`,                  // 19 digits: encoding/json
	`{"a": 99999999999999999999}`,                 // overflows int64: refused
	`[1, 2]`,                                      // not an object
	`null`,                                        // no vocabulary
	`{"a": 1,}`,                                   // invalid JSON
	`{"a": 1`,                                     // cut short
	`{"a": {"b": 1}}`,                             // refused
	`{"a": 0, "b": [1, {"c": "]"}], "d": 3}`,      // refused
	"{\"a\":\t0,\r\n\"b\":\n1}",                   // white space
	`{"k": 0, "K": 1, "\u212a": 2}`,               // keys are case-sensitive
	`{"` + strings.Repeat("x", 300) + `": 1}`,     // a long key
	`{"a b": 0, "a": 1, "b": 2, "ab": 3, ":": 4}`, // spaces and colons in keys
	`{"{": 0, "}": 1, "[": 2, "]": 3, ",": 4}`,    // structural characters in keys
	`{"a": 0, "b": 1} trailing`,                   // invalid JSON
	`{"a": 00}`,                                   // invalid JSON
	`{"a": -0}`,                                   // zero
	`{"a": -}`,                                    // invalid JSON
	`{"a": true}`,                                 // refused
	`{"\u0000": 1}`,                               // NUL
	"{\"tab\there\": 1}",                          // a raw tab in a string: invalid JSON
	`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}    `, // trailing white space
}

// checkDecodeVocab: decodeVocab gives json.Unmarshal's map, or fails where
// it fails.
func checkDecodeVocab(t *testing.T, raw []byte) {
	t.Helper()
	var want map[string]int64
	wantErr := json.Unmarshal(raw, &want)
	for _, checked := range []bool{false, true} {
		if checked && !json.Valid(raw) {
			continue // checked is a promise the caller keeps
		}
		got, gotErr := decodeVocab(raw, checked)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("decodeVocab(%q, %v): error %v, encoding/json's %v", raw, checked, gotErr, wantErr)
		}
		if gotErr == nil && (!maps.Equal(got, want) || (got == nil) != (want == nil)) {
			t.Fatalf("decodeVocab(%q, %v) = %v, encoding/json %v", raw, checked, got, want)
		}
	}
}

func TestDecodeVocabAsEncodingJSON(t *testing.T) {
	for _, c := range vocabCases {
		checkDecodeVocab(t, []byte(c))
	}
	// The scan itself reads the plain forms (a test that would pass with
	// encoding/json alone would not show that).
	for _, c := range []string{vocabCases[0], vocabCases[1], vocabCases[3], vocabCases[4], vocabCases[5], vocabCases[7],
		"{\"a\": 0\n, \"b\": 1\t,\"c\":2\r}", `{"a": 1 }`} {
		if _, ok := scanVocab([]byte(c)); !ok {
			t.Errorf("scanVocab(%q) left it to encoding/json", c)
		}
	}
	for _, c := range []string{`{"a": 1.0}`, `{"a": null}`, `{"a": 1234567890123456789}`, `[1]`, `null`} {
		if _, ok := scanVocab([]byte(c)); ok {
			t.Errorf("scanVocab(%q) read it itself", c)
		}
	}
	// A large vocabulary of random tokens, as a file writes it.
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aZ09 \"\\/\t\n\u00e9\u0120\u4e2d\U0001F600{}[],:")
	var b strings.Builder
	b.WriteString("{\n")
	for i := range 5000 {
		tok := make([]rune, 1+r.IntN(6))
		for j := range tok {
			tok[j] = alphabet[r.IntN(len(alphabet))]
		}
		key, _ := json.Marshal(string(tok))
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  %s: %d", key, i)
	}
	b.WriteString("\n}")
	checkDecodeVocab(t, []byte(b.String()))
}

// mergesByEncodingJSON is parseMerges as it was: encoding/json splits the
// array, each element read by parseJSONMerge.
func mergesByEncodingJSON(raw []byte) ([]mergeRule, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	out := make([]mergeRule, len(elems))
	for i, e := range elems {
		m, err := parseJSONMerge(string(e))
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// checkParseMerges: parseMerges reads a valid JSON value as encoding/json
// and parseJSONMerge do, and places each merge.
func checkParseMerges(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return // model.merges is a value of a file encoding/json checked
	}
	got, gotErr := parseMerges(raw, "f")
	want, wantErr := mergesByEncodingJSON(raw)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("parseMerges(%q): error %v, by encoding/json %v", raw, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("parseMerges(%q): %d merges, by encoding/json %d", raw, len(got), len(want))
	}
	for i := range got {
		if got[i].left != want[i].left || got[i].right != want[i].right || got[i].file != "f" || got[i].at != -1-i {
			t.Fatalf("parseMerges(%q)[%d] = %+v, by encoding/json %q %q", raw, i, got[i], want[i].left, want[i].right)
		}
	}
}

var mergesCases = []string{
	`["a b", "ab c"]`,
	`[["a", "b"], ["ab", "c"]]`,
	` [ ["a" , "b"] ,"ab c" ] `,
	`[]`,
	`["a\u0020b"]`,
	`[["\"", "\\"], "\" \\"]`,
	`[["]", "["], ["{", "}"], [",", ":"]]`,
	`["a  b"]`,
	`["ab"]`,
	`[["a", "b", "c"]]`,
	`[["a", ""]]`,
	`[7]`,
	`[null]`,
	`[{"a": "b"}]`,
	`{"a": "b"}`,
	`"a b"`,
	`[["a", "b"]`,
	"[\"\xff b\"]",
}

func TestParseMergesAsEncodingJSON(t *testing.T) {
	for _, c := range mergesCases {
		checkParseMerges(t, []byte(c))
	}
	for _, c := range []string{"", "null", " null "} {
		if m, err := parseMerges([]byte(c), "f"); err != nil || m != nil {
			t.Errorf("parseMerges(%q) = %v, %v; want none", c, m, err)
		}
	}
	if _, err := parseMerges([]byte(`{"a": "b"}`), "tokenizer.json"); err == nil || !strings.Contains(err.Error(), "model.merges is not an array") {
		t.Errorf("merges as an object: %v", err)
	}
	if _, err := parseMerges([]byte(`["a b", 7]`), "tokenizer.json"); err == nil || !strings.Contains(err.Error(), "tokenizer.json model.merges[1]") {
		t.Errorf("a number among merges: %v, want it placed", err)
	}
}

// FuzzDecodeVocab: decodeVocab agrees with encoding/json on any input.
func FuzzDecodeVocab(f *testing.F) {
	for _, c := range vocabCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeVocab(t, raw) })
}

// FuzzParseMerges: parseMerges agrees with encoding/json and
// parseJSONMerge on any valid JSON value.
func FuzzParseMerges(f *testing.F) {
	for _, c := range mergesCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkParseMerges(t, raw) })
}

package corpus

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// hostileLines are .jsonl lines for the fast reading to get right as the
// reference (jsonlText, encoding/json) does: keys that are "text" only
// once read, duplicates, nested "text"s, every escape, half surrogate
// pairs, invalid UTF-8, numbers and literals JSON refuses, depth.
var hostileLines = []string{
	`{"text":"a"}`, "{\"text\":\"a\"}\n", "{\"text\":\"a\"}\r\n", "\t{ \"text\" : \"a\" }\r\n", `{"text":""}`,
	`{"id": 12, "text": "doc", "meta": {"url": "u", "text": "nested", "n": [1, 2.5, -3e4, true, false, null]}}`,
	// Keys: exactly "text", escapes read; a map's last duplicate wins.
	`{"Text":"a"}`, `{"TEXT":"a"}`, `{"tex":"a"}`, `{"texts":"a"}`, `{" text":"a"}`, `{"text\u0000":"a"}`,
	`{"te\u0078t":"b"}`, `{"\u0074\u0065\u0078\u0074":"c"}`, `{"te\u0058t":"c"}`, `{"te\/xt":"a"}`, `{"\/text":"a"}`,
	`{"text":"a","text":"b"}`, `{"text":1,"text":"a"}`, `{"text":"a","text":1}`, `{"text":"a","text":null}`,
	`{"text":"a\ud800","text":"b"}`, `{"text":"b","text":"a\ud800"}`, `{"text":"a","te\u0078t":"b"}`,
	`{"text":{"text":"a"},"text":"b"}`, `{"text":"b","text":{"text":"a"}}`, `{"text":["a"]}`, `{"text":true}`,
	`{"te\ud800xt":"a","text":"b"}`, `{"a":"\ud800","text":"b"}`, `{"":1,"text":"a"}`, `{"\u00e9":1,"text":"a"}`,
	// Nested "text"s are data.
	`{"meta":{"text":"x"}}`, `{"meta":{"text":"x"},"text":"y"}`, `{"a":[{"text":"x"}],"text":"y"}`, `[{"text":"x"}]`,
	`{"a":{"b":{"c":[[],{},[{}]]}},"text":"y"}`,
	// Not one object.
	``, ` `, "\n", `null`, `"text"`, `1`, `true`, `[]`, `{}`, `{`, `}`, `{"text":"a"`, `{"text":"a"}}`,
	`{"text":"a"} {}`, `{"text":"a"},`, `{"text":"a",}`, `{,"text":"a"}`, `{"text" "a"}`, `{"text":}`,
	`{text:"a"}`, `{'text':'a'}`, `{"text":"a"}x`, `{"text":"a"}` + "\x00", "\uFEFF" + `{"text":"a"}`,
	"\v{\"text\":\"a\"}", "\f{\"text\":\"a\"}", "\u00a0{\"text\":\"a\"}", `{"text":"a" "b":1}`, `{"a":1 2,"text":"a"}`,
	`{"a":[1,],"text":"a"}`, `{"a":[,1],"text":"a"}`, `{"a":[1 2],"text":"a"}`, `{"a":{"b"},"text":"a"}`,
	`{"a":{"b":1,},"text":"a"}`, `{"a":{1:2},"text":"a"}`, `{"a":[}],"text":"a"}`, `{"a":{]},"text":"a"}`,
	// Strings: every escape, and what JSON refuses.
	`{"text":"\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d\ud83d\ude00\uDBFF\uDFFF\u0000\u2028"}`,
	`{"text":"\x"}`, `{"text":"\u12"}`, `{"text":"\u12G4"}`, `{"text":"\U0041"}`, `{"text":"\'"}`, `{"text":"a\`,
	`{"text":"a\"}`, `{"text":"\u"}`, `{"text":"\ud83d\u"}`, `{"text":"\ud83d\ude0"}`,
	"{\"text\":\"a\x01b\"}", "{\"text\":\"a\tb\"}", "{\"text\":\"a\rb\"}", "{\"text\":\"a\nb\"}", "{\"text\":\"a\x7fb\"}",
	"{\"text\":\"\u2028\u2029 caf\u00e9 \U0001F600 \u4e2d\"}", "{\"text\":\"\xff\"}", "{\"text\":\"\xc3\"}",
	"{\"text\":\"\xc0\x80\"}", "{\"text\":\"\xed\xa0\x80\"}", "{\"text\":\"\xf4\x90\x80\x80\"}", "{\"te\xffxt\":\"a\"}",
	"{\"text\":\"a\"}\xff", "\xff{\"text\":\"a\"}", "{\"a\":\"\xe9\",\"text\":\"b\"}", "{\"a\":\"\\x\",\"text\":\"\xff\"}",
	`{"text":"a\"b\\"}`, `{"text":"a\\"}`, `{"text":"\\\""}`,
	// Half a surrogate pair in the text.
	`{"text":"\ud800"}`, `{"text":"\udc00"}`, `{"text":"\ud83d\ud83d\ude00"}`, `{"text":"\ud800\u0041"}`,
	`{"text":"\ud800x"}`, `{"text":"\\ud800"}`, `{"text":"\\\ud800"}`, `{"text":"\ud83d\ude00"}`,
	`{"text":"\ud800\udbff"}`, `{"text":"a\ud800"}`, `{"text":"\ude00\ud83d"}`, `{"text":"\ud83d\\ude00"}`,
	`{"text":"\uD83D\uDE00"}`, `{"text":"\ud7ff\ue000"}`,
	// Numbers and literals.
	`{"a":0,"text":"a"}`, `{"a":-0,"text":"a"}`, `{"a":01,"text":"a"}`, `{"a":-,"text":"a"}`, `{"a":1.,"text":"a"}`,
	`{"a":.5,"text":"a"}`, `{"a":1e5,"text":"a"}`, `{"a":1E+5,"text":"a"}`, `{"a":1e,"text":"a"}`,
	`{"a":1.5e-3,"text":"a"}`, `{"a":-01,"text":"a"}`, `{"a":1e5.5,"text":"a"}`, `{"a":+1,"text":"a"}`,
	`{"a":Infinity,"text":"a"}`, `{"a":NaN,"text":"a"}`, `{"a":0x10,"text":"a"}`, `{"a":1e999999,"text":"a"}`,
	`{"a":123456789012345678901234567890,"text":"a"}`, `{"a":-,"text":"a"}`, `{"a":1e+,"text":"a"}`,
	`{"a":true,"text":"a"}`, `{"a":tru,"text":"a"}`, `{"a":trues,"text":"a"}`, `{"a":nul,"text":"a"}`,
	`{"a":True,"text":"a"}`, `{"a":null,"text":"a"}`, `{"a":false,"text":"a"}`, `{"a":f,"text":"a"}`,
	`{"text":"a","a":1`, `{"text":"a","a":`, `{"text":"a","a"`, `{"text":"a","a`, `{"text":"a",`,
	// Depth: encoding/json allows 10,000 arrays and objects open at once.
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"text":"x"}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"text":"x"}`,
	`{"a":` + strings.Repeat(`{"b":`, 9999) + "1" + strings.Repeat("}", 9999) + `,"text":"x"}`,
	`{"a":` + strings.Repeat(`{"b":`, 10000) + "1" + strings.Repeat("}", 10000) + `,"text":"x"}`,
	// Long runs, for the eight-bytes-at-a-time scan: a special byte at
	// each place of a word.
	`{"text":"` + strings.Repeat("abcdefgh", 9) + `"}`,
	`{"text":"` + strings.Repeat("abcdefg\\n", 9) + `"}`,
	`{"text":"` + strings.Repeat("abc\u00e9fgh", 9) + `"}`,
	"{\"text\":\"" + strings.Repeat("abcdefg\x1f", 9) + "\"}",
	"{\"text\":\"" + strings.Repeat("abcdefg\x20", 9) + "\"}",
	"{\"text\":\"" + strings.Repeat("abcdefg\x7f", 9) + "\"}",
	"{\"text\":\"" + strings.Repeat("abcdefg!#[]", 9) + "\"}",
}

func init() {
	for k := range 8 { // a quote, a backslash and a control character at each byte of a word
		pre := `{"text":"` + strings.Repeat("x", k)
		hostileLines = append(hostileLines, pre+`"}`, pre+`\"abcdefghij"}`, pre+"\x00abcdefghij\"}", pre+"\xc3\xa9abcdefghij\"}")
	}
}

// The fast reading of a line against the reference (checkScan).
func TestScanJSONLLine(t *testing.T) {
	for _, line := range hostileLines {
		checkScan(t, line)
	}
	// What the rules say, spelled out (checkScan holds the two together).
	for line, want := range map[string]string{
		`{"te\u0078t":"b"}`:                      "b",
		`{"text":1,"text":"a"}`:                  "a",
		`{"text":"a","text":"b"}`:                "b",
		`{"text":"a\ud800","text":"b"}`:          "b",
		`{"meta":{"text":"x"},"text":"y"}`:       "y",
		`{"text":"\ud83d\ude00 \\ud800 \u00e9"}`: "\U0001F600 \\ud800 \u00e9",
	} {
		if doc, ok := scanJSONLLine([]byte(line)); !ok || string(doc) != want {
			t.Errorf("%s: %q, %v; want %q", line, doc, ok, want)
		}
	}
	for _, line := range []string{`{"Text":"a"}`, `{"text":"a","text":1}`, `{"meta":{"text":"x"}}`, `{"text":"\ud800"}`,
		`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"text":"x"}`} {
		if doc, ok := scanJSONLLine([]byte(line)); ok {
			t.Errorf("%.60s: accepted, %q", line, doc)
		}
	}
}

// checkScan holds scanJSONLLine to jsonlText on line: the same document,
// decoded in place at the "text"'s string; or both an error, and the line
// left as it was for jsonlText to read. The line is read with its strings
// read on one core, and read in parts of a few bytes on four goroutines
// (every string of two bytes or more, from one byte or three on one).
func checkScan(t *testing.T, line string) {
	t.Helper()
	want, err := jsonlText(line, 0)
	check := func(how string) {
		t.Helper()
		buf := []byte(line)
		doc, ok := scanJSONLLine(buf)
		switch {
		case ok != (err == nil):
			t.Errorf("%.80q, %s: fast reading accepts: %v (%q); the reference's error: %v", line, how, ok, doc, err)
		case ok && string(doc) != want:
			t.Errorf("%.80q, %s: document %q, want %q", line, how, doc, want)
		case ok && len(doc) > 0 && !inside(doc, buf):
			t.Errorf("%.80q, %s: document %q is not in the line's buffer", line, how, doc)
		case !ok && string(buf) != line:
			t.Errorf("%.80q, %s: rejected, but written to: %q", line, how, buf)
		}
	}
	check("strings on one core")
	defer func(n, procs int) { longString = n; runtime.GOMAXPROCS(procs) }(longString, runtime.GOMAXPROCS(4))
	for _, n := range []int{1, 3} {
		longString = n
		check(fmt.Sprintf("strings in parts from byte %d", n))
	}
	// Parts started anywhere, inside characters and escapes: the reading
	// goes on from where the part before stopped.
	defer func() { guessStart = charStart }()
	guessStart = func(s []byte, i, to int) int { return i }
	check("strings in parts started anywhere")
}

// inside reports whether b is a part of buf's memory.
func inside(b, buf []byte) bool {
	return len(b) > 0 && len(buf) > 0 && uintptr(unsafe.Pointer(&b[0])) >= uintptr(unsafe.Pointer(&buf[0])) &&
		uintptr(unsafe.Pointer(&b[len(b)-1])) <= uintptr(unsafe.Pointer(&buf[len(buf)-1]))
}

// FuzzScanJSONLLine: the fast reading of a line accepts exactly what the
// reference (encoding/json) accepts, with the same document.
func FuzzScanJSONLLine(f *testing.F) {
	for _, line := range hostileLines {
		if len(line) < 1000 {
			f.Add(line)
		}
	}
	f.Fuzz(checkScan)
}

// A file of many lines reads as the reference reads it line by line, in
// one part and in parts: the documents decoded in place in the file's
// bytes.
func TestLoadJSONLAgainstReference(t *testing.T) {
	var file strings.Builder
	var want []string
	for i, line := range hostileLines {
		line = strings.TrimRight(line, "\r\n")
		if strings.Contains(line, "\n") || strings.TrimSpace(line) == "" {
			continue
		}
		if doc, err := jsonlText(line, 0); err == nil {
			file.WriteString(line + "\n")
			want = append(want, doc)
			if i%3 == 0 {
				file.WriteString("\n  \r\n")
			}
		}
	}
	inParts(t, func(t *testing.T) {
		c := load(t, writeTemp(t, "hostile.jsonl", []byte(file.String())), Options{})
		if !slices.Equal(c.Docs, want) {
			t.Errorf("documents %q\nwant %q", c.Docs, want)
		}
		ref, err := FromDocuments("ref", want)
		if err != nil || ref.SHA256 != c.SHA256 {
			t.Errorf("digest %s, want %s (%v)", c.SHA256, ref.SHA256, err)
		}
	})
}

package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// loadJSONL reads the documents of a .jsonl file's bytes, data, which it
// owns: the documents are parts of data, decoded in place, or, where they
// are a minor part of it, copied out of it (compactDocs).
func (c *Corpus) loadJSONL(data []byte) error {
	if c.Split != SplitAll {
		return fmt.Errorf("split %q: only text corpora have train/val splits; a JSONL file is evaluated whole", c.Split)
	}
	c.Separated = true
	// The lines are read on every core, in parts of whole lines. The
	// documents go to one list with a place per line: each part appends
	// its own from the place of its first line, and the parts' runs are
	// then closed up (a blank line has no document). The first error in
	// the file's order is the one said.
	parts := jsonlParts(data, runtime.GOMAXPROCS(0))
	lines := 0
	for _, p := range parts {
		lines += p.lines
	}
	if err := sysmem.Check(fmt.Sprintf("a list of the documents of its %d lines", lines), uint64(lines)*uint64(unsafe.Sizeof(""))); err != nil {
		return err
	}
	docs := make([]string, lines)
	for i := range parts {
		first := parts[i].line - 1
		parts[i].docs = docs[first : first : first+parts[i].lines]
	}
	eachPart(parts, (*jsonlPart).parse)
	n := 0
	for _, p := range parts {
		if p.err != nil {
			return p.err
		}
		n += copy(docs[n:], p.docs)
	}
	c.Docs = docs[:n]
	if len(c.Docs) == 0 {
		return errors.New("no documents (every line is blank)")
	}
	if !slices.ContainsFunc(c.Docs, func(d string) bool { return d != "" }) {
		return fmt.Errorf("all %d documents are empty", len(c.Docs))
	}
	if compactDocs(c.Docs, len(data)) >= giveBackFrom {
		// The file's buffer is unreferenced: give its memory back to the
		// system now (9 ms for 200 MB), not over minutes, so that the
		// memory checks that follow (tokenizing, the model) see it free.
		debug.FreeOSMemory()
	}
	c.SHA256 = docsHash(c.Docs)
	return nil
}

// giveBackFrom is the least memory whose release compactDocs's copy makes
// Load give back to the system at once (a forced collection).
const giveBackFrom = 64 << 20

// compactBelow is the share of a .jsonl file's bytes under which its
// documents are copied out of it: 1/compactBelow (a variable for tests).
var compactBelow = 2

// compactDocs copies docs, parts of a .jsonl file's buffer of fileBytes
// bytes, into one buffer of their size, and points them there, where they
// take less than half of the file (the rest: other fields, such as HTML or
// metadata) and the memory available holds the copy. The file's buffer is
// then let go: the run holds the documents' bytes, not the file's. Under
// half, the copy frees more than it takes, for the rest of the run, while
// the file and the copy are held together for a moment (at most 1.5 times
// the file, checked against what is available then, the file included);
// where the text is most of the file, a copy would free little and take
// as much again. Where the memory available does not hold the copy, the
// documents stay where they are, which takes nothing more. The copy is made
// on every core (the first touch of new memory costs more than the copy).
// It returns the bytes the copy lets go: the file's less the documents'; 0
// where it made none.
func compactDocs(docs []string, fileBytes int) (freed int) {
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	if int64(total)*int64(compactBelow) >= int64(fileBytes) || total == 0 || sysmem.Check("", uint64(total)) != nil {
		return 0
	}
	buf, touched := infile.MakeLarge(total)
	defer touched()
	threads := max(1, min(runtime.GOMAXPROCS(0), total/minJSONLPart))
	var wg sync.WaitGroup
	first, at := 0, 0 // the next run's first document, and its place in buf
	for k := 1; k <= threads; k++ {
		end, size := first, 0 // a run of documents of about total/threads bytes
		for end < len(docs) && (k == threads || at+size < share(total, k, threads)) {
			size += len(docs[end])
			end++
		}
		run, at0 := docs[first:end], at
		wg.Go(func() {
			for i, d := range run {
				if d != "" {
					n := copy(buf[at0:], d)
					run[i] = unsafe.String(&buf[at0], n)
					at0 += n
				}
			}
		})
		first, at = end, at+size
	}
	wg.Wait()
	return fileBytes - total
}

// jsonlPart is whole lines of a .jsonl file, read by parse.
type jsonlPart struct {
	data   []byte   // the lines
	line   int      // the number of the first (from 1)
	lines  int      // how many
	offset int      // the byte offset of the first in the file
	docs   []string // parse's results: the documents (within its capacity: a place per line),
	err    error    // and the first error, which ends the part
}

// minJSONLPart is the least data a part of its own is worth (a variable for
// tests).
var minJSONLPart = 4 << 20

// jsonlParts cuts data into at most n parts of whole lines, of about the
// same size and at least minJSONLPart bytes (one part for a small file),
// and counts and numbers their lines. The counting is the first read of the
// file's memory since the kernel wrote it, which costs much more than the
// next (here 380 ms for 200 MB, then 9 ms, in 4 KiB pages): it is done in n
// stretches of the same size, each on a core of its own, whatever the
// lines (a file of one line too), as is each part's parse. A part ends
// after the first line end at or after the start of a stretch; its lines
// are the line ends before it less those before the part, as the stretches'
// counts tell.
func jsonlParts(data []byte, n int) []jsonlPart {
	n = max(1, min(n, len(data)/minJSONLPart))
	type stretch struct {
		ends  int // line ends in it
		first int // the offset of the first in data; -1: none
	}
	stretches := make([]stretch, n)
	var wg sync.WaitGroup
	for k := range stretches {
		lo, hi := share(len(data), k, n), share(len(data), k+1, n)
		wg.Go(func() {
			s := data[lo:hi]
			stretches[k] = stretch{bytes.Count(s, []byte("\n")), bytes.IndexByte(s, '\n')}
			if stretches[k].first >= 0 {
				stretches[k].first += lo
			}
		})
	}
	wg.Wait()
	parts := make([]jsonlPart, 0, n)
	begin, line, ends := 0, 1, 0 // the next part's first byte and line; the line ends before it
	before := 0                  // the line ends before stretch k
	for k := range stretches {
		// Stretch k's first line end, where it has one and is past the
		// part being made, ends that part.
		if k > 0 && stretches[k].first >= begin {
			end := stretches[k].first + 1
			parts = append(parts, jsonlPart{data: data[begin:end:end], line: line, lines: before + 1 - ends, offset: begin})
			begin, line, ends = end, line+before+1-ends, before+1
		}
		before += stretches[k].ends
	}
	if begin < len(data) || len(parts) == 0 {
		last := jsonlPart{data: data[begin:], line: line, lines: before - ends, offset: begin}
		if begin < len(data) && data[len(data)-1] != '\n' {
			last.lines++ // the last, without its end
		}
		parts = append(parts, last)
	}
	return parts
}

// eachPart calls f on each part, on a goroutine of its own.
func eachPart(parts []jsonlPart, f func(*jsonlPart)) {
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() { f(&parts[i]) })
	}
	wg.Wait()
}

// parse reads the part's lines: each blank one or a JSON object with a
// string field "text" (the last of duplicate keys, as Python's json reads
// them), which is a document. A document is the line's "text" decoded in
// place (scanJSONLLine), made a string without a copy; a line
// scanJSONLLine rejects is read again by jsonlText, which says why.
func (p *jsonlPart) parse() {
	data, offset := p.data, p.offset
	for n := p.line; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			line, data = data, nil
		}
		start := offset
		offset += len(line)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		doc, ok := scanJSONLLine(line)
		if !ok {
			text, err := jsonlText(string(line), start)
			if err != nil {
				p.err = fmt.Errorf("line %d: %w", n, err)
				return
			}
			p.docs = append(p.docs, text)
			continue
		}
		p.docs = append(p.docs, docString(doc))
	}
}

// docString is doc as a string, without a copy: doc is a document decoded
// in place in a .jsonl file's buffer, which nothing writes again (a line is
// decoded once, and the buffer is loadJSONL's alone).
func docString(doc []byte) string {
	if len(doc) == 0 {
		return ""
	}
	return unsafe.String(&doc[0], len(doc))
}

// jsonlText is the "text" field of one line of a .jsonl file, which starts
// at byte start of the file.
func jsonlText(line string, start int) (string, error) {
	if err := checkUTF8(line); err != nil {
		var ue *utf8Error
		if errors.As(err, &ue) {
			ue.Offset += start
		}
		return "", err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &obj); err != nil || obj == nil {
		return "", errors.New(notAnObject(err))
	}
	raw, ok := obj["text"]
	if !ok {
		return "", errors.New("the object has no \"text\" field")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil || strings.TrimSpace(string(raw)) == "null" {
		return "", errors.New("\"text\" is not a string")
	}
	if esc := loneSurrogate(raw); esc != "" {
		return "", fmt.Errorf("\"text\" holds the escape %s, half of a UTF-16 surrogate pair without its other half: "+
			"no character (a JSON decoder reads U+FFFD, and Hugging Face's tokenizers cannot encode it)", esc)
	}
	return text, nil
}

// notAnObject says, in the file's terms, why a line of a .jsonl file is
// not a JSON object: err is json.Unmarshal's into a map (nil for a null).
// A JSON array (of the documents) and an object over several lines (pretty-
// printed JSON) are the common mix-ups: the message says what JSON Lines is.
func notAnObject(err error) string {
	const hint = `; a .jsonl file holds one JSON object per line, such as {"text": "..."}, not a JSON array nor an object over several lines`
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return "null, not a JSON object" + hint
	case errors.As(err, &te):
		return "a JSON " + te.Value + ", not an object" + hint
	case errors.As(err, &se):
		return fmt.Sprintf("not a JSON object: %v at byte %d of the line%s", se, se.Offset, hint)
	}
	return fmt.Sprintf("not a JSON object: %v%s", err, hint)
}

// loneSurrogate returns the first \uXXXX escape of the JSON string literal
// raw that is a UTF-16 surrogate without its pair (a high one not followed
// by a low one, or a low one alone), or "" when there is none.
func loneSurrogate(raw []byte) string {
	hex := func(i int) (rune, bool) { // the \uXXXX escape at raw[i]
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := hex(i)
		if !ok {
			i++ // another escape: skip its character
			continue
		}
		switch {
		case 0xd800 <= r && r < 0xdc00:
			if lo, ok := hex(i + 6); ok && 0xdc00 <= lo && lo < 0xe000 {
				i += 11
				continue
			}
			return string(raw[i : i+6])
		case 0xdc00 <= r && r < 0xe000:
			return string(raw[i : i+6])
		}
		i += 5
	}
	return ""
}

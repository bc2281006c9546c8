package wgsl

import (
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"unicode/utf8"
)

// Error is one diagnostic. Positions stay byte offsets until printed.
type Error struct {
	File   string
	Offset int    // byte offset of the offending token
	Line   int    // 1-based
	Col    int    // 1-based, in Unicode code points
	End    int    // byte offset just past the offending expression, or 0 for a point
	Msg    string // without position
	Source string // the source line, for the caret display

	// Notes are secondary labels: other places that explain the error,
	// such as the previous declaration of a name declared twice.
	Notes []Note

	width int // code points to underline on the source line (from Col)
}

// Note is a secondary label of an Error, at another place in the source.
type Note struct {
	Offset int    // byte offset
	Line   int    // 1-based
	Col    int    // 1-based, in Unicode code points
	Msg    string // without position
	Source string // the source line, for the caret display
}

// Error formats the diagnostic as "file:line:col: error: msg".
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: error: %s", e.File, e.Line, e.Col, e.Msg)
}

// Pretty formats the diagnostic followed by its source line and a caret
// under the column, then each note the same way.
func (e *Error) Pretty() string {
	var b strings.Builder
	b.WriteString(e.Error())
	b.WriteByte('\n')
	caret(&b, e.Source, e.Col, e.width)
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "%s:%d:%d: note: %s\n", e.File, n.Line, n.Col, n.Msg)
		caret(&b, n.Source, n.Col, 1)
	}
	return b.String()
}

// caret writes a source line and, under it, a caret at col underlining width
// code points.
func caret(b *strings.Builder, src string, col, width int) {
	b.WriteString(src)
	b.WriteByte('\n')
	// Pad with the line's own tabs so the caret lines up in any tab width.
	for i, r := range []rune(src) {
		if i >= col-1 {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
	if width > 1 {
		b.WriteString(strings.Repeat("~", width-1)) // underline the rest of the expression
	}
	b.WriteByte('\n')
}

// ErrorList is a sorted list of diagnostics; it is the error type of Compile
// and Module.Specialize for mistakes in the source.
type ErrorList []*Error

// Error formats the first diagnostic and says how many more there are.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0].Error(), len(l)-1)
}

// Pretty formats every diagnostic with its source line and caret.
func (l ErrorList) Pretty() string {
	var b strings.Builder
	for _, e := range l {
		b.WriteString(e.Pretty())
	}
	return b.String()
}

// InternalError reports a bug in the compiler (for example the emitter meeting
// something the checker should have rejected). It is never the user's fault.
type InternalError struct {
	File  string
	Msg   string
	Stack string // where it happened, for the bug report
}

// Error formats the bug as "file: internal compiler error (please report): msg".
func (e *InternalError) Error() string {
	return fmt.Sprintf("%s: internal compiler error (please report): %s", e.File, e.Msg)
}

// internalPanic turns a panic in a compiler stage into an *InternalError, so
// a compiler bug never takes its caller down.
func internalPanic(file string, err *error) {
	if r := recover(); r != nil {
		*err = &InternalError{File: file, Msg: fmt.Sprint(r), Stack: string(debug.Stack())}
	}
}

// maxErrors caps the diagnostics collected for one file.
const maxErrors = 50

// errorList collects diagnostics by byte offset while a stage runs.
type errorList struct {
	file string
	src  string
	errs []rawError
}

type rawError struct {
	off, end int
	msg      string
	notes    []rawNote
}

type rawNote struct {
	off int
	msg string
}

// note adds a secondary label to the diagnostic just added at off, if it was.
func (l *errorList) note(off, at int, msg string) {
	if n := len(l.errs); n > 0 && l.errs[n-1].off == off {
		l.errs[n-1].notes = append(l.errs[n-1].notes, rawNote{at, msg})
	}
}

func (l *errorList) add(off int, format string, args ...any) {
	if len(l.errs) >= maxErrors {
		return
	}
	for _, e := range l.errs {
		if e.off == off {
			return // one diagnostic per position is plenty
		}
	}
	l.errs = append(l.errs, rawError{off: off, msg: fmt.Sprintf(format, args...)})
}

// addSpan is add with the end of the offending expression, for underlining.
func (l *errorList) addSpan(sp span, format string, args ...any) {
	n := len(l.errs)
	l.add(sp.Start, format, args...)
	if len(l.errs) > n {
		l.errs[n].end = sp.End
	}
}

// err returns the sorted ErrorList, or nil when nothing went wrong.
func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	out := make(ErrorList, 0, len(l.errs))
	for _, r := range l.errs {
		e := newError(l.file, l.src, r.off, r.msg)
		if r.end > e.Offset {
			e.End = r.end
			lineEnd := e.Offset + len(e.Source) - len(string([]rune(e.Source)[:e.Col-1]))
			e.width = utf8.RuneCountInString(l.src[e.Offset:min(r.end, lineEnd)])
		}
		for _, n := range r.notes {
			ne := newError(l.file, l.src, n.off, n.msg)
			e.Notes = append(e.Notes, Note{Offset: ne.Offset, Line: ne.Line, Col: ne.Col, Msg: n.msg, Source: ne.Source})
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out
}

func newError(file, src string, off int, msg string) *Error {
	off = min(max(off, 0), len(src))
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	lineEnd := strings.IndexByte(src[off:], '\n')
	if lineEnd < 0 {
		lineEnd = len(src)
	} else {
		lineEnd += off
	}
	line := strings.Count(src[:lineStart], "\n") + 1
	return &Error{File: file, Offset: off, Line: line, Col: utf8.RuneCountInString(src[lineStart:off]) + 1, Msg: msg,
		Source: strings.TrimRight(src[lineStart:lineEnd], "\r")}
}

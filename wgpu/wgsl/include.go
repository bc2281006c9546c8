package wgsl

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// IncludeDirective starts a line of WGSL that Expand replaces by the text of
// another file (WGSL has no include; the line is a comment to any WGSL tool):
// //#include "include/matmul_epilogue.wgsl". The name is a slash-separated
// path from the root of the files Expand reads (for this project's kernels,
// the shaders folder). Only the directive may be on the line (blanks around
// it are allowed).
const IncludeDirective = "//#include"

// Origin is where a line of an expanded text came from.
type Origin struct {
	File string
	Line int // 1-based
}

// Expanded is WGSL with its includes spliced in (Expand), and the origin of
// each of its lines, so that the compiler's diagnostics can name the file and
// line a reader sees (MapErrors).
type Expanded struct {
	Text  string
	lines []Origin // lines[i] is line i+1 of Text
}

// Expand reads the file name from fsys and replaces each of its include lines
// by the included file's text, itself expanded. A file is spliced in at its
// first include only: a later include of it (two fragments that both need a
// third) is an empty line, as WGSL may not declare a name twice. A missing
// file, a malformed directive or an include cycle is an error naming the file
// and line of the directive.
func Expand(fsys fs.FS, name string) (Expanded, error) {
	return ExpandReplacing(fsys, name, nil)
}

// ExpandReplacing is Expand with each include of a file that replace maps
// splicing in the file it maps to instead (a variant of a shared fragment:
// a kernel without some of its bindings); the spliced lines' origins name
// the file read.
func ExpandReplacing(fsys fs.FS, name string, replace map[string]string) (Expanded, error) {
	x := &expander{fsys: fsys, done: map[string]bool{}, replace: replace}
	if err := x.file(name, nil); err != nil {
		return Expanded{}, err
	}
	return Expanded{Text: x.b.String(), lines: x.lines}, nil
}

// expander is the state of one Expand.
type expander struct {
	fsys  fs.FS
	b     strings.Builder
	lines []Origin
	done  map[string]bool // files spliced in so far
	// replace maps an included file to the one spliced in in its place.
	replace map[string]string
}

// file splices name in; stack is the chain of directives that included it
// (each "file:line"), for cycle errors.
func (x *expander) file(name string, stack []Origin) error {
	src, err := fs.ReadFile(x.fsys, name)
	if err != nil {
		if len(stack) == 0 {
			return fmt.Errorf("%s: %w", name, err)
		}
		at := stack[len(stack)-1]
		return fmt.Errorf("%s:%d: include %q: %w", at.File, at.Line, name, err)
	}
	x.done[name] = true
	text := strings.TrimSuffix(string(src), "\n")
	for i, line := range strings.Split(text, "\n") {
		here := Origin{File: name, Line: i + 1}
		inc, ok, err := parseInclude(line)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, here.Line, err)
		}
		if !ok {
			x.b.WriteString(line)
			x.b.WriteByte('\n')
			x.lines = append(x.lines, here)
			continue
		}
		if r, ok := x.replace[inc]; ok {
			inc = r
		}
		chain := append(stack[:len(stack):len(stack)], here)
		for j, o := range chain {
			if o.File == inc {
				return fmt.Errorf("%s:%d: include cycle: %s", name, here.Line, cycleText(chain[j:], inc))
			}
		}
		if x.done[inc] {
			// Already spliced in: keep the line count, so the lines after it keep their numbers.
			x.b.WriteByte('\n')
			x.lines = append(x.lines, here)
			continue
		}
		if err := x.file(inc, chain); err != nil {
			return err
		}
	}
	return nil
}

// cycleText spells an include cycle: a.wgsl:3 -> b.wgsl:1 -> a.wgsl.
func cycleText(chain []Origin, back string) string {
	var b strings.Builder
	for _, o := range chain {
		fmt.Fprintf(&b, "%s:%d -> ", o.File, o.Line)
	}
	b.WriteString(back)
	return b.String()
}

// parseInclude reports whether line is an include directive and, if so, the
// file it names; a line that starts with the directive but does not name a
// file as "path" is an error.
func parseInclude(line string) (name string, ok bool, err error) {
	rest, found := strings.CutPrefix(strings.TrimSpace(line), IncludeDirective)
	if !found {
		return "", false, nil
	}
	if rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return "", false, fmt.Errorf("malformed include %q: want %s \"file.wgsl\"", line, IncludeDirective)
	}
	q := strings.TrimSpace(rest)
	name, err = strconv.Unquote(q)
	if err != nil || !strings.HasPrefix(q, `"`) {
		return "", false, fmt.Errorf("malformed include %q: want %s \"file.wgsl\"", line, IncludeDirective)
	}
	if !fs.ValidPath(name) || name == "." {
		return "", false, fmt.Errorf("include %q: not a path inside the folder", name)
	}
	return name, true, nil
}

// Origin is where line (1-based) of the expanded text came from; a line
// past the text (an error at its end) is the last line's.
func (e Expanded) Origin(line int) Origin {
	switch {
	case len(e.lines) == 0:
		return Origin{Line: line}
	case line < 1:
		return e.lines[0]
	case line > len(e.lines):
		return e.lines[len(e.lines)-1]
	}
	return e.lines[line-1]
}

// Spliced reports whether any line of the text came from the file name (the
// file expanded or one it included).
func (e Expanded) Spliced(name string) bool {
	return slices.ContainsFunc(e.lines, func(o Origin) bool { return o.File == name })
}

// MapErrors rewrites the compiler's diagnostics in err (an ErrorList,
// possibly wrapped) from lines of the expanded text to the files and lines
// they came from, and returns other errors unchanged. Columns stay right: an
// include directive is a whole line. A note in another file than its
// error's says which file.
func (e Expanded) MapErrors(err error) error {
	var list ErrorList
	if !errors.As(err, &list) {
		return err
	}
	out := make(ErrorList, len(list))
	for i, d := range list {
		c := *d
		o := e.Origin(d.Line)
		c.Line = o.Line
		if o.File != "" {
			c.File = o.File
		}
		c.Notes = make([]Note, len(d.Notes))
		for j, n := range d.Notes {
			no := e.Origin(n.Line)
			n.Line = no.Line
			if no.File != "" && no.File != o.File {
				n.Msg += " (in " + no.File + ")"
			}
			c.Notes[j] = n
		}
		out[i] = &c
	}
	return out
}

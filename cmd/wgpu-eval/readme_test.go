package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// readmeCommands returns every wgpu-eval command line the README shows, in
// its sh blocks and in inline code, as argument lists (after "wgpu-eval" or
// "go run ./cmd/wgpu-eval"), with comments, redirections and pipes before it
// cut off.
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	inBlock := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			inBlock = !inBlock
		case inBlock:
			lines = append(lines, l)
		default:
			for _, m := range regexp.MustCompile("`([^`]*wgpu-eval [^`]*)`").FindAllStringSubmatch(l, -1) {
				lines = append(lines, m[1])
			}
		}
	}
	var cmds [][]string
	for _, l := range lines {
		for _, seg := range regexp.MustCompile(`\|\||&&|[|;&]`).Split(l, -1) {
			words := shellWords(seg)
			for i, w := range words {
				if w != "wgpu-eval" && w != "./cmd/wgpu-eval" {
					continue
				}
				if w == "./cmd/wgpu-eval" && (i == 0 || words[i-1] != "run") {
					break // go install ./cmd/wgpu-eval, go build ...
				}
				var args []string
				for _, a := range words[i+1:] {
					if a == "..." {
						continue
					}
					if strings.HasPrefix(a, "#") || strings.HasPrefix(a, ">") || strings.HasPrefix(a, "<") {
						break
					}
					args = append(args, strings.NewReplacer("$i", "0").Replace(a))
				}
				cmds = append(cmds, args)
				break
			}
		}
	}
	return cmds
}

// shellWords splits s as a shell would split plain words, single- and
// double-quoted strings (no expansions).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestReadmeCommandsParse: every wgpu-eval command the README shows is a
// command line this build accepts: its subcommand exists and every flag is
// one the subcommand has, with a value of the right kind (each is parsed up
// to a --help appended at its end, which stops before anything runs).
func TestReadmeCommandsParse(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 20 {
		t.Fatalf("only %d commands found in the README: the extraction is broken", len(cmds))
	}
	for _, args := range cmds {
		err := run(context.Background(), append(args, "--help"), strings.NewReader(""), io.Discard, io.Discard)
		if !errors.Is(err, errUsageShown) {
			t.Errorf("README: wgpu-eval %s: %v", strings.Join(args, " "), err)
		}
	}
	t.Logf("%d commands checked", len(cmds))
}

// readme returns the README's text with its line breaks as spaces, so that
// a list that wraps reads as one.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonKeys is the keys of v's JSON object: its fields' names (jsonNames,
// those omitted when empty included) and the keys its MarshalJSON adds.
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	names := jsonNames(v)
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	return names
}

// jsonNames are the JSON names of v's struct fields (not "-").
func jsonNames(v any) []string {
	var names []string
	for f := range reflect.TypeOf(v).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// TestReadmeResultFields: the README's list of the result JSON's fields is
// the fields pipeline.Result writes (those written only sometimes are named
// beside it), and its list of the config block's fields is pipeline.RunConfig's.
func TestReadmeResultFields(t *testing.T) {
	text := strings.Join(strings.Fields(readme(t)), " ")
	m := regexp.MustCompile("a JSON object with `([^`]+)`(.{0,400})").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README: no \"a JSON object with `...`\" list")
	}
	listed := map[string]bool{}
	for _, name := range strings.Split(m[1], ", ") {
		listed[name] = true
	}
	for _, name := range jsonKeys(t, pipeline.Result{}) {
		switch name {
		case "config", "provenance", "shard", "bos_each_window", "interrupted", "total_tokens": // written only sometimes: named after the list
			if !strings.Contains(m[2], "`"+name+"`") {
				t.Errorf("README: the result JSON's %q is not named after its list", name)
			}
		default:
			if !listed[name] {
				t.Errorf("README: the result JSON's %q is missing from its list", name)
			}
			delete(listed, name)
		}
	}
	for name := range listed {
		t.Errorf("README: the result JSON's list names %q, which pipeline.Result does not write", name)
	}
	c := regexp.MustCompile("a `config` block \\(([^)]+)\\)").FindStringSubmatch(text)
	if c == nil {
		t.Fatal("README: no \"a `config` block (...)\" list")
	}
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[a-z_]+`).FindAllString(c[1], -1) {
		words[w] = true
	}
	for _, name := range jsonNames(pipeline.RunConfig{}) {
		if !words[name] {
			t.Errorf("README: the config block's %q is missing from its list (%s)", name, c[1])
		}
	}
}

// TestReadmeLayout: every folder of Go code is in the README's Layout table,
// itself or below a folder the table names.
func TestReadmeLayout(t *testing.T) {
	text := readme(t)
	start, end := strings.Index(text, "\n## Layout\n"), strings.Index(text, "\n## Tests\n")
	if start < 0 || end < start {
		t.Fatal("README: no Layout section before Tests")
	}
	named := map[string]bool{"": true} // the root: "(root)"
	for _, row := range strings.Split(text[start:end], "\n") {
		if !strings.HasPrefix(row, "| ") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " | ")
		prefix := ""
		for i, w := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(row, -1) {
			name := w[1]
			inFirst := strings.Contains(first, w[0])
			if i == 0 && inFirst && strings.HasPrefix(name, "internal/") {
				prefix = "internal/" // `internal/atomicfile`, `clobber`, ...
			} else if inFirst && !strings.Contains(name, "/") {
				name = prefix + name
			}
			named[name] = true
		}
	}
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		if dir == "." {
			dir = ""
		}
		for d := dir; d != "."; d = pathpkg.Dir(d) {
			if named[d] {
				return nil
			}
			if d == "" {
				break
			}
		}
		t.Errorf("README Layout: %s (%s) is in no row", dir, filepath.Base(path))
		named[dir] = true // once a folder
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadmeEnvironment: every WGPU_EVAL_* variable the shipped code reads
// (its non-test Go files) is named in the README.
func TestReadmeEnvironment(t *testing.T) {
	text := readme(t)
	re := regexp.MustCompile(`"(WGPU_EVAL_[A-Z0-9_]+)"`)
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && path != "../..")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !strings.Contains(text, "`"+m[1]) {
				t.Errorf("README: %s (read in %s) is not named", m[1], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadmeTestNames: every -run and -bench pattern of a go test command in
// the README (and the test binaries' -test.run and -test.bench of
// BENCHMARKS.md) matches a test, fuzz target or benchmark of the module, at
// its top level (the part before the first '/').
func TestReadmeTestNames(t *testing.T) {
	var names []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && path != "../..")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*)\(`).FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	flag := regexp.MustCompile(`-(?:test\.)?(run|bench)[= ]('[^']*'|"[^"]*"|[^\s'"` + "`" + `,;)]+)`)
	for _, doc := range []string{"../../README.md", "../../BENCHMARKS.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "go test") && !strings.Contains(line, ".test ") {
				continue
			}
			for _, m := range flag.FindAllStringSubmatch(line, -1) {
				pat := strings.Trim(m[2], `'"`)
				if pat == "^$" || pat == "XXX" || pat == "." {
					continue
				}
				top, _, _ := strings.Cut(pat, "/")
				re, err := regexp.Compile(top)
				if err != nil {
					t.Errorf("%s: -%s %s: %v", doc, m[1], pat, err)
					continue
				}
				kinds := []string{"Test", "Fuzz"}
				if m[1] == "bench" {
					kinds = []string{"Benchmark"}
				}
				found := false
				for _, name := range names {
					for _, k := range kinds {
						found = found || (strings.HasPrefix(name, k) && re.MatchString(name))
					}
				}
				if !found {
					t.Errorf("%s: -%s %s matches no %s of the module", doc, m[1], pat, strings.Join(kinds, " or "))
				}
				n++
			}
		}
		t.Logf("%s: %d patterns checked", doc, n)
	}
}

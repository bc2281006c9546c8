package main

import (
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
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

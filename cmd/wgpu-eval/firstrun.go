package main

// What a first run needs beyond the flags themselves: help in the usual places,
// checks that can fail before any weights load, warnings for flags that would
// be ignored, and a prompt when the corpus is typed at a terminal.

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// asksHelp reports whether args ask for help before any "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help":
			return true
		}
	}
	return false
}

// printFlags lists fs's flags as pflag does, but a boolean reads --quiet, not
// --quiet[=true|false].
func printFlags(w io.Writer, fs *pflag.FlagSet) {
	type row struct{ name, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "      --" + f.Name
		if f.Shorthand != "" {
			name = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if f.Value.Type() != "bool" && varname != "" {
			name += " " + varname
		}
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" {
			if f.Value.Type() == "string" {
				d = fmt.Sprintf("%q", d)
			}
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{name, usage})
		width = max(width, len(name))
	})
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s   %s\n", width, r.name, r.usage)
	}
}

// interrupted is the error of an evaluation or a generation stopped by a
// signal, after the line saying so ("interrupted after N of M tokens",
// "stopped: cancelled after N new tokens") was printed: main prints nothing
// more (the exit status says it: 130, or 143 for SIGTERM).
type interrupted struct{ err error }

func (e interrupted) Error() string { return "interrupted: " + e.err.Error() }
func (e interrupted) Unwrap() error { return e.err }

// boundThreads lowers *threads to the machine's cores, saying so unless
// quiet: more would not run faster, and each thread has its own scratch
// (--threads 100000 asked for 7.2 GB).
func boundThreads(w io.Writer, threads *int, quiet bool) {
	if n := runtime.NumCPU(); *threads > n {
		if !quiet {
			fmt.Fprintf(w, "warning: --threads %d is more than this machine's %d cores: using %d\n", *threads, n, n)
		}
		*threads = n
	}
}

// promptStdin tells a user who typed --data - at a terminal what the program
// waits for.
func promptStdin(w io.Writer, stdin io.Reader, data string) {
	if data != "-" {
		return
	}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(w, "reading the corpus from the terminal: type or paste text, then press Ctrl-D (Ctrl-Z Enter on Windows)")
	}
}

// dataLabel is how the summary names the corpus: "stdin" for -.
func dataLabel(data string) string {
	if data == "-" {
		return "stdin"
	}
	if rest, ok := strings.CutPrefix(data, "-:"); ok {
		return "stdin:" + rest
	}
	return infile.Quote(data)
}

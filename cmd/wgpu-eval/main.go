// Command wgpu-eval measures how well a causal language model (GPT-2, or one
// of the Llama family: Llama, Mistral, Qwen2/3) predicts text: NLL,
// perplexity and bits per byte, on any Vulkan GPU or on the CPU.
//
//	wgpu-eval [eval] [flags]    evaluate a model on a corpus (the default)
//	wgpu-eval devices [--json]  list the Vulkan adapters
//	wgpu-eval bench [flags]     time the forward pass and loss per batch size and kernel
//	wgpu-eval generate [flags]  continue a prompt with the model (KV cache, sampling)
//	wgpu-eval merge FILES...    add the --json results of the shards of one run
//	wgpu-eval compare A B       compare two --per-token files token by token
//	wgpu-eval export FILE       write a --per-token file as JSON Lines or CSV
//	wgpu-eval tokenize [flags]  write the token ids of a corpus as the evaluation sees them
//	wgpu-eval version           print the version
//
// Run `wgpu-eval eval --help` for the flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

func main() {
	ctx, stop := notifyContext(context.Background(), os.Stderr, os.Exit, commandOf(os.Args[1:]))
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	sig, wasSignaled := signaled(ctx)
	stop()
	if err != nil {
		if !errors.Is(err, errUsageShown) && !errors.As(err, new(interrupted)) {
			fmt.Fprintln(os.Stderr, "wgpu-eval:", err)
		}
		code := exitCode(err)
		if wasSignaled {
			code = signalStatus(sig) // 130 for Ctrl-C, 143 for SIGTERM
		}
		os.Exit(code)
	}
}

// commandOf is the subcommand args run: its first argument when that names
// one, else eval (the default command, whose flags come first).
func commandOf(args []string) string {
	if len(args) > 0 && slices.Contains(commands, args[0]) {
		return args[0]
	}
	return "eval"
}

// commands are the subcommands run dispatches.
var commands = []string{"eval", "devices", "bench", "generate", "merge", "compare", "export", "tokenize", "version", "help"}

// errUsageShown is returned when help was printed on request: exit 0, nothing more to say.
var errUsageShown = errors.New("usage shown")

// usageError marks a mistake in the command line (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.Is(err, errUsageShown):
		return 0
	case errors.As(err, &ue):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

// run is main without the process: it parses args and runs a subcommand.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "eval"
	if len(args) == 1 && args[0] == "--version" {
		cmd, args = "version", nil
	} else if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if asksHelp(args) {
		fmt.Fprint(stdout, topUsage+"\n") // no subcommand named: list them before eval's flags
	}
	switch cmd {
	case "eval":
		return runEval(ctx, args, stdin, stdout, stderr)
	case "generate":
		return runGenerate(ctx, args, stdout, stderr)
	case "merge":
		return runMerge(args, stdout, stderr)
	case "compare":
		return runCompare(args, stdout, stderr)
	case "export":
		return runExport(args, stdout)
	case "tokenize":
		return runTokenize(ctx, args, stdin, stdout, stderr)
	case "devices":
		return runDevices(args, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr)
	case "version":
		if err := parseFlags("version", versionUsage, func(*pflag.FlagSet) {}, args, stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wgpu-eval", version())
		return nil
	case "help":
		if len(args) > 0 && args[0] != "help" { // help CMD is CMD --help
			return run(ctx, []string{args[0], "--help"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, topUsage)
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q (commands: %s)", cmd, strings.Join(commands, ", "))}
}

const topUsage = `wgpu-eval measures how well a causal language model (GPT-2, or one of the
Llama family: Llama, Mistral, Qwen2/3) predicts text: NLL, perplexity and bits
per byte.

Usage:
  wgpu-eval [eval] [flags]   evaluate a model on a corpus (default command)
  wgpu-eval devices [--json] list the Vulkan GPUs with their limits and features
  wgpu-eval bench [flags]    time the forward pass and loss per batch size and per kernel
  wgpu-eval generate [flags] continue a --prompt with the model, streaming the text
  wgpu-eval merge FILES...   add the --json results of a run's shards (--shard I/N) into the whole run's
  wgpu-eval compare A B      compare two --per-token files of one corpus token by token
  wgpu-eval export FILE      write a --per-token file's records as JSON Lines or CSV (--format)
  wgpu-eval tokenize [flags] write a corpus's token ids as the evaluation sees them (--output)
  wgpu-eval version          print the version
  wgpu-eval help             this text

Run 'wgpu-eval help COMMAND' (or 'wgpu-eval COMMAND --help') for a command's flags.
`

const versionUsage = `Usage: wgpu-eval version

Prints the version the Go toolchain recorded: the module version for go
install MODULE@VERSION; for go build or go install in a git clone, a
pseudo-version naming the commit (v0.0.0-DATE-COMMIT, +dirty with
uncommitted changes); else "devel" (go run, -buildvcs=false, a git
worktree), with the commit where the build was given one (-ldflags
-X github.com/wgpu-eval/wgpu-eval.buildCommit=REV, as
scripts/device-check.sh --build does).
`

// parseFlags parses a subcommand's args with the flags register declares. Help
// prints usage and the flag list to stdout, where help conventionally goes
// (errUsageShown, exit 0); a bad flag or a stray argument is a usageError.
// out is stdout: pflag's own messages are returned as errors, never printed.
func parseFlags(name, usage string, register func(*pflag.FlagSet), args []string, out io.Writer) error {
	rest, err := parseFlagsArgs(name, usage, register, args, out)
	if err == nil && len(rest) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", rest[0])}
	}
	return err
}

// parseFlagsArgs is parseFlags for a subcommand that takes arguments (files):
// it returns them.
func parseFlagsArgs(name, usage string, register func(*pflag.FlagSet), args []string, out io.Writer) ([]string, error) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	register(fs)
	fs.Usage = func() {
		fmt.Fprint(out, usage)
		printFlags(out, fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, errUsageShown
		}
		return nil, usageError{err}
	}
	return fs.Args(), nil
}

// intFlag is an integer flag's name and value, for notNegative.
type intFlag struct {
	name  string
	value int
}

// notNegative is the usage error of the first flag given a negative value,
// naming it; nil when none is.
func notNegative(flags ...intFlag) error {
	for _, f := range flags {
		if f.value < 0 {
			return usageError{fmt.Errorf("--%s %d: must not be negative", f.name, f.value)}
		}
	}
	return nil
}

// tinyShakespeareOnly refuses --tinyshakespeare-file with a --data other than
// tinyshakespeare, which would not read it.
func tinyShakespeareOnly(file, data string) error {
	if file != "" && data != corpus.TinyShakespeare {
		return usageError{fmt.Errorf("--tinyshakespeare-file %s: the corpus is %s, not %s; the copy is read only for --data %s", infile.Quote(file), dataLabel(data), corpus.TinyShakespeare, corpus.TinyShakespeare)}
	}
	return nil
}

// version is the module version when installed with go install, else
// "devel" and the VCS revision.
func version() string {
	v, commit := wgpueval.Version()
	if v == "devel" && len(commit) >= 12 {
		return "devel " + commit[:12]
	}
	return v
}

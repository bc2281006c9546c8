// Command wgslc compiles a WGSL compute shader to SPIR-V with the pure-Go
// compiler in wgpu/wgsl, for kernel authors and for checking the output with
// spirv-dis and spirv-val.
//
//	wgslc [-o out.spv] [--reflect] [--entry name] file.wgsl
//
// The default output is the input name with .spv: the whole module, overrides
// as specialization constants. --entry emits that entry point alone with the
// overrides' default values, as a pipeline without constants gets it (the
// only output for modules specialization constants cannot express). --reflect prints the
// reflection (bindings, workgroup sizes, overrides) as JSON on stdout.
// Errors go to stderr, with the source line and a caret, and exit status 1.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("wgslc", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.StringP("output", "o", "", "output SPIR-V file (default: input name with .spv)")
	reflect := fs.Bool("reflect", false, "print the reflection as JSON on stdout")
	entry := fs.String("entry", "", "emit only this entry point, overrides at their defaults")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: wgslc [-o out.spv] [--reflect] [--entry name] file.wgsl")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	in := fs.Arg(0)
	// Include lines (wgsl.IncludeDirective) name files relative to the
	// input's folder, as this project's kernels include shaders/include/.
	dir := filepath.Dir(in)
	src, err := wgsl.Expand(os.DirFS(dir), filepath.Base(in))
	if err != nil {
		fmt.Fprintf(stderr, "wgslc: %s: %v\n", dir, err)
		return 1
	}
	m, err := wgsl.Compile(in, src.Text, wgsl.Options{})
	if err != nil {
		var list wgsl.ErrorList
		if errors.As(src.MapErrors(err), &list) {
			for _, d := range list { // the files as the user names them
				if d.File == filepath.Base(in) {
					d.File = in
				} else {
					d.File = filepath.Join(dir, filepath.FromSlash(d.File))
				}
			}
			fmt.Fprint(stderr, list.Pretty())
		} else {
			fmt.Fprintf(stderr, "wgslc: %v\n", err)
		}
		return 1
	}
	words := m.SPIRV
	switch {
	case *entry != "":
		sp, err := m.Specialize(*entry, nil)
		if err != nil {
			fmt.Fprintf(stderr, "wgslc: %v\n", err)
			return 1
		}
		words = sp.SPIRV
	case words == nil:
		fmt.Fprintf(stderr, "wgslc: %s: no whole-module SPIR-V: %s; emit one entry point with --entry\n", in, m.NoSPIRV)
		return 1
	}
	if *out == "" {
		*out = strings.TrimSuffix(in, ".wgsl") + ".spv"
	}
	buf := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	if err := os.WriteFile(*out, buf, 0o644); err != nil {
		fmt.Fprintf(stderr, "wgslc: %v\n", err)
		return 1
	}
	if *reflect {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.Reflection); err != nil {
			fmt.Fprintf(stderr, "wgslc: %v\n", err)
			return 1
		}
	}
	return 0
}

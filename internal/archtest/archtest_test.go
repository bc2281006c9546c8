package archtest

import (
	"cmp"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wgpu-eval/wgpu-eval"

// rule is what one package's non-test files may import besides the standard
// library: packages of this module by folder (relative to the module root), and
// outside modules by module path (a path also allows the packages below it).
type rule struct {
	ours   []string
	others []string
}

// anyOfOurs in rule.ours allows every package of this module except the
// commands, this test and the test-support packages (the CLI: "everything
// below" that ships).
const anyOfOurs = "*"

// testSupport are the packages that exist for tests: fixtures, references and
// harnesses that no shipped binary may contain. anyOfOurs leaves them out, so a
// command names them explicitly to import them (none does); the synthetic
// models a command may need (`wgpu-eval bench`) are the public model/synth.
var testSupport = map[string]bool{
	"internal/alloctest":   true,
	"internal/archtest":    true,
	"internal/backendtest": true,
	"internal/prereq":      true,
	"internal/refops":      true,
	"internal/x86emu":      true,
	"wgpu/wgsl/exectest":   true,
}

// rules is DESIGN.md's house table, package by package: every package needs
// its own row (a folder's rule does not cover its subfolders, so model may not
// import model/hub's network code though both are "model"), and arrows point
// down only. Outside modules are named one by one (STYLE.md: few
// dependencies, each chosen on purpose).
var rules = map[string]rule{
	// The library API (package wgpueval) and the commands.
	".":                       {ours: []string{"corpus", "model", "model/hub", "model/tokenizer", "pipeline", "pipeline/backend", "pipeline/runfile", "wgpu", "internal/infile", "internal/sysmem", "internal/clobber", "internal/atomicfile", "internal/hashcache", "internal/jsonformat"}},
	"cmd/wgpu-eval":           {ours: []string{anyOfOurs}, others: []string{"github.com/spf13/pflag", "github.com/schollz/progressbar/v3", "golang.org/x/term"}},
	"cmd/wgslc":               {ours: []string{"wgpu/wgsl"}, others: []string{"github.com/spf13/pflag"}},
	"bench/cpurss":            {ours: []string{"model", "model/synth", "pipeline", "pipeline/backend"}},
	"bench/bf16acc":           {ours: []string{"model", "model/synth", "model/tokenizer"}},
	"internal/cmd/synthmodel": {ours: []string{"model", "model/synth"}}, // device-check's model with synthetic weights
	"internal/cmd/srcdigest":  {ours: []string{"internal/srcdigest"}},   // go generate: corpus's digest of the tokenizers' code

	// corpus -> tokens -> batches -> a backend -> NLL, in three rooms:
	// pipeline is the evaluation (samples, batches, the Backend interface,
	// Evaluate, the Result); pipeline/backend opens devices and the CPU and GPU
	// backends; pipeline/runfile reads and writes what runs leave behind
	// (per-token files, checkpoints, merges, comparisons, exports), without the
	// GPU stack (TestRunFilesLinkNoGPU).
	"pipeline":         {ours: []string{"corpus", "model", "model/exactsum", "internal/jsonformat"}},
	"pipeline/backend": {ours: []string{"model", "pipeline", "shaders", "wgpu"}},
	"pipeline/runfile": {ours: []string{"model", "model/exactsum", "pipeline", "internal/atomicfile", "internal/msgpackbound", "internal/infile", "internal/jsonformat"},
		others: []string{"github.com/vmihailenco/msgpack/v5"}},
	"corpus": {ours: []string{"internal/download", "internal/atomicfile", "internal/msgpackbound", "internal/infile", "internal/sysmem"},
		others: []string{"github.com/vmihailenco/msgpack/v5"}},

	// The models on the host: no GPU code, no network but in model/hub.
	"model":                            {ours: []string{"model/exactsum", "internal/sysmem", "internal/infile"}, others: []string{"github.com/x448/float16", "golang.org/x/sys"}},
	"model/exactsum":                   {}, // exact, order-independent sums of the NLLs
	"model/hub":                        {ours: []string{"internal/download"}},
	"model/tokenizer":                  {ours: []string{"model/tokenizer/internal/regex", "model/tokenizer/internal/ucd", "internal/infile"}, others: []string{"github.com/tiktoken-go/tokenizer", "golang.org/x/text"}},
	"model/tokenizer/internal/regex":   {ours: []string{"model/tokenizer/internal/ucd"}},                       // the Split patterns of tokenizer.json, as Oniguruma reads them
	"model/tokenizer/internal/ucd":     {},                                                                     // Unicode tables of Hugging Face's versions
	"model/tokenizer/internal/ucd/gen": {},                                                                     // go generate: the tables from the npm Unicode data
	"model/synth":                      {ours: []string{"model"}, others: []string{"github.com/x448/float16"}}, // synthetic weights and the writers of their files
	"model/internal/asmgen":            {others: []string{"github.com/mmcloughlin/avo"}},                       // go generate: the amd64 kernels
	"model/internal/neongen":           {},                                                                     // go generate: the arm64 kernels

	// The GPU: kernels, the WebGPU-shaped API, the compiler, Vulkan.
	"shaders":                   {ours: []string{"model", "wgpu", "wgpu/wgsl", "internal/atomicfile", "internal/infile"}, others: []string{"github.com/x448/float16"}}, // the autotuner's and verdicts' files; its f16 operands
	"wgpu":                      {ours: []string{"wgpu/wgsl", "wgpu/internal/vk"}, others: []string{"github.com/x448/float16"}},
	"wgpu/wgsl":                 {ours: []string{"wgpu/wgsl/internal/spirv"}},
	"wgpu/wgsl/internal/spirv":  {},
	"wgpu/wgsl/exectest":        {},
	"wgpu/internal/vk":          {others: []string{"github.com/ebitengine/purego"}},
	"wgpu/internal/vk/gen":      {},                                                          // go generate: the Vulkan bindings from vk.xml
	"wgpu/internal/vk/vklayout": {ours: []string{"wgpu/internal/vk"}, others: []string{"C"}}, // cgo, -tags vkheaders

	// Small utilities and test support.
	"internal/download":     {others: []string{"golang.org/x/sys"}}, // the free space before a download (statfs, GetDiskFreeSpaceEx)
	"internal/atomicfile":   {others: []string{"golang.org/x/sys"}}, // O_TMPFILE on Linux
	"internal/msgpackbound": {},
	"internal/infile":       {others: []string{"golang.org/x/sys"}}, // huge pages for a file's memory on Linux (madvise)
	"internal/jsonformat":   {},
	"internal/clobber":      {},                                                         // outputs that would overwrite inputs
	"internal/hashcache":    {ours: []string{"internal/atomicfile", "internal/infile"}}, // the weights' sha256 by file identity
	"internal/sysmem":       {},
	"internal/srcdigest":    {}, // the digest of the code that decides a cache's content
	"internal/prereq":       {},
	"internal/alloctest":    {},
	"internal/refops":       {},
	"internal/archtest":     {},
	"internal/x86emu":       {}, // test support: runs the amd64 kernels the CPU lacks
	"internal/backendtest":  {ours: []string{"corpus", "model", "model/synth", "pipeline", "pipeline/backend", "internal/refops"}},
}

// imp is one import of one file.
type imp struct {
	file, path string
}

// violations checks the imports of each package folder (graph: folder ->
// imports of its non-test files) against rules, and the rules against the
// folders: a folder without a rule, a rule for no folder, and an import the
// rule does not allow are each reported, sorted.
func violations(graph map[string][]imp, rules map[string]rule) []string {
	var out []string
	for dir, imps := range graph {
		r, ok := rules[dir]
		if !ok {
			out = append(out, fmt.Sprintf("package folder %q has no rule in the import table; add one", dir))
			continue
		}
		for _, im := range imps {
			if !r.allows(dir, im.path) {
				out = append(out, fmt.Sprintf("%s imports %s: %s may import only %s", im.file, im.path, dir, r))
			}
		}
	}
	for dir := range rules {
		if _, ok := graph[dir]; !ok {
			out = append(out, fmt.Sprintf("the import table has a rule for %q, which holds no package", dir))
		}
	}
	slices.Sort(out)
	return out
}

// allows reports whether a package in folder dir may import path.
func (r rule) allows(dir, path string) bool {
	if ours, ok := strings.CutPrefix(path, module); ok && (ours == "" || ours[0] == '/') {
		ours = strings.TrimPrefix(ours, "/")
		if ours == "" {
			ours = "."
		}
		for _, a := range r.ours {
			if a == ours || (a == anyOfOurs && ours != dir && !strings.HasPrefix(ours, "cmd/") && !testSupport[ours]) {
				return true
			}
		}
		return false
	}
	if path != "C" && !strings.Contains(strings.Split(path, "/")[0], ".") {
		return true // the standard library
	}
	for _, a := range r.others {
		if path == a || strings.HasPrefix(path, a+"/") {
			return true
		}
	}
	return false
}

func (r rule) String() string {
	parts := append([]string{"the standard library"}, r.ours...)
	parts = append(parts, r.others...)
	return strings.Join(parts, ", ")
}

// moduleGraph parses the import clauses of every non-test Go file of the module
// at root, whatever its build tags: folder (relative, "/"-separated) -> imports.
func moduleGraph(root string) (map[string][]imp, error) {
	fset := token.NewFileSet()
	graph := map[string][]imp{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		relFile, _ := filepath.Rel(root, path)
		if _, seen := graph[rel]; !seen {
			graph[rel] = nil // the folder holds a package, even one that imports nothing
		}
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", path, is.Path.Value, err)
			}
			graph[rel] = append(graph[rel], imp{filepath.ToSlash(relFile), p})
		}
		return nil
	})
	return graph, err
}

// thisModule is moduleGraph of this module (two folders up).
func thisModule(t *testing.T) map[string][]imp {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	graph, err := moduleGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := graph["wgpu/wgsl"]; !ok {
		t.Fatalf("no package found in wgpu/wgsl: is %s the module root?", root)
	}
	return graph
}

// TestImportGraph checks the module against the table.
func TestImportGraph(t *testing.T) {
	graph := thisModule(t)
	for _, v := range violations(graph, rules) {
		t.Error(v)
	}
	n := 0
	for _, imps := range graph {
		n += len(imps)
	}
	t.Logf("checked %d imports in %d package folders", n, len(graph))
}

// deps is every package of this module that dir's package needs, directly or
// through others (by folder), from graph.
func deps(graph map[string][]imp, dir string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(d string) {
		for _, im := range graph[d] {
			ours, ok := strings.CutPrefix(im.path, module)
			if !ok || (ours != "" && ours[0] != '/') {
				continue
			}
			ours = cmp.Or(strings.TrimPrefix(ours, "/"), ".")
			if !seen[ours] {
				seen[ours] = true
				walk(ours)
			}
		}
	}
	walk(dir)
	return seen
}

// TestRunFilesLinkNoGPU: a program that reads or writes run files (per-token
// files, checkpoints, results) or runs Evaluate links neither the WGSL
// compiler nor the Vulkan layer nor the kernels; opening a backend does.
func TestRunFilesLinkNoGPU(t *testing.T) {
	graph := thisModule(t)
	gpu := []string{"shaders", "wgpu", "wgpu/wgsl", "wgpu/internal/vk"}
	for _, dir := range []string{"pipeline", "pipeline/runfile"} {
		d := deps(graph, dir)
		for _, g := range gpu {
			if d[g] {
				t.Errorf("%s needs %s", dir, g)
			}
		}
	}
	if d := deps(graph, "pipeline/backend"); !d["wgpu/wgsl"] || !d["shaders"] {
		t.Errorf("pipeline/backend needs %v: the check above looks at the wrong graph", d)
	}
}

// TestViolations: the checker itself, on made-up graphs that break each kind of
// rule, and on one that keeps them all.
func TestViolations(t *testing.T) {
	ok := map[string][]imp{
		"model":     {{"model/a.go", "fmt"}, {"model/a.go", "github.com/x448/float16"}},
		"model/hub": {{"model/hub/h.go", module + "/internal/download"}, {"model/hub/h.go", "net/http"}},
		"cmd/x":     {{"cmd/x/m.go", module}, {"cmd/x/m.go", module + "/model/hub"}, {"cmd/x/m.go", module + "/model/synth"}},
		"wgpu/wgsl": nil,
	}
	table := map[string]rule{
		"model":     {others: []string{"github.com/x448/float16"}},
		"model/hub": {ours: []string{"internal/download"}},
		"cmd/x":     {ours: []string{anyOfOurs}},
		"wgpu/wgsl": {},
	}
	if v := violations(ok, table); len(v) != 0 {
		t.Errorf("a graph that keeps the rules: %q", v)
	}
	for _, c := range []struct {
		name string
		dir  string
		imp  string
		want string
	}{
		{"own subtree", "model", module + "/model/hub", "model/x.go imports " + module + "/model/hub"},
		{"upwards", "model", module + "/wgpu", "imports " + module + "/wgpu"},
		{"third party", "wgpu/wgsl", "github.com/evil/lib", "wgsl may import only the standard library"},
		{"third party subpackage of another", "model", "github.com/x448/float16x", "imports github.com/x448/float16x"},
		{"cgo", "model", "C", "model/x.go imports C"},
		{"cmd importing a cmd", "cmd/x", module + "/cmd/y", "imports " + module + "/cmd/y"},
		{"cmd importing itself", "cmd/x", module + "/cmd/x", "imports " + module + "/cmd/x"},
		{"cmd importing test support", "cmd/x", module + "/internal/backendtest", "cmd/x/x.go imports " + module + "/internal/backendtest"},
		{"cmd importing the fixtures of a test", "cmd/x", module + "/internal/refops", "imports " + module + "/internal/refops"},
		{"cmd importing this test", "cmd/x", module + "/internal/archtest", "imports " + module + "/internal/archtest"},
		{"the root from below", "model/hub", module, "model/hub/x.go imports " + module + ":"},
	} {
		g := map[string][]imp{}
		for k, v := range ok {
			g[k] = slices.Clone(v)
		}
		g[c.dir] = append(g[c.dir], imp{c.dir + "/x.go", c.imp})
		v := violations(g, table)
		if len(v) != 1 || !strings.Contains(v[0], c.want) {
			t.Errorf("%s: violations %q, want one containing %q", c.name, v, c.want)
		}
	}
	g := map[string][]imp{"model": nil, "newpkg": nil}
	if v := violations(g, map[string]rule{"model": {}, "stale": {}}); len(v) != 2 ||
		!strings.Contains(v[0], `"newpkg" has no rule`) || !strings.Contains(v[1], `rule for "stale"`) {
		t.Errorf("a folder without a rule and a stale rule: %q", v)
	}
}

// TestTableStatesDesign: the facts DESIGN.md and STYLE.md state, read from the
// table itself, so that loosening the table to let a bad import through fails.
func TestTableStatesDesign(t *testing.T) {
	for _, c := range []struct {
		dir, imp string
		want     bool
	}{
		{"model", module + "/model/hub", false},
		{"model", module + "/internal/download", false},
		{"model", module + "/wgpu", false},
		{"model", module + "/shaders", false},
		{"model/tokenizer", module + "/internal/download", false},
		{"model/hub", module + "/internal/download", true},
		{"wgpu/wgsl", module + "/wgpu", false},
		{"wgpu/wgsl", "github.com/x448/float16", false},
		{"wgpu", module + "/wgpu/wgsl", true},
		{"wgpu", module + "/shaders", false},
		{"wgpu/internal/vk", module + "/wgpu", false},
		{"wgpu/internal/vk", "github.com/ebitengine/purego", true},
		{"shaders", module + "/pipeline", false},
		{"corpus", module + "/model", false},
		{"corpus", module + "/pipeline", false},
		{"pipeline", module + "/corpus", true},
		{"pipeline", module + "/model/hub", false},
		{"pipeline", module + "/shaders", false},
		{"pipeline", module + "/wgpu", false},
		{"pipeline/runfile", module + "/wgpu", false},
		{"pipeline/runfile", module + "/pipeline/backend", false},
		{"pipeline/backend", module + "/shaders", true},
		{"pipeline/backend", module + "/pipeline/runfile", false},
		{"cmd/wgpu-eval", module + "/pipeline", true},
		{"cmd/wgpu-eval", "github.com/spf13/pflag", true},
		{"cmd/wgpu-eval", "github.com/spf13/cobra", false},
		{".", module + "/cmd/wgpu-eval", false},
		{"cmd/wgpu-eval", module + "/model/synth", true},
		{"model/synth", module + "/pipeline", false},
		{"model/synth", module + "/model/hub", false},
		{"model", module + "/model/synth", false},
		{".", module + "/model/synth", false},
	} {
		r, ok := rules[c.dir]
		if !ok {
			t.Fatalf("no rule for %s", c.dir)
		}
		if got := r.allows(c.dir, c.imp); got != c.want {
			t.Errorf("%s -> %s: allowed %v, want %v", c.dir, c.imp, got, c.want)
		}
	}
	// No shipped code contains test support: the commands and the library
	// reach none of it, and each test-support package has its row.
	for dir := range testSupport {
		if _, ok := rules[dir]; !ok {
			t.Errorf("test-support package %s has no rule in the import table", dir)
		}
		for _, from := range []string{"cmd/wgpu-eval", "cmd/wgslc", "."} {
			if rules[from].allows(from, module+"/"+dir) {
				t.Errorf("%s -> %s: allowed, want refused (test support in a shipped binary)", from, dir)
			}
		}
	}
}

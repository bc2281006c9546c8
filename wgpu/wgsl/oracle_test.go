package wgsl

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// stricterThanWGSL lists invalid-program cases that valid WGSL would accept:
// features this compiler rejects on purpose (with a clear error) instead of
// compiling them. It is empty: every program of the corpus that Tint accepts
// compiles. A case added here must say why.
var stricterThanWGSL = map[string]string{}

// beyondWGSL lists valid programs that use extensions of WGSL (wgpu's
// var<push_constant>), which Tint does not know.
var beyondWGSL = map[string]bool{"push_constants": true, "layernorm_f16.wgsl": true}

// TestTintOracle checks the test corpus against Tint, the WGSL front end of
// Dawn: every program we accept must be valid for Tint and every program we
// reject must be invalid for it (except the stricterThanWGSL cases). It runs
// when WGSL_TINT names a node_modules directory holding webgpu@0.6.2 and node
// is installed; see testdata/tint/oracle.mjs.
func TestTintOracle(t *testing.T) {
	node, mods := prereq.Tint(t)
	type item = oracleItem
	var corpus []item
	for _, p := range validPrograms {
		corpus = append(corpus, item{p.name, p.src, true})
	}
	for _, p := range uniformOK {
		corpus = append(corpus, item{p.name, p.src, true})
	}
	for _, p := range stdUniformPrograms { // valid under Options.UniformStandardLayout
		corpus = append(corpus, item{p.name, p.src, true})
	}
	files, _ := filepath.Glob("testdata/kernels/*.wgsl")
	for _, f := range files {
		src, _ := os.ReadFile(f)
		corpus = append(corpus, item{filepath.Base(f), string(src), true})
	}
	for _, p := range invalidPrograms {
		corpus = append(corpus, item{p.name, p.src, false})
	}
	res := runTintOracle(t, node, mods, corpus, len(corpus))
	for i, r := range res {
		c := corpus[i]
		tintOK := len(r.Errors) == 0
		switch {
		case c.valid && beyondWGSL[c.Name]:
			if tintOK {
				t.Errorf("%s: listed as beyond WGSL, but Tint accepts it", c.Name)
			}
		case c.valid && !tintOK:
			t.Errorf("%s: we accept it, Tint rejects it: %+v", c.Name, r.Errors)
		case !c.valid && tintOK && stricterThanWGSL[c.Name] == "":
			t.Errorf("%s: we reject it, Tint accepts it", c.Name)
		case !c.valid && !tintOK && stricterThanWGSL[c.Name] != "":
			t.Errorf("%s: listed as stricter than WGSL, but Tint rejects it too: %+v", c.Name, r.Errors)
		}
	}
}

// TestTintMutants is the differential test proper: on near-miss programs we
// must accept exactly what Tint accepts (it runs with WGSL_TINT, like
// TestTintOracle). Our intentional restrictions are matched by message.
func TestTintMutants(t *testing.T) {
	node, mods := prereq.Tint(t)
	type item struct {
		Name string `json:"name"`
		Src  string `json:"src"`
	}
	var corpus []item
	seed := int64(7)
	if s, err := strconv.ParseInt(os.Getenv("WGSL_MUTANT_SEED"), 10, 64); err == nil {
		seed = s // explore other mutants
	}
	for i, src := range mutants(seed, 2000) {
		if !pushConstantSource(src) {
			corpus = append(corpus, item{strconv.Itoa(i), src})
		}
	}
	in, _ := json.Marshal(corpus)
	abs, _ := filepath.Abs(mods)
	cmd := exec.Command(node, "testdata/tint/oracle.mjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+abs)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	var res []struct {
		Errors []struct{ Message string } `json:"errors"`
	}
	if err := json.Unmarshal(oracleJSON(out), &res); err != nil || len(res) != len(corpus) {
		t.Fatalf("oracle output: %v (%d results for %d programs)", err, len(res), len(corpus))
	}
	stricter := []string{"@workgroup_size values must be between",
		"pointer argument must be", "not supported", "computed from other overrides", "too late to size anything",
		"must be at a multiple of 16"}
	for i, r := range res {
		_, err := Compile("mutant.wgsl", corpus[i].Src, Options{})
		switch {
		case err == nil && len(r.Errors) > 0:
			t.Errorf("mutant %s: we accept it, Tint says %q\n%s", corpus[i].Name, r.Errors[0].Message, corpus[i].Src)
		case err != nil && len(r.Errors) == 0:
			known := false
			for _, s := range stricter {
				known = known || strings.Contains(err.Error(), s)
			}
			if !known {
				t.Errorf("mutant %s: we reject it (%v), Tint accepts it\n%s", corpus[i].Name, err, corpus[i].Src)
			}
		}
	}
}

// TestTintRandomPrograms compares acceptance of generated programs (see
// gen_test.go) with Tint; it runs with WGSL_TINT.
func TestTintRandomPrograms(t *testing.T) {
	node, mods := prereq.Tint(t)
	seed := int64(3)
	if s, err := strconv.ParseInt(os.Getenv("WGSL_RANDOM_SEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewSource(seed))
	type item struct {
		Name string `json:"name"`
		Src  string `json:"src"`
	}
	var corpus []item
	for i := range 300 {
		// Half with barriers, and with barriers under qv, which is written
		// uniform and non-uniform values directly, through a pointer let
		// and through a call: a differential test of the uniformity analysis.
		corpus = append(corpus, item{strconv.Itoa(i), randomProgramKinds(rng, 8, 11+6*(i%2))})
	}
	in, _ := json.Marshal(corpus)
	abs, _ := filepath.Abs(mods)
	cmd := exec.Command(node, "testdata/tint/oracle.mjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+abs)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	var res []struct {
		Errors []struct {
			Line, Col int
			Message   string
		} `json:"errors"`
	}
	if err := json.Unmarshal(oracleJSON(out), &res); err != nil || len(res) != len(corpus) {
		t.Fatalf("oracle output: %v", err)
	}
	for i, r := range res {
		_, err := Compile("random.wgsl", corpus[i].Src, Options{})
		switch {
		case err == nil && len(r.Errors) > 0:
			t.Errorf("program %d: we accept it, Tint says %d:%d %q\n%s", i, r.Errors[0].Line, r.Errors[0].Col, r.Errors[0].Message, corpus[i].Src)
		case err != nil && len(r.Errors) == 0:
			t.Errorf("program %d: we reject it (%v), Tint accepts it", i, err)
		}
	}
}

// oracleJSON is the oracle's JSON result: what follows its marker line
// (Dawn prints shader warnings on stdout before it).
func oracleJSON(out []byte) []byte {
	const marker = "=== oracle results ===\n"
	if i := bytes.LastIndex(out, []byte(marker)); i >= 0 {
		return out[i+len(marker):]
	}
	return out
}

// oracleItem is one program for Tint: its name and source, and whether this
// compiler accepts it.
type oracleItem struct {
	Name  string `json:"name"`
	Src   string `json:"src"`
	valid bool
}

// oracleResult is Tint's verdict on one program: its errors, none when
// valid.
type oracleResult struct {
	Name   string `json:"name"`
	Errors []struct {
		Line, Col int
		Message   string
	} `json:"errors"`
}

// runTintOracle runs testdata/tint/oracle.mjs under node with the Tint of
// the node_modules folder mods on the corpus (env adds variables, such as
// the switch for an experimental extension), and returns one verdict per
// program, in order.
func runTintOracle(t *testing.T, node, mods string, corpus []oracleItem, n int, env ...string) []oracleResult {
	t.Helper()
	in, _ := json.Marshal(corpus)
	abs, _ := filepath.Abs(mods)
	cmd := exec.Command(node, "testdata/tint/oracle.mjs")
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+abs), env...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var res []oracleResult
	if err := json.Unmarshal(oracleJSON(out), &res); err != nil || len(res) != n {
		t.Fatalf("oracle output: %v (%d results for %d programs)", err, len(res), n)
	}
	return res
}

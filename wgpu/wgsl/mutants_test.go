package wgsl

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mutants derives n programs from the valid corpus by deleting or replacing
// one token each: near-misses of valid WGSL, the inputs most likely to slip
// past a checker. Deterministic for a seed.
func mutants(seed int64, n int) []string {
	seeds := []string{}
	for _, p := range validPrograms {
		seeds = append(seeds, p.src)
	}
	files, _ := filepath.Glob("testdata/kernels/*.wgsl")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		seeds = append(seeds, string(b))
	}
	repl := []string{"f32", "u32", "i32", "f16", "bool", "1", "1u", "1.0", "-1", "0", "2147483648", "true",
		"+", "*", "/", "<", "&", "&&", "var", "let", "const", "read", "read_write", "workgroup", "private",
		"storage", "x", "vec3<f32>", "(", ")", ";", "{", "}", "max", "select", "[0]", ".y", "return", "break",
		"continue", "loop", "workgroupBarrier()", "*p", "&"}
	rng := rand.New(rand.NewSource(seed))
	var out []string
	for len(out) < n {
		src := seeds[rng.Intn(len(seeds))]
		toks := lex(src, &errorList{})
		if len(toks) < 2 {
			continue
		}
		// One or two edits, the later one first so offsets stay valid.
		edits := 1 + rng.Intn(2)
		a, b := toks[rng.Intn(len(toks)-1)], toks[rng.Intn(len(toks)-1)]
		if edits == 1 || a.pos == b.pos {
			b = a
		} else if a.pos < b.pos {
			a, b = b, a
		}
		for i, tk := range []token{a, b} {
			if i == 1 && b.pos == a.pos {
				break
			}
			r := ""
			if rng.Intn(3) > 0 {
				r = repl[rng.Intn(len(repl))]
			}
			src = src[:tk.pos] + r + src[tk.pos+len(tk.text):]
		}
		out = append(out, src)
	}
	return out
}

// TestMutants checks that no near-miss program makes a compiler stage fail
// with an internal error, and that every accepted one passes spirv-val.
func TestMutants(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 100
	}
	for i, src := range mutants(1, n) {
		m, err := Compile("mutant.wgsl", src, Options{})
		var ie *InternalError
		if errors.As(err, &ie) {
			t.Fatalf("mutant %d: %v\n%s", i, err, src)
		}
		switch {
		case err != nil || i%10 != 0: // spirv-val is slow to start; sample
		case m.SPIRV != nil:
			spirvVal(t, "mutant", m.SPIRV)
		case m.NoSPIRV == "": // a valid module without one SPIR-V module (its entry points specialize) says why
			t.Errorf("mutant %d: no SPIR-V and no reason\n%s", i, src)
		}
	}
}

// pushConstantSource reports programs using wgpu's push_constant extension, unknown to Tint.
func pushConstantSource(src string) bool { return strings.Contains(src, "push_constant") }

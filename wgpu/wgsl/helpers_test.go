package wgsl

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// spirvVal validates words with spirv-val for Vulkan 1.1 (and the extra
// flags). Where spirv-val is not installed it logs that and returns, so the
// test goes on with its own assertions (a failure where spirv-val is
// required: CI).
func spirvVal(t *testing.T, name string, words []uint32, flags ...string) {
	t.Helper()
	path, err := exec.LookPath("spirv-val")
	if err != nil {
		// Not a skip: the caller's own assertions (reflection, goldens) must
		// run whether or not the external validator is there.
		if prereq.Required("spirv-val") {
			t.Fatalf("spirv-val required here (CI or $%s) but not on PATH (Debian: apt-get install spirv-tools): %v", prereq.EnvVar("spirv-val"), err)
		}
		t.Logf("%s: not checked by spirv-val (not installed; Debian: spirv-tools)", name)
		return
	}
	buf := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	file := filepath.Join(t.TempDir(), "m.spv")
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, append(append([]string{"--target-env", "vulkan1.1"}, flags...), file)...).CombinedOutput()
	if err != nil {
		dis := ""
		if d, err := exec.Command("spirv-dis", file).CombinedOutput(); err == nil {
			dis = string(d)
		}
		t.Errorf("%s: spirv-val: %v\n%s\n%s", name, err, out, dis)
	}
}

// compileOK compiles src and validates the SPIR-V.
func compileOK(t *testing.T, name, src string) *Module {
	t.Helper()
	m, err := Compile(name, src, Options{})
	if err != nil {
		if l, ok := err.(ErrorList); ok {
			t.Fatalf("%s: unexpected errors:\n%s", name, l.Pretty())
		}
		t.Fatalf("%s: %v", name, err)
	}
	if m.SPIRV == nil {
		if m.NoSPIRV == "" {
			t.Fatalf("%s: no SPIR-V and no reason", name)
		}
	} else {
		spirvVal(t, name, m.SPIRV)
	}
	specializeAll(t, name, m)
	return m
}

// specializeAll specializes every entry point of m with the overrides'
// defaults (1 for an override without one) and validates the SPIR-V.
func specializeAll(t *testing.T, name string, m *Module) {
	t.Helper()
	consts := map[string]float64{}
	for _, o := range m.Reflection.Overrides {
		if !o.HasDefault && o.Derived == "" {
			consts[o.Name] = 1
		}
	}
	for _, ep := range m.Reflection.EntryPoints {
		sp, err := m.Specialize(ep.Name, consts)
		if err != nil {
			t.Errorf("%s: Specialize(%q): %v", name, ep.Name, err)
			continue
		}
		spirvVal(t, name+"/"+ep.Name, sp.SPIRV)
	}
}

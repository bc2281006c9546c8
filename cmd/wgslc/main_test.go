package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kernel = `@group(0) @binding(0) var<storage, read_write> o: array<f32>;
override WG: u32 = 32;
@compute @workgroup_size(WG) fn main(@builtin(global_invocation_id) g: vec3<u32>) { o[g.x] = 1.0; }
`

func TestCompileDefaultOutput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "k.wgsl")
	if err := os.WriteFile(in, []byte(kernel), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{in}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "k.spv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 20 || binary.LittleEndian.Uint32(data) != 0x07230203 {
		t.Fatalf("not SPIR-V: % x", data[:min(len(data), 8)])
	}
	if stdout.Len() != 0 {
		t.Errorf("unexpected stdout %q", stdout.String())
	}
}

func TestReflect(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "k.wgsl")
	out := filepath.Join(dir, "other.spv")
	os.WriteFile(in, []byte(kernel), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-o", out, "--reflect", in}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Bindings []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"bindings"`
		Overrides []struct {
			Name string `json:"name"`
		} `json:"overrides"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if len(r.Bindings) != 1 || r.Bindings[0].Type != "array<f32>" || len(r.Overrides) != 1 || r.Overrides[0].Name != "WG" {
		t.Errorf("reflection: %s", stdout.String())
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.wgsl")
	os.WriteFile(in, []byte("@compute @workgroup_size(1)\nfn main() {\n  let x: u32 = 1.5;\n}\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{in}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	want := in + ":3:16: error: cannot use a value of type 'abstract-float' as 'u32'\n  let x: u32 = 1.5;\n               ^~~\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.spv")); err == nil {
		t.Error("output written despite errors")
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: wgslc") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	if code := run([]string{"/nonexistent/x.wgsl"}, &stdout, &stderr); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestEntry emits one entry point of a module that has no whole-module SPIR-V
// (two entry points, one sized by an override), and refuses to write the
// whole module.
func TestEntry(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "two.wgsl")
	src := kernel + "@compute @workgroup_size(2) fn other() {}\n"
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{in}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no whole-module SPIR-V") {
		t.Errorf("whole module: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	out := filepath.Join(dir, "main.spv")
	if code := run([]string{"--entry", "main", "-o", out, in}, &stdout, &stderr); code != 0 {
		t.Fatalf("--entry main: exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 20 || binary.LittleEndian.Uint32(data) != 0x07230203 {
		t.Fatalf("not SPIR-V: % x", data[:min(len(data), 8)])
	}
	if !bytes.Contains(data, []byte("main\x00")) || bytes.Contains(data, []byte("other\x00")) {
		t.Errorf("--entry main: want main and not other in the module")
	}
	if code := run([]string{"--entry", "nope", in}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `no entry point "nope"`) {
		t.Errorf("--entry nope: exit %d, stderr %q", code, stderr.String())
	}
}

// Include lines are resolved from the input's folder (as the project's
// kernels include shaders/include/*.wgsl), the project's own kernels
// compile, and an error in an included file names that file and its line.
func TestIncludes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "m.spv")
	if code := run([]string{"-o", out, "../../shaders/matmul_shared.wgsl"}, &stdout, &stderr); code != 0 {
		t.Fatalf("the project's matmul_shared.wgsl: exit %d: %s", code, stderr.String())
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "inc"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := filepath.Join(dir, "k.wgsl")
	files := map[string]string{
		k:                                   "//#include \"inc/h.wgsl\"\n@compute @workgroup_size(1) fn main() { let x: u32 = g(); }\n",
		filepath.Join(dir, "inc", "h.wgsl"): "fn g() -> u32 {\n  return nope;\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stderr.Reset()
	if code := run([]string{k}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), filepath.Join(dir, "inc", "h.wgsl")+":2:") {
		t.Errorf("exit %d: %s, want the error at %s:2", code, stderr.String(), filepath.Join(dir, "inc", "h.wgsl"))
	}
	if err := os.Remove(filepath.Join(dir, "inc", "h.wgsl")); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{k}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `k.wgsl:1: include "inc/h.wgsl"`) {
		t.Errorf("a missing include: exit %d: %s", code, stderr.String())
	}
}

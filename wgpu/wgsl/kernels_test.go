package wgsl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestKernels compiles the realistic kernels in testdata/kernels, validates
// their SPIR-V and compares their reflection with the golden .reflect.json.
func TestKernels(t *testing.T) {
	files, err := filepath.Glob("testdata/kernels/*.wgsl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernels: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m := compileOK(t, filepath.Base(file), string(src))
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(m.Reflection); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(file, ".wgsl") + ".reflect.json"
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(want, buf.Bytes()) {
				t.Errorf("reflection differs from %s:\ngot:\n%s\nwant:\n%s", golden, buf.Bytes(), want)
			}
		})
	}
}

// TestDiagnostics compares the printed diagnostics (with source lines and
// carets) of the programs in testdata/diag with their .golden files.
func TestDiagnostics(t *testing.T) {
	files, err := filepath.Glob("testdata/diag/*.wgsl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no diagnostics tests: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile(filepath.Base(file), string(src), Options{})
			list, ok := err.(ErrorList)
			if !ok {
				t.Fatalf("want an ErrorList, got %v", err)
			}
			got := []byte(list.Pretty())
			golden := strings.TrimSuffix(file, ".wgsl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("diagnostics differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// TestValidReflection keeps the reflection of every program in validPrograms
// in one golden file, so layout or binding changes show up in review.
func TestValidReflection(t *testing.T) {
	all := map[string]Reflection{}
	for _, p := range validPrograms {
		m, err := Compile(p.name+".wgsl", p.src, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		all[p.name] = m.Reflection
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(all); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/valid.reflect.json"
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("reflection differs from %s (run go test -update and review the diff)", golden)
	}
}

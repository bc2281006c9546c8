package wgsl

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompile feeds arbitrary text through parse, check and emit, and
// specializes the first entry point (also with native subgroup matrices and
// with loops unrolled). It must
// never panic, and every error must be a positioned ErrorList, never an
// InternalError (a checker/emitter mismatch). Run: go test -fuzz FuzzCompile ./wgpu/wgsl
func FuzzCompile(f *testing.F) {
	for _, p := range validPrograms {
		f.Add(p.src)
	}
	for _, p := range invalidPrograms {
		f.Add(p.src)
	}
	for _, p := range sgmValid {
		f.Add(p.src)
	}
	for _, p := range sgmInvalid {
		f.Add(p.src)
	}
	files, _ := filepath.Glob("testdata/*/*.wgsl")
	for _, file := range files {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(string(src))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<16 {
			return
		}
		m, err := Compile("fuzz.wgsl", src, Options{})
		if err != nil {
			list, ok := err.(ErrorList)
			if !ok {
				t.Fatalf("non-user error %T: %v\n%s", err, err, src)
			}
			for _, e := range list {
				if e.Line < 1 || e.Col < 1 || e.Offset > len(src) || e.End > len(src) {
					t.Fatalf("bad position %+v", e)
				}
			}
			_ = list.Pretty()
			return
		}
		if m.SPIRV == nil && m.NoSPIRV == "" || m.SPIRV != nil && (len(m.SPIRV) < 5 || m.SPIRV[0] != 0x07230203) {
			t.Fatalf("bad SPIR-V header (%d words, NoSPIRV %q)", len(m.SPIRV), m.NoSPIRV)
		}
		// The first entry point, specialized with the defaults: errors are
		// pipeline-creation errors (an override without a value, a size out
		// of range), never an internal error.
		if len(m.Reflection.EntryPoints) == 0 {
			return
		}
		sp, err := m.Specialize(m.Reflection.EntryPoints[0].Name, nil)
		if err != nil {
			var ie *InternalError
			if errors.As(err, &ie) {
				t.Fatalf("Specialize: %v\n%s", err, src)
			}
			return
		}
		if len(sp.SPIRV) < 5 || sp.SPIRV[0] != 0x07230203 {
			t.Fatalf("Specialize: bad SPIR-V header")
		}
		// The native matrices' emitter (coopBounds) and the unrolling
		// (unroll.go): the same program, no internal error.
		for _, opt := range []Options{{CooperativeMatrix: true}, {UnrollLoops: true}} {
			m, err := Compile("fuzz.wgsl", src, opt)
			var ie *InternalError
			if errors.As(err, &ie) {
				t.Fatalf("%+v: %v\n%s", opt, err, src)
			}
			if err != nil {
				continue
			}
			if _, err := m.Specialize(m.Reflection.EntryPoints[0].Name, nil); errors.As(err, &ie) {
				t.Fatalf("%+v: Specialize: %v\n%s", opt, err, src)
			}
		}
	})
}

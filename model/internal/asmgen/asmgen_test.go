package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed ops_amd64.s and ops_amd64_stubs.go in package model are what
// the generator writes now: regenerate into a temporary folder and compare. On
// a mismatch run `go generate ./model/`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := write(filepath.Join(dir, "ops_amd64.s"), filepath.Join(dir, "ops_amd64_stubs.go")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ops_amd64.s", "ops_amd64_stubs.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("model/%s differs from the generator's output: run `go generate ./model/`", name)
		}
	}
}

// An AVX2 kernel that used X16-X31 or ZMM registers would assemble (with EVEX
// encodings) and fault on CPUs without AVX-512: the generator refuses it.
func TestCheckAVX2Registers(t *testing.T) {
	ok := "TEXT ·fAVX2(SB), NOSPLIT, $0-8\n\tVADDPS Y15, Y1, Y2\nTEXT ·fAVX512(SB), NOSPLIT, $0-8\n\tVADDPS Z31, Z1, Z2\n"
	if err := checkAVX2Registers(ok); err != nil {
		t.Errorf("valid file rejected: %v", err)
	}
	for _, bad := range []string{"VADDPS Y16, Y1, Y2", "VADDPS Z1, Z1, Z2", "VMOVSS X20, (AX)"} {
		err := checkAVX2Registers("TEXT ·fAVX2(SB), NOSPLIT, $0-8\n\t" + bad + "\n")
		if err == nil || !strings.Contains(err.Error(), "AVX-512 register") {
			t.Errorf("%q: err = %v, want an AVX-512 register error", bad, err)
		}
	}
}

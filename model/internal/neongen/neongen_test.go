package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// The committed ops_arm64.s and ops_arm64_stubs.go in package model are what
// the generator writes now: regenerate into a temporary folder and compare. On
// a mismatch run `go generate ./model/`.
func TestGeneratedFilesUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := write(filepath.Join(dir, "ops_arm64.s"), filepath.Join(dir, "ops_arm64_stubs.go")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ops_arm64.s", "ops_arm64_stubs.go"} {
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

// A sample of the encodings, as GNU as (binutils 2.40,
// aarch64-linux-gnu-as) assembles them; TestEncodingsAssemble checks every
// form where as is installed.
func TestEncoding(t *testing.T) {
	for _, c := range []struct {
		got  uint32
		want uint32
		gnu  string
	}{
		{fmlaElem(0, 1, 2, 0), 0x4f821020, "fmla v0.4s, v1.4s, v2.s[0]"},
		{fmlaElem(23, 31, 29, 3), 0x4fbd1bf7, "fmla v23.4s, v31.4s, v29.s[3]"},
		{fmlaElem(5, 30, 16, 1), 0x4fb013c5, "fmla v5.4s, v30.4s, v16.s[1]"},
		{fmlaElem(9, 3, 7, 2), 0x4f871869, "fmla v9.4s, v3.4s, v7.s[2]"},
		{fcvtl(31, 30, false), 0x0e217bdf, "fcvtl v31.4s, v30.4h"},
		{fcvtl(30, 30, true), 0x4e217bde, "fcvtl2 v30.4s, v30.8h"},
		{shll16(31, 30, false), 0x2e613bdf, "shll v31.4s, v30.4h, #16"},
		{shll16(1, 22, true), 0x6e613ac1, "shll2 v1.4s, v22.8h, #16"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %#08x, want %#08x", c.gnu, c.got, c.want)
		}
	}
}

// gnuAs assembles lines with GNU as for AArch64 and returns the
// instructions' words; a missing as is a missing prerequisite.
func gnuAs(t *testing.T, lines []string) []uint32 {
	t.Helper()
	as := prereq.Tool(t, "aarch64-linux-gnu-as", "binutils-aarch64-linux-gnu")
	objcopy := prereq.Tool(t, "aarch64-linux-gnu-objcopy", "binutils-aarch64-linux-gnu")
	dir := t.TempDir()
	src, obj, bin := filepath.Join(dir, "a.s"), filepath.Join(dir, "a.o"), filepath.Join(dir, "a.bin")
	if err := os.WriteFile(src, []byte(".text\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "-j", ".text", obj, bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*len(lines) {
		t.Fatalf("as gave %d bytes for %d instructions", len(b), len(lines))
	}
	words := make([]uint32, len(lines))
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return words
}

// Every form the encoders write (each register in each field, each lane)
// is the word GNU as assembles from its GNU syntax.
func TestEncodingsAssemble(t *testing.T) {
	var lines []string
	var words []uint32
	add := func(w uint32, gnu string) {
		words = append(words, w)
		lines = append(lines, gnu)
	}
	for r := range 32 {
		for idx := range 4 {
			for _, f := range [][3]int{{r, 7, 13}, {3, r, 13}, {3, 7, r}} {
				add(fmlaElem(f[0], f[1], f[2], idx), gnuFMLA(f[0], f[1], f[2], idx))
			}
		}
		for _, up := range []bool{false, true} {
			for _, f := range [][2]int{{r, 9}, {9, r}, {r, r}} {
				add(fcvtl(f[0], f[1], up), gnuFCVTL(f[0], f[1], up))
				add(shll16(f[0], f[1], up), gnuSHLL(f[0], f[1], up))
			}
		}
	}
	// The row kernels' forms (rows.go, dot.go, norms.go).
	for r := range 32 {
		for _, f := range [][3]int{{r, 7, 13}, {3, r, 13}, {3, 7, r}} {
			for _, o := range []op3{opFADD, opFSUB, opFMUL, opFDIV, opFMLA, opFMAXNM, opFMINNM, opFCMGT, opADD, opBSL, opORR, opBIF, opFADD2D, opFSUB2D, opFMUL2D} {
				add(o.enc(f[0], f[1], f[2]))
			}
			add(ext8(f[0], f[1], f[2]))
			for idx := range 4 {
				add(fmulElem(f[0], f[1], f[2], idx))
			}
		}
		for _, f := range [][2]int{{r, 9}, {9, r}} {
			for _, o := range []op2{opFRINTN, opFCVTNS} {
				add(o.enc(f[0], f[1]))
			}
			for idx := range 4 {
				add(dupElem(f[0], f[1], idx))
			}
			add(faddp(f[0], f[1]))
			add(faddp64(f[0], f[1]))
			add(dup64(f[0], f[1]))
			add(fcvtl64(f[0], f[1], false))
			add(fcvtl64(f[0], f[1], true))
			for _, sh := range []int{0, 1, 23, 31} {
				add(shl32(f[0], f[1], sh))
			}
		}
	}
	want := gnuAs(t, lines)
	for i := range words {
		if words[i] != want[i] {
			t.Errorf("%s: %#08x, as gives %#08x", lines[i], words[i], want[i])
		}
	}
}

// wordLine is a WORD directive of the generated file with its GNU syntax.
var wordLine = regexp.MustCompile(`^\tWORD \$0x([0-9a-f]{8}) // (.*)$`)

// Every WORD of the committed ops_arm64.s is what GNU as assembles from the
// instruction in its comment.
func TestGeneratedWords(t *testing.T) {
	f, err := os.ReadFile(filepath.Join("..", "..", "ops_arm64.s"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]uint32{}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		if m := wordLine.FindStringSubmatch(sc.Text()); m != nil {
			w, _ := strconv.ParseUint(m[1], 16, 32)
			if old, ok := seen[m[2]]; ok && old != uint32(w) {
				t.Fatalf("%s written as %#08x and %#08x", m[2], old, w)
			}
			seen[m[2]] = uint32(w)
		} else if strings.HasPrefix(strings.TrimSpace(sc.Text()), "WORD") {
			t.Fatalf("a WORD without its instruction: %q", sc.Text())
		}
	}
	if len(seen) < 100 {
		t.Fatalf("only %d distinct WORD instructions in ops_arm64.s", len(seen))
	}
	var lines []string
	for l := range seen {
		lines = append(lines, l)
	}
	want := gnuAs(t, lines)
	for i, l := range lines {
		if seen[l] != want[i] {
			t.Errorf("%s: %#08x, as gives %#08x", l, seen[l], want[i])
		}
	}
}

// The register rules: the kernels touch no general register Go or darwin
// reserves (R18 the platform register, R26-R30 Go's context, REGTMP, g,
// frame pointer and link register), and no vector register past V31.
func TestRegisters(t *testing.T) {
	asm, _ := Generate()
	bad := regexp.MustCompile(`\bR(18|26|27|28|29|30)\b|\bV(3[2-9]|[4-9][0-9])\b`)
	for i, l := range strings.Split(string(asm), "\n") {
		if m := bad.FindString(l); m != "" {
			t.Errorf("line %d: %s uses %s", i+1, strings.TrimSpace(l), m)
		}
	}
}

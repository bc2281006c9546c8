package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// The AMX encodings, as GNU as 2.40 (binutils, Debian 12) assembled the
// Intel-syntax instructions when they were written: an expectation from
// another implementation, so this test needs no tool.
func TestAMXEncoding(t *testing.T) {
	for _, c := range []struct {
		got  []byte
		want string // as -msyntax=intel: the comment
	}{
		{ldtilecfg(0), "c4 e2 78 49 00"},           // ldtilecfg [rax]
		{ldtilecfg(2), "c4 e2 78 49 02"},           // ldtilecfg [rdx]
		{tilerelease(), "c4 e2 78 49 c0"},          // tilerelease
		{tilezero(3), "c4 e2 7b 49 d8"},            // tilezero tmm3
		{tileloadd(1, 6, 1), "c4 e2 7b 4b 0c 0e"},  // tileloadd tmm1,[rsi+rcx*1]
		{tileloadd(4, 8, 9), "c4 82 7b 4b 24 08"},  // tileloadd tmm4,[r8+r9*1]
		{tileloadd(7, 12, 8), "c4 82 7b 4b 3c 04"}, // tileloadd tmm7,[r12+r8*1]
		{tilestored(0, 2, 1), "c4 e2 7a 4b 04 0a"}, // tilestored [rdx+rcx*1],tmm0
		{tilestored(2, 7, 9), "c4 a2 7a 4b 14 0f"}, // tilestored [rdi+r9*1],tmm2
		{tdpbf16ps(0, 1, 2), "c4 e2 6a 5c c1"},     // tdpbf16ps tmm0,tmm1,tmm2
		{tdpbf16ps(0, 4, 6), "c4 e2 4a 5c c4"},     // tdpbf16ps tmm0,tmm4,tmm6
		{tdpbf16ps(3, 5, 7), "c4 e2 42 5c dd"},     // tdpbf16ps tmm3,tmm5,tmm7
	} {
		if got := fmt.Sprintf("% x", c.got); got != c.want {
			t.Errorf("encoding %s, want %s", got, c.want)
		}
	}
}

// assemble returns the machine code GNU as makes of Intel-syntax lines.
func assemble(t *testing.T, lines []string) []byte {
	t.Helper()
	as := prereq.Tool(t, "as", "binutils")
	objcopy := prereq.Tool(t, "objcopy", "binutils")
	dir := t.TempDir()
	src := filepath.Join(dir, "a.s")
	if err := os.WriteFile(src, []byte(".intel_syntax noprefix\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	obj, bin := filepath.Join(dir, "a.o"), filepath.Join(dir, "a.bin")
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
	return b
}

// Every form the encoders can write (each tile, each general register as a
// base or stride that they accept) is the bytes GNU as assembles for it.
// as (binutils) is a prerequisite like objdump: the test skips without it;
// TestAMXEncoding holds its answers for a sample either way.
func TestAMXEncodingsAssemble(t *testing.T) {
	regs := []string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
	var lines []string
	var code bytes.Buffer
	add := func(line string, b []byte) {
		lines = append(lines, line)
		code.Write(b)
	}
	add("tilerelease", tilerelease())
	for r, name := range regs {
		if r&7 != 4 && r&7 != 5 {
			add(fmt.Sprintf("ldtilecfg [%s]", name), ldtilecfg(r))
		}
	}
	for tm := range 8 {
		add(fmt.Sprintf("tilezero tmm%d", tm), tilezero(tm))
		for base, bn := range regs {
			for index, in := range regs {
				if base&7 == 5 || index == 4 {
					continue
				}
				add(fmt.Sprintf("tileloadd tmm%d,[%s+%s*1]", tm, bn, in), tileloadd(tm, base, index))
				add(fmt.Sprintf("tilestored [%s+%s*1],tmm%d", bn, in, tm), tilestored(tm, base, index))
			}
		}
		for a := range 8 {
			for b := range 8 {
				if a != tm && b != tm && a != b {
					add(fmt.Sprintf("tdpbf16ps tmm%d,tmm%d,tmm%d", tm, a, b), tdpbf16ps(tm, a, b))
				}
			}
		}
	}
	if want := assemble(t, lines); !bytes.Equal(code.Bytes(), want) {
		// Find the first instruction that differs.
		for _, l := range lines {
			if g, w := fmt.Sprintf("% x", assembleOne(l)), fmt.Sprintf("% x", assemble(t, []string{l})); g != w {
				t.Fatalf("%s: encoded %s, as gives %s", l, g, w)
			}
		}
		t.Fatal("the encodings differ from as's")
	}
}

// assembleOne is the encoders' bytes for one line of TestAMXEncodingsAssemble.
func assembleOne(line string) []byte {
	var a, b, c int
	reg := map[string]int{"rax": 0, "rcx": 1, "rdx": 2, "rbx": 3, "rsp": 4, "rbp": 5, "rsi": 6, "rdi": 7,
		"r8": 8, "r9": 9, "r10": 10, "r11": 11, "r12": 12, "r13": 13, "r14": 14, "r15": 15}
	f := strings.NewReplacer("[", " ", "]", " ", ",", " ", "+", " ", "*1", " ", "tmm", "").Replace(line)
	w := strings.Fields(f)
	switch w[0] {
	case "tilerelease":
		return tilerelease()
	case "ldtilecfg":
		return ldtilecfg(reg[w[1]])
	case "tilezero":
		fmt.Sscan(w[1], &a)
		return tilezero(a)
	case "tileloadd":
		fmt.Sscan(w[1], &a)
		return tileloadd(a, reg[w[2]], reg[w[3]])
	case "tilestored":
		fmt.Sscan(w[3], &a)
		return tilestored(a, reg[w[1]], reg[w[2]])
	case "tdpbf16ps":
		fmt.Sscan(w[1], &a)
		fmt.Sscan(w[2], &b)
		fmt.Sscan(w[3], &c)
		return tdpbf16ps(a, b, c)
	}
	return nil
}

// The generated kernel writes every AMX instruction as the bytes GNU as
// assembles from the Intel-syntax comment above them.
func TestGeneratedAMX(t *testing.T) {
	asm, _, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(asm), "\n")
	var intel []string
	var code []byte
	for i, line := range lines {
		c, ok := strings.CutPrefix(strings.TrimSpace(line), "// ")
		if !ok || !(strings.HasPrefix(c, "tile") || strings.HasPrefix(c, "tdpbf16ps") || strings.HasPrefix(c, "ldtilecfg")) {
			continue
		}
		intel = append(intel, c)
		for _, l := range lines[i+1:] {
			f := strings.Fields(l)
			if len(f) != 2 || f[0] != "BYTE" {
				break
			}
			var b byte
			if _, err := fmt.Sscanf(f[1], "$0x%x", &b); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			code = append(code, b)
		}
	}
	// amxChunkBF16: ldtilecfg, 4 tilezero, 4 tileloadd (the result tiles), 4
	// tileloadd and 4 tdpbf16ps (a step of k), 4 tilestored, tilerelease;
	// amxChunk16BF16 the same with 2 result tiles, 3 loads and 2 tdpbf16ps.
	if want := (1 + 4 + 4 + 8 + 4 + 1) + (1 + 2 + 2 + 5 + 2 + 1); len(intel) != want {
		t.Errorf("%d AMX instructions in the generated file, want %d", len(intel), want)
	}
	if want := assemble(t, intel); !bytes.Equal(code, want) {
		t.Errorf("generated AMX bytes\n% x\nas assembles\n% x\nfrom %q", code, want, intel)
	}
}

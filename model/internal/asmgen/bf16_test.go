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

// The VDPBF16PS encodings, as GNU objdump 2.40 (binutils, Debian 12)
// disassembled them when they were written: an expectation from another
// implementation, so this test needs no tool.
func TestVDPBF16PSEncoding(t *testing.T) {
	for _, c := range []struct {
		dst, src1, src2 int
		want            string // bytes; objdump -M intel: vdpbf16ps zmm<dst>,zmm<src1>,zmm<src2>
	}{
		{0, 16, 20, "62 b2 7e 40 52 c4"},
		{15, 19, 20, "62 32 66 40 52 fc"},
		{5, 17, 20, "62 b2 76 40 52 ec"},
		{31, 1, 9, "62 42 76 48 52 f9"},
		{8, 0, 24, "62 12 7e 48 52 c0"},
		{16, 31, 7, "62 e2 06 40 52 c7"},
		{3, 8, 16, "62 b2 3e 48 52 d8"},
	} {
		if got := fmt.Sprintf("% x", vdpbf16ps(c.dst, c.src1, c.src2)); got != c.want {
			t.Errorf("vdpbf16ps(%d, %d, %d) = %s, want %s", c.dst, c.src1, c.src2, got, c.want)
		}
	}
}

// Every register combination decodes, in objdump, as the instruction meant.
// objdump (binutils) is a prerequisite like spirv-val: the test skips
// without it, but fails under CI, which installs it; TestVDPBF16PSEncoding
// holds its answers for a sample either way.
func TestVDPBF16PSDecodes(t *testing.T) {
	objdump := prereq.Tool(t, "objdump", "binutils")
	var code bytes.Buffer
	var want []string
	for d := range 32 {
		for s1 := range 32 {
			for s2 := range 32 {
				code.Write(vdpbf16ps(d, s1, s2))
				want = append(want, fmt.Sprintf("vdpbf16ps zmm%d,zmm%d,zmm%d", d, s1, s2))
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(bin, code.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", "--no-show-raw-insn", bin).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if _, ins, ok := strings.Cut(line, ":\t"); ok {
			got = append(got, strings.Join(strings.Fields(ins), " "))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("objdump decoded %d instructions, want %d (first: %q)", len(got), len(want), got[:min(3, len(got))])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("instruction %d decodes as %q, want %q", i, got[i], want[i])
			break
		}
	}
}

// The generated dpbf kernels write every VDPBF16PS as the six bytes of the
// instruction their comment names.
func TestGeneratedVDPBF16PS(t *testing.T) {
	asm, _, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(asm), "\n")
	n := 0
	for i, line := range lines {
		var d, s1, s2 int
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "// VDPBF16PS Z%d, Z%d, Z%d", &s2, &s1, &d); err != nil {
			continue
		}
		n++
		var got []string
		for _, l := range lines[i+1 : i+7] {
			f := strings.Fields(l)
			if len(f) != 2 || f[0] != "BYTE" {
				t.Fatalf("line %d: %q after %q, want BYTE", i+2, l, line)
			}
			got = append(got, strings.TrimPrefix(f[1], "$0x"))
		}
		if g, w := strings.Join(got, " "), fmt.Sprintf("% x", vdpbf16ps(d, s1, s2)); g != w {
			t.Errorf("line %d: %s is %s, want %s", i+1, line, g, w)
		}
	}
	// 4x4, 1x4, 1x1 and the three 4x4 chunk kernels, each in the loop and
	// the tail.
	if want := 2 * (16 + 4 + 1 + 3*16); n != want {
		t.Errorf("%d VDPBF16PS in the generated file, want %d", n, want)
	}
}

package main

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// TestGeneratedUpToDate regenerates ztables.go from the npm packages
// ($WGPU_UNICODE_DATA; .ci/run installs them) and compares it with the
// committed file.
func TestGeneratedUpToDate(t *testing.T) {
	if !slices.Equal(Packages, prereq.UnicodeDataPackages) {
		t.Fatalf("gen reads %v, prereq.UnicodeDataPackages lists %v", Packages, prereq.UnicodeDataPackages)
	}
	modules := prereq.UnicodeData(t)
	got, err := generate(modules)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../ztables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ztables.go is stale (or the data differs): run %s=%s go generate in model/tokenizer/internal/ucd", DataEnv, modules)
	}
}

// TestDecodeRanges decodes the packages' White_Space (Unicode 16.0) by hand:
// its code points are those of PropList.txt.
func TestDecodeRanges(t *testing.T) {
	got, err := decodeRanges("JERAhjAZAxXeAwl-KcBEAguAw-fA")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]rune{{0x09, 0x0D}, {0x20, 0x20}, {0x85, 0x85}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
		{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}}
	if !slices.Equal(got, want) {
		t.Errorf("decodeRanges: %x, want %x", got, want)
	}
	for _, bad := range []string{"J", "JE*", "g"} {
		if _, err := decodeRanges(bad); err == nil {
			t.Errorf("decodeRanges(%q): no error", bad)
		}
	}
}

// TestStrides packs code points into strided unicode.Range entries and
// splits them at U+FFFF without losing or adding any.
func TestStrides(t *testing.T) {
	// {20} pairs with {0xFFF0}; 0xFFFE, 0x1000C, 0x1001A are one run across U+FFFF.
	in := [][2]rune{{1, 1}, {3, 3}, {5, 5}, {6, 9}, {20, 20}, {0xFFF0, 0xFFF0}, {0xFFFE, 0xFFFE}, {0x1000C, 0x1000C},
		{0x1001A, 0x1001A}, {0x1FFFE, 0x20001}, {0x10FFFF, 0x10FFFF}}
	ss := strides(in)
	if want := (strided{1, 5, 2}); ss[0] != want {
		t.Errorf("strides: first %v, want %v", ss[0], want)
	}
	r16, r32, latin := split16(ss)
	if latin != 2 {
		t.Errorf("LatinOffset %d, want 2", latin)
	}
	var got [][2]rune
	for _, s := range append(r16, r32...) {
		for r := s.lo; r <= s.hi; r += s.stride {
			got = append(got, [2]rune{r, r})
		}
	}
	var want [][2]rune
	for _, r := range in {
		for c := r[0]; c <= r[1]; c++ {
			want = append(want, [2]rune{c, c})
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("strides and split16 give %x, want %x", got, want)
	}
	for _, s := range r16 {
		if s.hi > 0xFFFF {
			t.Errorf("Range16 %v beyond U+FFFF", s)
		}
	}
	for _, s := range r32 {
		if s.lo <= 0xFFFF {
			t.Errorf("Range32 %v below U+10000", s)
		}
	}
}

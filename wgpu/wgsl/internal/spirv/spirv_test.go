package spirv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

func TestString(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []uint32
	}{
		{"", []uint32{0}},
		{"abc", []uint32{0x00636261}},
		{"main", []uint32{0x6e69616d, 0}},
	} {
		if got := String(c.s); len(got) != len(c.want) || got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1] {
			t.Errorf("String(%q) = %#x, want %#x", c.s, got, c.want)
		}
	}
}

func TestSection(t *testing.T) {
	var s Section
	s.Add(OpTypeInt, 5, 32, 1)
	if len(s) != 4 || s[0] != 4<<16|uint32(OpTypeInt) {
		t.Errorf("Add: %#x", s)
	}
	if OpTypeInt.String() != "OpTypeInt" {
		t.Errorf("String: %s", OpTypeInt)
	}
}

// TestTablesUpToDate regenerates tables.go from the installed grammar and
// compares; it skips when spirv-headers is not installed.
func TestTablesUpToDate(t *testing.T) {
	if _, err := os.Stat("/usr/include/spirv/unified1/spirv.core.grammar.json"); err != nil {
		prereq.Missing(t, "spirv-headers", fmt.Errorf("%w (Debian: apt-get install spirv-headers)", err))
	}
	out := filepath.Join(t.TempDir(), "tables.go")
	if b, err := exec.Command("go", "run", "gen.go", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile("tables.go")
	if !bytes.Equal(got, want) {
		t.Error("tables.go is stale: run go generate ./wgpu/wgsl/internal/spirv")
	}
}

// TestNewerTablesUpToDate regenerates tables_newer.go from the newer grammar
// that scripts/spirv-tools-trixie.sh unpacks beside the spirv-val of
// $WGPU_TEST_SPIRV_VAL_NEW (Debian 13's) and compares; it skips without it,
// and fails under CI.
func TestNewerTablesUpToDate(t *testing.T) {
	if _, err := os.Stat("/usr/include/spirv/unified1/spirv.core.grammar.json"); err != nil {
		prereq.Missing(t, "spirv-headers", fmt.Errorf("%w (Debian: apt-get install spirv-headers)", err))
	}
	dir := prereq.SpirvGrammarNew(t)
	out := filepath.Join(t.TempDir(), "tables_newer.go")
	if b, err := exec.Command("go", "run", "gen.go", "-newer", dir, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("gen -newer: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile("tables_newer.go")
	if !bytes.Equal(got, want) {
		t.Errorf("tables_newer.go is stale: run go run gen.go -newer %s -o tables_newer.go in wgpu/wgsl/internal/spirv", dir)
	}
}

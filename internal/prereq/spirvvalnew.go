package prereq

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// SpirvValNewEnv names the spirv-val of a newer SPIRV-Tools than Debian 12's
// (Debian 13's 2025.1, which validates SPV_KHR_cooperative_matrix):
// scripts/spirv-tools-trixie.sh DIR writes DIR/spirv-val, a wrapper that
// runs it, and unpacks Debian 13's SPIR-V grammar beside it; CI sets this.
const SpirvValNewEnv = "WGPU_TEST_SPIRV_VAL_NEW"

// SpirvValNew returns the newer spirv-val ($WGPU_TEST_SPIRV_VAL_NEW). Unset,
// the test skips (fails where "spirv-val-new" is required, as in CI); a path
// that is not an executable file fails it.
func SpirvValNew(t testing.TB) string {
	t.Helper()
	p := os.Getenv(SpirvValNewEnv)
	if p == "" {
		Missing(t, "spirv-val-new", fmt.Errorf("$%s not set (scripts/spirv-tools-trixie.sh DIR unpacks Debian 13's spirv-tools and writes DIR/spirv-val)", SpirvValNewEnv))
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatalf("$%s: %v", SpirvValNewEnv, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("$%s: %s is not an executable file", SpirvValNewEnv, p)
	}
	return p
}

// SpirvGrammarNew returns the directory of the newer SPIR-V grammar that
// scripts/spirv-tools-trixie.sh unpacks beside the spirv-val of
// $WGPU_TEST_SPIRV_VAL_NEW (DIR/usr/include/spirv/unified1); a missing one
// is handled as SpirvValNew handles a missing validator.
func SpirvGrammarNew(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(SpirvValNew(t)), "usr", "include", "spirv", "unified1")
	if _, err := os.Stat(filepath.Join(dir, "spirv.core.grammar.json")); err != nil {
		t.Fatalf("$%s: no grammar beside it: %v", SpirvValNewEnv, err)
	}
	return dir
}

package prereq

import (
	"slices"
	"strings"
	"testing"
)

// TestValidation: an instance without the validation layer fails the test
// where validation is required (CI, $WGPU_REQUIRE_VALIDATION) and goes on
// elsewhere; one with it passes everywhere.
func TestValidation(t *testing.T) {
	t.Setenv("WGPU_REQUIRE_ALL", "")
	for _, c := range []struct {
		ci, own string
		enabled bool
		fail    bool
	}{
		{"", "", false, false},
		{"true", "", false, true},
		{"", "1", false, true},
		{"true", "", true, false},
		{"", "1", true, false},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("WGPU_REQUIRE_VALIDATION", c.own)
		if failed, skipped := outcome(func(t testing.TB) { Validation(t, c.enabled) }); failed != c.fail || skipped {
			t.Errorf("CI=%q WGPU_REQUIRE_VALIDATION=%q enabled %v: failed %v skipped %v, want failed %v", c.ci, c.own, c.enabled, failed, skipped, c.fail)
		}
	}
}

// TestVulkanImplEnv: a child sees the implementation's manifest, layers and
// libraries only, has Vulkan and the validation layer required (unless
// $WGPU_NO_VALIDATION), and cannot recurse into the other implementations.
func TestVulkanImplEnv(t *testing.T) {
	t.Setenv("VK_ICD_FILENAMES", "/other/icd.json")
	t.Setenv("VK_ADD_LAYER_PATH", "/other/layers")
	t.Setenv("LD_LIBRARY_PATH", "/other/lib")
	t.Setenv("WGPU_ADAPTER", "1")
	t.Setenv(VulkanImplsEnv, "/x/impls.json")
	t.Setenv(VulkanCompilersEnv, "/x/compilers.json")
	t.Setenv("WGPU_NO_VALIDATION", "")
	t.Setenv("WGPU_REQUIRE_VULKAN", "1") // once in the child's environment, not twice
	t.Setenv(SyncValShaderAccessesEnv, "true")
	im := VulkanImpl{Name: "x", ICD: "/x/icd.json", LayerPath: "/x/layers", LibPath: "/x/lib", Expect: "X"}
	env := im.Env()
	vars := map[string][]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = append(vars[k], v)
	}
	for k, want := range map[string]string{"VK_ICD_FILENAMES": "/x/icd.json", "VK_DRIVER_FILES": "/x/icd.json", "VK_LAYER_PATH": "/x/layers",
		"LD_LIBRARY_PATH": "/x/lib", "WGPU_REQUIRE_VULKAN": "1", "WGPU_REQUIRE_VALIDATION": "1", SyncValShaderAccessesEnv: "1", childEnv: "x"} {
		if !slices.Equal(vars[k], []string{want}) {
			t.Errorf("%s = %q, want %q", k, vars[k], want)
		}
	}
	for _, k := range []string{"VK_ADD_LAYER_PATH", "WGPU_ADAPTER", VulkanImplsEnv, VulkanCompilersEnv} {
		if vars[k] != nil {
			t.Errorf("%s = %q, want it unset", k, vars[k])
		}
	}
	t.Setenv("WGPU_NO_VALIDATION", "1")
	for _, kv := range im.Env() {
		if strings.HasPrefix(kv, "WGPU_REQUIRE_VALIDATION=") || strings.HasPrefix(kv, SyncValShaderAccessesEnv+"=") {
			t.Errorf("with $WGPU_NO_VALIDATION: %s", kv)
		}
	}
}

// TestImplsInChild: in a child of RunOn, which Env gives neither list, the
// tests that read them skip, in CI too (where a missing list fails them
// elsewhere): their parent runs them.
func TestImplsInChild(t *testing.T) {
	t.Setenv("WGPU_REQUIRE_ALL", "")
	t.Setenv("CI", "true")
	t.Setenv(VulkanImplsEnv, "")
	t.Setenv(VulkanCompilersEnv, "")
	for _, c := range []struct {
		child      string
		fail, skip bool
	}{
		{"", true, false},
		{"swiftshader", false, true},
	} {
		t.Setenv(childEnv, c.child)
		for name, read := range map[string]func(testing.TB) []VulkanImpl{"VulkanImpls": VulkanImpls, "VulkanCompilers": VulkanCompilers} {
			if failed, skipped := outcome(func(t testing.TB) { read(t) }); failed != c.fail || skipped != c.skip {
				t.Errorf("%s with %s=%q: failed %v skipped %v, want failed %v skipped %v", name, childEnv, c.child, failed, skipped, c.fail, c.skip)
			}
		}
	}
}

// TestSyncValidation: an instance with the validation layer but without its
// synchronization validation fails the test where validation is required and
// goes on elsewhere.
func TestSyncValidation(t *testing.T) {
	t.Setenv("WGPU_REQUIRE_ALL", "")
	t.Setenv("WGPU_REQUIRE_VALIDATION", "")
	for _, c := range []struct {
		ci      string
		enabled bool
		fail    bool
	}{
		{"", false, false},
		{"true", false, true},
		{"true", true, false},
		{"", true, false},
	} {
		t.Setenv("CI", c.ci)
		if failed, skipped := outcome(func(t testing.TB) { SyncValidation(t, c.enabled) }); failed != c.fail || skipped {
			t.Errorf("CI=%q enabled %v: failed %v skipped %v, want failed %v", c.ci, c.enabled, failed, skipped, c.fail)
		}
	}
}

// TestTopLevelTimes keeps the top-level result lines of a verbose test
// output, not the subtests'.
func TestTopLevelTimes(t *testing.T) {
	out := "=== RUN   TestA\n    --- PASS: TestA/x (1.00s)\n--- PASS: TestA (2.00s)\n--- SKIP: TestB (0.00s)\nPASS\n"
	if got, want := topLevelTimes(out), "\n    --- PASS: TestA (2.00s)\n    --- SKIP: TestB (0.00s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

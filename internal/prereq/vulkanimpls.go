package prereq

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// VulkanImplsEnv names a JSON file listing the Vulkan implementations the GPU
// tests must also run on, beside the system's default (scripts/vulkan-impls.sh
// writes it; CI sets it): an array of VulkanImpl.
const VulkanImplsEnv = "WGPU_TEST_VULKAN_IMPLS"

// VulkanCompilersEnv names a JSON file (an array of VulkanImpl, as
// $WGPU_TEST_VULKAN_IMPLS's) listing Vulkan drivers for real GPUs that
// compile pipelines without the GPU: Mesa's RADV on "null hardware"
// (RADV_FORCE_FAMILY in Vars), whose pipelines AMD's shader compiler (ACO)
// really compiles, with statistics, but which can run nothing
// (scripts/vulkan-impls.sh writes it; CI sets it). Prerequisite
// "vulkan-compilers".
const VulkanCompilersEnv = "WGPU_TEST_VULKAN_COMPILERS"

// VulkanImpl is one Vulkan implementation a test binary can be run against:
// its ICD manifest, where its validation layer and its libraries are when
// they are not the system's, and any environment its driver needs.
type VulkanImpl struct {
	Name      string            `json:"name"`                 // a short name, for subtests ("swiftshader")
	ICD       string            `json:"icd"`                  // the driver's ICD manifest (VK_ICD_FILENAMES, VK_DRIVER_FILES)
	LayerPath string            `json:"layer_path,omitempty"` // VK_LAYER_PATH: a folder of layer manifests, when not the system's
	LibPath   string            `json:"lib_path,omitempty"`   // LD_LIBRARY_PATH: libraries the driver needs from beside it
	Vars      map[string]string `json:"env,omitempty"`        // more variables for the driver (RADV_FORCE_FAMILY=navi31)
	Expect    string            `json:"expect"`               // a part of the adapter's name or driver the tests must print
}

// VulkanImpls returns the implementations $WGPU_TEST_VULKAN_IMPLS lists. Unset,
// the test skips (fails where "vulkan-impls" is required, as in CI); a file
// that cannot be read or names a missing manifest fails it.
func VulkanImpls(t testing.TB) []VulkanImpl {
	t.Helper()
	return readImpls(t, VulkanImplsEnv, "vulkan-impls",
		"scripts/vulkan-impls.sh DIR installs SwiftShader and Mesa 25 lavapipe and writes DIR/impls.json")
}

// VulkanCompilers returns the compile-only drivers $WGPU_TEST_VULKAN_COMPILERS
// lists, as VulkanImpls does for "vulkan-compilers".
func VulkanCompilers(t testing.TB) []VulkanImpl {
	t.Helper()
	return readImpls(t, VulkanCompilersEnv, "vulkan-compilers",
		"scripts/vulkan-impls.sh DIR unpacks Mesa 25's RADV too and writes DIR/compilers.json")
}

// readImpls reads the list the variable env names, for the prerequisite
// name (hint: how to get it).
func readImpls(t testing.TB, env, name, hint string) []VulkanImpl {
	t.Helper()
	path := os.Getenv(env)
	if path == "" && os.Getenv(childEnv) != "" {
		t.Skipf("a child run on one implementation (%s): its parent runs the tests that run children", os.Getenv(childEnv))
	}
	if path == "" {
		Missing(t, name, fmt.Errorf("$%s not set (%s)", env, hint))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("$%s: %v", env, err)
	}
	var impls []VulkanImpl
	if err := json.Unmarshal(b, &impls); err != nil {
		t.Fatalf("$%s: %s: %v", env, path, err)
	}
	if len(impls) == 0 {
		t.Fatalf("$%s: %s lists no implementation", env, path)
	}
	for _, im := range impls {
		if im.Name == "" || im.Expect == "" {
			t.Fatalf("$%s: %s: an entry without name or expect: %+v", env, path, im)
		}
		if _, err := os.Stat(im.ICD); err != nil {
			t.Fatalf("$%s: %s: %s: %v", env, path, im.Name, err)
		}
	}
	return impls
}

// With is im with the variable k set to v in its child's environment
// (Vars), beside those it has.
func (im VulkanImpl) With(k, v string) VulkanImpl {
	im.Vars = maps.Clone(im.Vars)
	if im.Vars == nil {
		im.Vars = map[string]string{}
	}
	im.Vars[k] = v
	return im
}

// childEnv marks a child process of RunOn: it names the implementation the
// child runs on. A test that would run children of its own skips there
// (Env removes the lists they read, and CI's rule that a missing
// prerequisite fails must not fail them: their parent runs them).
const childEnv = "WGPU_TEST_VULKAN_CHILD"

// VulkanChild is the implementation a child process of RunOn runs on, or ""
// in any other process: for tests that need not run again on each.
func VulkanChild() string { return os.Getenv(childEnv) }

// SyncValShaderAccessesEnv is the validation layer's own variable for its
// setting syncval_shader_accesses_heuristic. Newer layers (Chromium's, for
// SwiftShader) check the accesses of shaders in their synchronization
// validation only with it; wgpu asks for it through VK_EXT_layer_settings,
// which Debian 12's loader (1.3.239) refuses, so the tests set it too.
const SyncValShaderAccessesEnv = "VK_LAYER_SYNCVAL_SHADER_ACCESSES_HEURISTIC"

// Env is the environment of a process that must see this implementation
// only: the current one with the loader's variables replaced, Vulkan and
// (unless $WGPU_NO_VALIDATION) the validation layer required, with the
// accesses of shaders checked by its synchronization validation
// (SyncValShaderAccessesEnv), $WGPU_TEST_VULKAN_IMPLS and
// $WGPU_TEST_VULKAN_COMPILERS removed and $WGPU_TEST_VULKAN_CHILD set to
// im.Name (no recursion: the tests that read those lists skip), then im.Vars. With
// LayerPath set, VK_LAYER_PATH replaces the loader's search for explicit
// layers, so the validation layer the tests enable is that folder's, never
// the system's.
func (im VulkanImpl) Env() []string {
	drop := map[string]bool{"VK_ICD_FILENAMES": true, "VK_DRIVER_FILES": true, "VK_ADD_DRIVER_FILES": true, "VK_LAYER_PATH": true,
		"VK_ADD_LAYER_PATH": true, "LD_LIBRARY_PATH": true, "WGPU_ADAPTER": true, VulkanImplsEnv: true, VulkanCompilersEnv: true,
		childEnv: true, EnvVar("vulkan"): true, EnvVar("validation"): true, SyncValShaderAccessesEnv: true}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "VK_ICD_FILENAMES="+im.ICD, "VK_DRIVER_FILES="+im.ICD, EnvVar("vulkan")+"=1", childEnv+"="+im.Name)
	if os.Getenv("WGPU_NO_VALIDATION") == "" {
		env = append(env, EnvVar("validation")+"=1", SyncValShaderAccessesEnv+"=1")
	}
	if im.LayerPath != "" {
		env = append(env, "VK_LAYER_PATH="+im.LayerPath)
	}
	if im.LibPath != "" {
		env = append(env, "LD_LIBRARY_PATH="+im.LibPath)
	}
	for _, k := range slices.Sorted(maps.Keys(im.Vars)) {
		env = append(env, k+"="+im.Vars[k])
	}
	return env
}

// RunOnVulkanImpls runs this test binary's tests matching pattern (and not
// skip, when given) once per implementation of $WGPU_TEST_VULKAN_IMPLS, each
// in a child process that sees that implementation only (VulkanImpl.Env), as
// subtests named after it. A subtest fails when the child fails, never names
// the implementation (im.Expect) in its verbose output (a wrong manifest must
// not pass on another driver), skips every test, or lacks one of the lines of
// want in its output (such as "--- PASS: TestX/hardware": a subtest that must
// have run there). The child's top-level test times are logged. With -short
// it skips.
func RunOnVulkanImpls(t *testing.T, pattern, skip string, timeout time.Duration, want ...string) {
	if testing.Short() {
		t.Skip("-short: the suites run once, on the default implementation")
	}
	RunOn(t, VulkanImpls(t), pattern, skip, timeout, want...)
}

// RunOnVulkanCompilers is RunOn for the compile-only drivers of
// $WGPU_TEST_VULKAN_COMPILERS (VulkanCompilers), with the variable k set
// to v in each child: what turns on the tests matching pattern, which
// need such a driver.
func RunOnVulkanCompilers(t *testing.T, k, v, pattern string, timeout time.Duration, want ...string) {
	impls := VulkanCompilers(t)
	for i := range impls {
		impls[i] = impls[i].With(k, v)
	}
	RunOn(t, impls, pattern, "", timeout, want...)
}

// RunOn is RunOnVulkanImpls for the implementations impls (such as
// VulkanCompilers'), without its -short rule.
func RunOn(t *testing.T, impls []VulkanImpl, pattern, skip string, timeout time.Duration, want ...string) {
	for _, im := range impls {
		t.Run(im.Name, func(t *testing.T) {
			start := time.Now()
			args := []string{"-test.run", pattern, "-test.count=1", "-test.v", "-test.timeout", timeout.String()}
			if skip != "" {
				args = append(args, "-test.skip", skip)
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = im.Env()
			out, err := cmd.CombinedOutput()
			text := string(out)
			t.Logf("%s: %s in %.0f s%s", im.Name, pattern, time.Since(start).Seconds(), topLevelTimes(text))
			if err != nil {
				t.Fatalf("%s: %v\n%s", im.Name, err, tail(text, 6000))
			}
			if !strings.Contains(text, im.Expect) {
				t.Fatalf("%s: the tests never named %q: another driver ran?\n%s", im.Name, im.Expect, tail(text, 3000))
			}
			if strings.Contains(text, "\n--- SKIP") && !strings.Contains(text, "\n--- PASS") {
				t.Fatalf("%s: every test skipped\n%s", im.Name, tail(text, 3000))
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("%s: no %q in the output: that test did not run or pass there", im.Name, w)
				}
			}
		})
	}
}

// topLevelTimes lists the "--- PASS: TestX (1.23s)" lines of top-level tests
// in a verbose test output, one per line, indented.
func topLevelTimes(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "--- PASS: ") || strings.HasPrefix(line, "--- FAIL: ") || strings.HasPrefix(line, "--- SKIP: ") {
			b.WriteString("\n    " + line)
		}
	}
	return b.String()
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

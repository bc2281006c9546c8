package prereq

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		ci, own, all string
		want         bool
	}{
		{"", "", "", false},
		{"true", "", "", true},
		{"false", "", "", false},
		{"", "1", "", true},
		{"", "", "1", true},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("WGPU_REQUIRE_SPIRV_VAL", c.own)
		t.Setenv("WGPU_REQUIRE_ALL", c.all)
		if got := Required("spirv-val"); got != c.want {
			t.Errorf("CI=%q own=%q all=%q: Required %v, want %v", c.ci, c.own, c.all, got, c.want)
		}
	}
}

// fakeT records how a helper ended the test.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic(f) }
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true; panic(f) }
func (f *fakeT) Logf(string, ...any)   {}

func outcome(fn func(t testing.TB)) (failed, skipped bool) {
	f := &fakeT{}
	func() {
		defer func() {
			if r := recover(); r != nil && r != f {
				panic(r)
			}
		}()
		fn(f)
	}()
	return f.failed, f.skipped
}

// TestMissingFailsUnderCI: every helper skips on a plain machine and fails under CI.
func TestMissingFailsUnderCI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("WGSL_TINT", "")
	t.Setenv(TinyShakespeareEnv, filepath.Join(t.TempDir(), "missing.txt"))
	t.Setenv("WGPU_REQUIRE_ALL", "")
	helpers := map[string]func(testing.TB){
		"tool":             func(t testing.TB) { Tool(t, "spirv-val", "spirv-tools") },
		"tinyshakespeare":  func(t testing.TB) { TinyShakespeare(t) },
		"tint":             func(t testing.TB) { Tint(t) },
		"vulkan":           func(t testing.TB) { Missing(t, "vulkan", os.ErrNotExist) },
		"vulkan-impls":     func(t testing.TB) { VulkanImpls(t) },
		"vulkan-compilers": func(t testing.TB) { VulkanCompilers(t) },
		"spirv-val-new":    func(t testing.TB) { SpirvValNew(t) },
	}
	t.Setenv(VulkanImplsEnv, "")
	t.Setenv(VulkanCompilersEnv, "")
	t.Setenv("WGPU_REQUIRE_VULKAN_COMPILERS", "")
	t.Setenv(SpirvValNewEnv, "")
	t.Setenv("WGPU_REQUIRE_SPIRV_VAL_NEW", "")
	t.Setenv("WGPU_REQUIRE_VULKAN_IMPLS", "")
	for name, h := range helpers {
		t.Setenv("CI", "")
		for _, v := range []string{"WGPU_REQUIRE_VULKAN", "WGPU_REQUIRE_SPIRV_VAL", "WGPU_REQUIRE_TINT", "WGPU_REQUIRE_TINYSHAKESPEARE"} {
			t.Setenv(v, "")
		}
		if failed, skipped := outcome(h); failed || !skipped {
			t.Errorf("%s without CI: failed %v skipped %v, want a skip", name, failed, skipped)
		}
		t.Setenv("CI", "true")
		if failed, skipped := outcome(h); !failed || skipped {
			t.Errorf("%s under CI: failed %v skipped %v, want a failure", name, failed, skipped)
		}
	}
}

// TestVulkanCompilersList: $WGPU_TEST_VULKAN_COMPILERS's list is read with
// each driver's variables, which its child's environment carries, once,
// beside the manifest and libraries, and without either list (no
// recursion).
func TestVulkanCompilersList(t *testing.T) {
	dir := t.TempDir()
	icd := filepath.Join(dir, "icd.json")
	if err := os.WriteFile(icd, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "compilers.json")
	entry := `[{"name": "radv", "icd": "` + icd + `", "lib_path": "` + dir + `", "env": {"RADV_FORCE_FAMILY": "navi31"}, "expect": "RADV NAVI31"}]`
	if err := os.WriteFile(list, []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(VulkanCompilersEnv, list)
	t.Setenv(VulkanImplsEnv, list)
	t.Setenv("VK_ICD_FILENAMES", "/elsewhere.json")
	t.Setenv("LD_LIBRARY_PATH", "/elsewhere")
	impls := VulkanCompilers(t)
	if len(impls) != 1 || impls[0].Vars["RADV_FORCE_FAMILY"] != "navi31" {
		t.Fatalf("read %+v", impls)
	}
	env := map[string][]string{}
	for _, kv := range impls[0].Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = append(env[k], v)
	}
	for k, want := range map[string]string{"VK_ICD_FILENAMES": icd, "LD_LIBRARY_PATH": dir, "RADV_FORCE_FAMILY": "navi31"} {
		if got := env[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want only %q", k, got, want)
		}
	}
	for _, k := range []string{VulkanCompilersEnv, VulkanImplsEnv} {
		if _, ok := env[k]; ok {
			t.Errorf("%s passed on to the child", k)
		}
	}
}

func TestTinyShakespeareFound(t *testing.T) {
	t.Setenv(TinyShakespeareEnv, "")
	p := TinyShakespeare(t) // skips (or fails under CI) where the shared copy is missing
	if info, err := os.Stat(p); err != nil || info.Size() != TinyShakespeareSize {
		t.Errorf("%s: %v", p, err)
	}
}

// TestTinyShakespearePath: the path is $WGPU_EVAL_TINYSHAKESPEARE when set
// (present or not: the caller reports a missing file), else the shared copy
// beside the module root.
func TestTinyShakespearePath(t *testing.T) {
	t.Setenv(TinyShakespeareEnv, "/elsewhere/ts.txt")
	if got := TinyShakespearePath(); got != "/elsewhere/ts.txt" {
		t.Errorf("with $%s set: %q", TinyShakespeareEnv, got)
	}
	t.Setenv(TinyShakespeareEnv, "")
	wd, err := os.Getwd() // internal/prereq: the module root is two folders up
	if err != nil {
		t.Fatal(err)
	}
	if got, want := TinyShakespearePath(), filepath.Join(wd, "..", "..", "..", "shared", "data", "tinyshakespeare.txt"); got != want {
		t.Errorf("unset: %q, want %q", got, want)
	}
}

// TestNoBareSkips: tests end for a missing prerequisite only through this
// package, so that CI fails instead of skipping.
func TestNoBareSkips(t *testing.T) {
	root := filepath.Join("..", "..")
	bare := regexp.MustCompile(`t\.Skipf?\("[^"]*(?i:vulkan|spirv|tinyshakespeare|tint|wgsl_tint|not installed|not on path|not available|unavailable)`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, filepath.Join(root, "internal", "prereq")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if bare.MatchString(line) {
				t.Errorf("%s:%d: skips for a missing prerequisite without prereq.Missing: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEnvVarIsSettable: every prerequisite's variable is one a shell can set
// (letters, digits and _), whatever the name holds.
func TestEnvVarIsSettable(t *testing.T) {
	for name, want := range map[string]string{"vk.xml": "WGPU_REQUIRE_VK_XML", "spirv-val": "WGPU_REQUIRE_SPIRV_VAL", "vulkan": "WGPU_REQUIRE_VULKAN"} {
		if got := EnvVar(name); got != want {
			t.Errorf("EnvVar(%q) = %q, want %q", name, got, want)
		}
	}
}

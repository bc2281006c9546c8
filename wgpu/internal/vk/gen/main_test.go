package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// TestGeneratedUpToDate regenerates into a temporary directory and compares with the committed files. The registry
// is $WGPU_VK_XML, else the system's; one of another VK_HEADER_VERSION than the committed files (Debian 12's 239) is
// a missing prerequisite: CI fetches Debian 13's with scripts/vulkan-headers-trixie.sh.
func TestGeneratedUpToDate(t *testing.T) {
	registry := defaultRegistry()
	f, err := os.Open(registry)
	if err != nil {
		prereq.Missing(t, "vk.xml", fmt.Errorf("%w (scripts/vulkan-headers-trixie.sh DIR; $%s)", err, RegistryEnv))
	}
	root, err := parseXML(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := loadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../ztypes.go")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(committed, []byte("\n"))
	if want := fmt.Sprintf("(VK_HEADER_VERSION %s)", reg.Version); !bytes.Contains(line, []byte(want)) {
		prereq.Missing(t, "vk.xml", fmt.Sprintf("%s is VK_HEADER_VERSION %s, the committed files say %q: "+
			"run scripts/vulkan-headers-trixie.sh DIR and set $%s=DIR/usr/share/vulkan/registry/vk.xml", registry, reg.Version, line, RegistryEnv))
	}
	dir := t.TempDir()
	if err := run(registry, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ztypes.go", "zcommands.go", "vklayout/zlayout_go.go", "vklayout/zlayout_cgo.go"} {
		want, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale (or vk.xml differs): run go generate in wgpu/internal/vk", name)
		}
	}
}

// TestOldRegistryErrorSaysHowToGenerate: Debian 12's vk.xml (1.3.239) lacks VK_KHR_cooperative_matrix; go generate
// with it fails, naming the script that fetches a newer one, instead of writing a package without the extension.
func TestOldRegistryErrorSaysHowToGenerate(t *testing.T) {
	const old = `<registry><types><type category="define">#define VK_HEADER_VERSION 239</type></types></registry>`
	p := filepath.Join(t.TempDir(), "vk.xml")
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(p, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "VK_HEADER_VERSION 239") || !strings.Contains(err.Error(), "scripts/vulkan-headers-trixie.sh") {
		t.Errorf("error = %v", err)
	}
}

// TestSupportedByVulkan: an extension only for Vulkan SC ("vulkansc") is not Vulkan's, though the word contains it.
func TestSupportedByVulkan(t *testing.T) {
	for in, want := range map[string]bool{"vulkan": true, "vulkan,vulkansc": true, "vulkansc": false, "disabled": false, "": false} {
		if got := supportedByVulkan(in); got != want {
			t.Errorf("supportedByVulkan(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestLayoutGuardsStructsByProvider: the C layout table declares each struct under the macros of the features and
// extensions that provide it, with as many absent entries otherwise, so headers older than the registry still
// compile and the table keeps its length.
func TestLayoutGuardsStructsByProvider(t *testing.T) {
	reg := &registry{Version: "309", Types: map[string]*typeDef{
		"VkPhysicalDeviceCooperativeMatrixFeaturesKHR": {Name: "VkPhysicalDeviceCooperativeMatrixFeaturesKHR", Category: "struct",
			Members: []decl{{Name: "sType"}, {Name: "pNext"}, {Name: "cooperativeMatrix"}, {Name: "cooperativeMatrixRobustBufferAccess"}}},
		"VkBufferCopy": {Name: "VkBufferCopy", Category: "struct", Members: []decl{{Name: "srcOffset"}, {Name: "dstOffset"}, {Name: "size"}}},
	}, ProvidedBy: map[string][]string{
		"VkPhysicalDeviceCooperativeMatrixFeaturesKHR": {"VK_KHR_cooperative_matrix"},
		"VkBufferCopy": {"VK_VERSION_1_0"},
	}}
	s := &subset{reg: reg, order: []string{"VkPhysicalDeviceCooperativeMatrixFeaturesKHR", "VkBufferCopy"}}
	_, c, err := s.emitLayout()
	if err != nil {
		t.Fatal(err)
	}
	src := string(c)
	for _, want := range []string{
		"#if defined(VK_VERSION_1_0)\n\tsizeof(VkBufferCopy), _Alignof(VkBufferCopy),",
		"#else\n\t" + strings.TrimSpace(strings.Repeat("VKL_ABSENT, ", 5)) + "\n#endif",
		"#if defined(VK_KHR_cooperative_matrix)\n\tsizeof(VkPhysicalDeviceCooperativeMatrixFeaturesKHR)",
		"#else\n\t" + strings.TrimSpace(strings.Repeat("VKL_ABSENT, ", 6)) + "\n#endif",
		"const size_t vkl_count = 11;",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("C side lacks %q:\n%s", want, src)
		}
	}
}

func TestConstName(t *testing.T) {
	s := &subset{reg: &registry{Tags: []string{"KHR", "EXT"}}}
	for in, want := range map[string]string{
		"VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT": "StructureTypeDebugUtilsMessengerCreateInfoEXT",
		"VK_ERROR_OUT_OF_DEVICE_MEMORY":                           "ErrorOutOfDeviceMemory",
		"VK_UUID_SIZE":                                            "UuidSize",
	} {
		if got := s.constName(in); got != want {
			t.Errorf("constName(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestUnionLayout: a union is as big as its largest member, rounded up to its most aligned member's alignment (C's
// rule on a 64-bit target), arrays and pointers included; a member the generator cannot size is an error naming it.
func TestUnionLayout(t *testing.T) {
	reg := &registry{Types: map[string]*typeDef{
		"VkBool32": {Name: "VkBool32", Category: "basetype", Base: "uint32_t"},
		"VkFormat": {Name: "VkFormat", Category: "enum"},
		"VkOffset": {Name: "VkOffset", Category: "struct"},
	}}
	s := &subset{reg: reg, flagsOf: map[string]string{}}
	for _, c := range []struct {
		name        string
		members     []decl
		size, align int
	}{
		{"statistic", []decl{{Name: "b32", Type: "VkBool32"}, {Name: "i64", Type: "int64_t"}, {Name: "f64", Type: "double"}}, 8, 8},
		{"clear color", []decl{{Name: "float32", Type: "float", Arrays: []string{"4"}}, {Name: "uint32", Type: "uint32_t", Arrays: []string{"4"}}}, 16, 4},
		{"odd bytes", []decl{{Name: "c", Type: "char", Arrays: []string{"5"}}, {Name: "h", Type: "uint16_t"}}, 6, 2},
		{"pointer", []decl{{Name: "p", Type: "void", Ptr: 1}, {Name: "f", Type: "VkFormat"}}, 8, 8},
	} {
		size, align, err := s.unionLayout(&typeDef{Name: c.name, Category: "union", Members: c.members})
		if err != nil || size != c.size || align != c.align {
			t.Errorf("%s: size %d align %d err %v, want %d and %d", c.name, size, align, err, c.size, c.align)
		}
	}
	_, _, err := s.unionLayout(&typeDef{Name: "VkNested", Category: "union", Members: []decl{{Name: "o", Type: "VkOffset"}}})
	if err == nil || !strings.Contains(err.Error(), "VkNested.o") {
		t.Errorf("a struct member: err %v, want one naming VkNested.o", err)
	}
}

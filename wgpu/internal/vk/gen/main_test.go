package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// TestGeneratedUpToDate regenerates into a temporary directory and compares with the committed files.
func TestGeneratedUpToDate(t *testing.T) {
	const registry = "/usr/share/vulkan/registry/vk.xml"
	if _, err := os.Stat(registry); err != nil {
		prereq.Missing(t, "vk.xml", fmt.Errorf("%w (Debian: apt-get install libvulkan-dev)", err))
	}
	dir := t.TempDir()
	if err := run(registry, dir); err != nil {
		t.Fatal(err)
	}
	first := func(p string) string {
		b, _ := os.ReadFile(p)
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return string(line)
	}
	if have, want := first(filepath.Join(dir, "ztypes.go")), first("../ztypes.go"); have != want {
		t.Skipf("installed vk.xml is another version (%q vs %q): not comparing", have, want)
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

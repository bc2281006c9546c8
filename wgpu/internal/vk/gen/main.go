// Command gen writes package vk's Vulkan types and function tables from the Khronos registry (vk.xml), for only
// the subset listed in subset.go, plus the layout check of package vklayout.
//
// Usage (from wgpu/internal/vk, as go:generate runs it):
//
//	go run ./gen [-registry vk.xml]
//
// The registry is -registry, else $WGPU_VK_XML, else /usr/share/vulkan/registry/vk.xml (Debian's libvulkan-dev).
// The subset needs VK_KHR_cooperative_matrix (VK_HEADER_VERSION 255 or newer): the committed files are generated
// from Debian 13's vk.xml (1.4.309), which scripts/vulkan-headers-trixie.sh DIR unpacks on any machine, Debian 12
// included, into DIR/usr/share/vulkan/registry/vk.xml.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	registryPath := flag.String("registry", defaultRegistry(), "path to vk.xml (default $WGPU_VK_XML, else Debian's)")
	out := flag.String("out", ".", "directory of package vk")
	flag.Parse()
	if err := run(*registryPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// RegistryEnv names the vk.xml to generate from when -registry is not given.
const RegistryEnv = "WGPU_VK_XML"

// systemRegistry is where Debian's libvulkan-dev installs vk.xml.
const systemRegistry = "/usr/share/vulkan/registry/vk.xml"

// defaultRegistry is $WGPU_VK_XML, else the system's vk.xml.
func defaultRegistry() string {
	if p := os.Getenv(RegistryEnv); p != "" {
		return p
	}
	return systemRegistry
}

func run(registryPath, out string) error {
	f, err := os.Open(registryPath)
	if err != nil {
		return err
	}
	defer f.Close()
	root, err := parseXML(f)
	if err != nil {
		return fmt.Errorf("%s: %w", registryPath, err)
	}
	reg, err := loadRegistry(root)
	if err != nil {
		return fmt.Errorf("%s: %w", registryPath, err)
	}
	s, err := newSubset(reg)
	if err != nil {
		return fmt.Errorf("%s (VK_HEADER_VERSION %s): %w; the subset needs VK_KHR_cooperative_matrix (header 255 or newer): "+
			"run scripts/vulkan-headers-trixie.sh DIR and generate with $%s=DIR/usr/share/vulkan/registry/vk.xml",
			registryPath, reg.Version, err, RegistryEnv)
	}
	types, err := s.emitTypes()
	if err != nil {
		return err
	}
	cmds, err := s.emitCommands()
	if err != nil {
		return err
	}
	goSide, cSide, err := s.emitLayout()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"ztypes.go":               types,
		"zcommands.go":            cmds,
		"vklayout/zlayout_go.go":  goSide,
		"vklayout/zlayout_cgo.go": cSide,
	}
	for name, data := range files {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

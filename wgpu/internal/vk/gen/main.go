// Command gen writes package vk's Vulkan types and function tables from the Khronos registry (vk.xml), for only
// the subset listed in subset.go, plus the layout check of package vklayout.
//
// Usage (from wgpu/internal/vk, as go:generate runs it):
//
//	go run ./gen -registry /usr/share/vulkan/registry/vk.xml
//
// Debian ships vk.xml in libvulkan-dev.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	registryPath := flag.String("registry", "/usr/share/vulkan/registry/vk.xml", "path to vk.xml")
	out := flag.String("out", ".", "directory of package vk")
	flag.Parse()
	if err := run(*registryPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
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
		return err
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

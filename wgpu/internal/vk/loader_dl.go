//go:build darwin || freebsd || linux || netbsd

package vk

import (
	"fmt"
	"runtime"

	"github.com/ebitengine/purego"
)

var libraryNames = func() []string {
	if runtime.GOOS == "darwin" {
		return []string{"libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib",
			"/usr/local/lib/libvulkan.1.dylib", "/opt/homebrew/lib/libvulkan.1.dylib", "/opt/homebrew/lib/libMoltenVK.dylib"}
	}
	return []string{"libvulkan.so.1", "libvulkan.so"}
}()

// openLibrary dlopens name and returns the address of vkGetInstanceProcAddr.
func openLibrary(name string) (uintptr, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return 0, fmt.Errorf("dlopen %s: %v", name, err)
	}
	p, err := purego.Dlsym(h, "vkGetInstanceProcAddr")
	if err != nil || p == 0 {
		return 0, fmt.Errorf("%s: no vkGetInstanceProcAddr: %v", name, err)
	}
	return p, nil
}

//go:build windows

package vk

import (
	"fmt"
	"syscall"
)

var libraryNames = []string{"vulkan-1.dll"}

// openLibrary loads the DLL name and returns the address of vkGetInstanceProcAddr.
func openLibrary(name string) (uintptr, error) {
	dll, err := syscall.LoadDLL(name)
	if err != nil {
		return 0, fmt.Errorf("load %s: %v", name, err)
	}
	p, err := dll.FindProc("vkGetInstanceProcAddr")
	if err != nil {
		return 0, fmt.Errorf("%s: no vkGetInstanceProcAddr: %v", name, err)
	}
	return p.Addr(), nil
}

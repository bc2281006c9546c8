package wgpu

import (
	"errors"
	"runtime"
)

// InstallHint says what to install when err means Vulkan is unavailable (see
// Unavailable), naming the packages; "" for any other error.
func InstallHint(err error) string {
	switch {
	case errors.Is(err, ErrNoLoader):
		switch runtime.GOOS {
		case "darwin":
			return "install the Vulkan loader and MoltenVK (Homebrew: brew install vulkan-loader molten-vk)"
		case "windows":
			return "install or update the GPU's driver, which ships the Vulkan loader (vulkan-1.dll)"
		}
		return "install the Vulkan loader (Debian/Ubuntu: libvulkan1; Fedora: vulkan-loader; Arch: vulkan-icd-loader) " +
			"and the GPU's Vulkan driver (mesa-vulkan-drivers gives lavapipe on the CPU)"
	case errors.Is(err, ErrNoDriver):
		return "install the GPU's Vulkan driver (Debian/Ubuntu: mesa-vulkan-drivers for AMD, Intel and lavapipe on the CPU; " +
			"NVIDIA's driver for NVIDIA)"
	}
	return ""
}

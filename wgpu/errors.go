package wgpu

import (
	"errors"
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

var (
	// ErrNoLoader: the Vulkan loader library is not installed.
	ErrNoLoader = vk.ErrNoLoader
	// ErrNoDriver: the loader works but no driver offers a usable device.
	ErrNoDriver = vk.ErrNoDriver
	// ErrMissingFeature: a required feature is not supported by the adapter or not enabled on the device.
	ErrMissingFeature = errors.New("wgpu: missing feature")
	// ErrLimit: a required limit or a size exceeds what the adapter supports.
	ErrLimit = errors.New("wgpu: limit exceeded")
	// ErrBadUsage: an object is used in a way its descriptor does not allow (usage flags, alignment, ranges).
	ErrBadUsage = errors.New("wgpu: invalid usage")
	// ErrOutOfMemory: host or device memory is exhausted.
	ErrOutOfMemory = errors.New("wgpu: out of memory")
	// ErrDeviceLost: the driver reported the device lost; the Device must be closed.
	ErrDeviceLost = errors.New("wgpu: device lost")
	// ErrClosed: the object or its device was closed.
	ErrClosed = errors.New("wgpu: use of closed object")
)

// Unavailable reports whether err means that Vulkan cannot be used on this machine (no loader or no driver), the
// case in which callers fall back to the CPU.
func Unavailable(err error) bool { return errors.Is(err, ErrNoLoader) || errors.Is(err, ErrNoDriver) }

// VulkanError is a failed Vulkan call.
type VulkanError struct {
	Call   string // e.g. "vkAllocateMemory"
	Result int32  // the VkResult
}

// Error names the call and the VkResult, e.g. "vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY".
func (e *VulkanError) Error() string { return e.Call + ": " + vk.Result(e.Result).Error() }

// Is maps VkResults onto the package's sentinel errors.
func (e *VulkanError) Is(target error) bool {
	switch vk.Result(e.Result) {
	case vk.ErrorOutOfHostMemory, vk.ErrorOutOfDeviceMemory, vk.ErrorOutOfPoolMemory, vk.ErrorFragmentedPool:
		return target == ErrOutOfMemory
	case vk.ErrorDeviceLost:
		return target == ErrDeviceLost
	case vk.ErrorFeatureNotPresent, vk.ErrorExtensionNotPresent, vk.ErrorLayerNotPresent:
		return target == ErrMissingFeature
	case vk.ErrorIncompatibleDriver:
		return target == ErrNoDriver
	}
	return false
}

// check turns a VkResult into an error naming the call; VK_SUCCESS is nil.
func check(call string, r vk.Result) error {
	if r == vk.Success {
		return nil
	}
	return &VulkanError{Call: call, Result: int32(r)}
}

func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// Package vk is a minimal Vulkan binding loaded at run time with github.com/ebitengine/purego: no cgo, so
// `go install` needs no C toolchain and a machine without Vulkan gets ErrNoLoader or ErrNoDriver instead of a
// failed start.
//
// Its one job is to make Vulkan commands callable from Go. Types, constants and the three function tables
// (GlobalFuncs, InstanceFuncs, DeviceFuncs) are generated from the Khronos registry by ./gen for only the subset
// package wgpu uses (gen/subset.go); the loader (Load) and the C-layout Arena are written by hand. Only
// vkGetInstanceProcAddr is looked up by symbol; everything else comes through it or vkGetDeviceProcAddr.
//
// Go pointer rules: Vulkan reads structs that point to other structs. Build every struct that holds a pointer
// (pNext chains, arrays, strings) in an Arena (New, NewSlice, CString), which keeps that memory pinned until
// Release, so the nested pointers are legal. Pointer-free values (handles, outputs, a VkBufferCopy, a
// VkMemoryBarrier without pNext) may be ordinary Go variables passed directly.
//
// Allowed imports: the standard library and github.com/ebitengine/purego only.
package vk

// The registry is $WGPU_VK_XML (Debian 13's vk.xml: see gen's doc and scripts/vulkan-headers-trixie.sh).
//go:generate go run ./gen

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNoLoader reports that the Vulkan loader library (libvulkan.so.1, vulkan-1.dll, libvulkan.1.dylib) is not
// installed or not loadable on this machine.
var ErrNoLoader = errors.New("vulkan: loader library not found")

// ErrNoDriver reports that the loader works but no Vulkan driver (ICD) offers a usable physical device.
var ErrNoDriver = errors.New("vulkan: no driver / physical device")

// Error returns the VkResult's name, so a Result can be wrapped as an error and tested with errors.Is.
func (r Result) Error() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// String returns the VkResult's name.
func (r Result) String() string { return r.Error() }

// MakeAPIVersion packs a Vulkan API version (variant 0).
func MakeAPIVersion(major, minor, patch uint32) uint32 { return major<<22 | minor<<12 | patch }

// VersionString formats a packed Vulkan API version as "major.minor.patch".
func VersionString(v uint32) string { return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff) }

// procName names a command of a function table and whether it may be absent (an extension command).
type procName struct {
	name     string
	optional bool
}

// fill resolves every command of a table; a missing required command is an error (the others are still
// resolved, so the table can be used to clean up).
func fill(p []uintptr, names []procName, lookup func(name string) uintptr) error {
	var err error
	for i, n := range names {
		p[i] = lookup(n.name)
		if p[i] == 0 && !n.optional && err == nil {
			err = fmt.Errorf("vulkan: required command %s not found (Vulkan 1.1 or newer needed)", n.name)
		}
	}
	return err
}

// BytesString returns the NUL-terminated string held in a fixed-size char array of a Vulkan struct.
func BytesString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// GoString copies a NUL-terminated C string, such as a message the driver passes to a callback.
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// CallbackData views the pointer a debug messenger callback receives as its callback data struct.
func CallbackData(p uintptr) *DebugUtilsMessengerCallbackDataEXT {
	return *(**DebugUtilsMessengerCallbackDataEXT)(unsafe.Pointer(&p))
}

// NewCallback returns a C function pointer that calls fn, a Go func whose parameters and result are uintptr
// (purego.NewCallback). Such callbacks are never freed, so create few.
func NewCallback(fn any) uintptr { return purego.NewCallback(fn) }

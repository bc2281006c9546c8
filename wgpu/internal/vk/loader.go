package vk

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// LibraryEnv names an environment variable that, when set, is the path of the Vulkan loader library to open
// instead of the platform's default names.
const LibraryEnv = "WGPU_EVAL_VULKAN_LIBRARY"

// Loader is the opened Vulkan loader library and its global commands. Libraries are never unloaded.
type Loader struct {
	// Library is the name or path that was opened.
	Library             string
	getInstanceProcAddr uintptr
	// Global holds the commands callable before an instance exists.
	Global GlobalFuncs
}

var (
	loadOnce   sync.Once
	loaded     *Loader
	loadFailed error
)

// Load opens the Vulkan loader once per process. A missing library or a library without vkGetInstanceProcAddr
// is reported as ErrNoLoader (test it with errors.Is).
func Load() (*Loader, error) {
	loadOnce.Do(func() { loaded, loadFailed = load() })
	return loaded, loadFailed
}

func load() (*Loader, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, fmt.Errorf("%w: only 64-bit platforms are supported", ErrNoLoader)
	}
	names := libraryNames
	if p := os.Getenv(LibraryEnv); p != "" {
		names = []string{p}
	}
	var firstErr error
	for _, name := range names {
		gipa, err := openLibrary(name)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		l := &Loader{Library: name, getInstanceProcAddr: gipa}
		if err := fill(l.Global.p[:], globalFuncsNames[:], func(n string) uintptr { return l.InstanceProcAddr(0, n) }); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoLoader, name, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrNoLoader, firstErr)
}

// InstanceProcAddr calls vkGetInstanceProcAddr; it returns 0 when the command is unknown.
func (l *Loader) InstanceProcAddr(instance Instance, name string) uintptr {
	b := append([]byte(name), 0)
	r, _, _ := purego.SyscallN(l.getInstanceProcAddr, uintptr(instance), uintptr(unsafe.Pointer(&b[0])))
	return r
}

// LoadInstance resolves the instance-level commands for instance. On error the table is still returned, with
// the commands that were found.
func (l *Loader) LoadInstance(instance Instance) (*InstanceFuncs, error) {
	f := &InstanceFuncs{}
	err := fill(f.p[:], instanceFuncsNames[:], func(n string) uintptr { return l.InstanceProcAddr(instance, n) })
	return f, err
}

// HasDestroyInstance reports whether vkDestroyInstance was resolved.
func (f *InstanceFuncs) HasDestroyInstance() bool { return f.p[0] != 0 }

// LoadDevice resolves the device-level commands for device through vkGetDeviceProcAddr. On error the table is
// still returned, with the commands that were found (vkDestroyDevice among them, if the driver has it).
func (f *InstanceFuncs) LoadDevice(device Device) (*DeviceFuncs, error) {
	d := &DeviceFuncs{}
	err := fill(d.p[:], deviceFuncsNames[:], func(n string) uintptr {
		b := append([]byte(n), 0)
		return f.GetDeviceProcAddr(device, &b[0])
	})
	return d, err
}

// HasDestroyDevice reports whether vkDestroyDevice was resolved.
func (f *DeviceFuncs) HasDestroyDevice() bool { return f.p[0] != 0 }

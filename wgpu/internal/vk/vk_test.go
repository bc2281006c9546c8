package vk

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

func TestArena(t *testing.T) {
	var a Arena
	for round := range 3 {
		ci := New[InstanceCreateInfo](&a)
		if ci.SType != StructureTypeInstanceCreateInfo {
			t.Fatalf("sType %d, want %d", ci.SType, StructureTypeInstanceCreateInfo)
		}
		names := []string{"VK_LAYER_a", "", "VK_EXT_b"}
		ci.PpEnabledLayerNames = a.CStrings(names)
		got := unsafe.Slice(ci.PpEnabledLayerNames, len(names))
		for i, n := range names {
			if GoString(got[i]) != n {
				t.Errorf("round %d: CStrings[%d] = %q, want %q", round, i, GoString(got[i]), n)
			}
		}
		bs := NewSlice[DescriptorSetLayoutBinding](&a, 3)
		big := NewSlice[uint64](&a, 5000) // larger than a chunk
		big[4999] = 7
		for _, p := range []unsafe.Pointer{unsafe.Pointer(ci), unsafe.Pointer(&bs[0]), unsafe.Pointer(&big[0])} {
			if uintptr(p)%8 != 0 {
				t.Errorf("unaligned allocation %p", p)
			}
		}
		if len(NewSlice[int](&a, 0)) != 0 || Copy[uint32](&a, nil) != nil {
			t.Error("empty allocations are not nil")
		}
		mb := NewSlice[MemoryBarrier](&a, 2)
		if mb[1].SType != StructureTypeMemoryBarrier || mb[1].SrcAccessMask != 0 {
			t.Error("NewSlice did not set sType or zero")
		}
		a.Release()
	}
}

func TestResultError(t *testing.T) {
	err := fmt.Errorf("vkAllocateMemory: %w", ErrorOutOfDeviceMemory)
	if !errors.Is(err, ErrorOutOfDeviceMemory) || err.Error() != "vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY" {
		t.Errorf("got %v", err)
	}
	if Result(-12345).Error() != "VkResult(-12345)" {
		t.Error(Result(-12345).Error())
	}
	if VersionString(MakeAPIVersion(1, 3, 230)) != "1.3.230" {
		t.Error(VersionString(MakeAPIVersion(1, 3, 230)))
	}
}

func TestMissingLoader(t *testing.T) {
	t.Setenv(LibraryEnv, "/nonexistent/libvulkan.so.1")
	_, err := load()
	if !errors.Is(err, ErrNoLoader) {
		t.Fatalf("load with a missing library: %v, want ErrNoLoader", err)
	}
}

func TestLoad(t *testing.T) {
	l, err := Load()
	if errors.Is(err, ErrNoLoader) {
		prereq.Missing(t, "vulkan", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var v uint32
	if r := l.Global.EnumerateInstanceVersion(&v); r != Success || v < MakeAPIVersion(1, 1, 0) {
		t.Fatalf("vkEnumerateInstanceVersion: %v %s", r, VersionString(v))
	}
	if l.InstanceProcAddr(0, "vkNoSuchCommand") != 0 {
		t.Error("unknown command resolved")
	}
	t.Logf("%s: Vulkan %s", l.Library, VersionString(v))
}

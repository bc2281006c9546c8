package wgpu

import (
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// TestMemoryBudget: on the test device the budget is positive, within the heaps, and names the device-local heaps of
// AdapterInfo; usage grows with a buffer when the driver reports it (or with the estimate, always).
func TestMemoryBudget(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	mb, err := d.MemoryBudget()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", mb)
	heaps := d.AdapterInfo().MemoryHeaps
	var local []int
	var size uint64
	for i, h := range heaps {
		if h.DeviceLocal {
			local = append(local, i)
			size += h.Size
		}
	}
	var got []int
	for _, h := range mb.Heaps {
		got = append(got, h.Index)
		if h.Index >= len(heaps) || h.Size != heaps[h.Index].Size {
			t.Errorf("heap %+v does not match AdapterInfo().MemoryHeaps %+v", h, heaps)
		}
		if h.Budget == 0 || h.Budget > h.Size {
			t.Errorf("heap %d: budget %d not in (0, %d]", h.Index, h.Budget, h.Size)
		}
	}
	if !slices.Equal(got, local) || mb.Size != size {
		t.Errorf("budget heaps %v (size %d), device-local heaps of AdapterInfo %v (size %d)", got, mb.Size, local, size)
	}
	if mb.Budget == 0 || mb.Budget > mb.Size || mb.Available() > mb.Budget {
		t.Errorf("budget %d, available %d, size %d", mb.Budget, mb.Available(), mb.Size)
	}
	if d.adapter.exts["VK_EXT_memory_budget"] == mb.Estimated {
		t.Errorf("Estimated = %v, but VK_EXT_memory_budget supported = %v", mb.Estimated, !mb.Estimated)
	}
	b := newBuffer(t, d, 8<<20, storageRW)
	defer b.Close()
	after, err := d.MemoryBudget()
	if err != nil {
		t.Fatal(err)
	}
	if after.Usage < mb.Usage {
		t.Errorf("usage fell from %d to %d after allocating 8 MiB", mb.Usage, after.Usage)
	}
	if mb.Estimated && after.Usage < 8<<20 {
		t.Errorf("estimated usage %d after allocating 8 MiB", after.Usage)
	}
}

// fakeAllocator has an adapter with the given memory types, each in the heap of its index.
func fakeAllocator(flags ...vk.MemoryPropertyFlags) *allocator {
	a := &Adapter{}
	mp := &a.memProps
	mp.MemoryTypeCount, mp.MemoryHeapCount = uint32(len(flags)), uint32(len(flags))
	for i, f := range flags {
		mp.MemoryTypes[i] = vk.MemoryType{PropertyFlags: f, HeapIndex: uint32(i)}
		mp.MemoryHeaps[i].Size = 1 << 30
		if f&vk.MemoryPropertyDeviceLocalBit != 0 {
			mp.MemoryHeaps[i].Flags = vk.MemoryHeapDeviceLocalBit
		}
	}
	return &allocator{d: &Device{adapter: a}}
}

func TestTypeOrder(t *testing.T) {
	const (
		local  = vk.MemoryPropertyDeviceLocalBit
		host   = vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
		cached = vk.MemoryPropertyHostCachedBit
	)
	discrete := fakeAllocator(local, host, host|cached, local|host) // the last: a resizable-BAR window
	unified := fakeAllocator(local | host | cached)                 // lavapipe
	for _, c := range []struct {
		name  string
		a     *allocator
		bits  uint32
		class memoryClass
		want  []uint32
	}{
		{"discrete device", discrete, 0xf, memDevice, []uint32{0, 3}}, // never host memory
		{"discrete device, only BAR allowed", discrete, 0xe, memDevice, []uint32{3}},
		{"discrete device, no device-local type allowed", discrete, 0x6, memDevice, []uint32{1, 2}},
		{"discrete upload", discrete, 0xf, memUpload, []uint32{1, 3, 2}},
		{"discrete readback", discrete, 0xf, memReadback, []uint32{2, 1, 3}},
		{"unified device", unified, 0x1, memDevice, []uint32{0}},
		{"unified upload", unified, 0x1, memUpload, []uint32{0}},
		{"unified readback", unified, 0x1, memReadback, []uint32{0}},
		{"nothing allowed", discrete, 0, memDevice, nil},
	} {
		if got := c.a.typeOrder(c.bits, c.class); !slices.Equal(got, c.want) {
			t.Errorf("%s: typeOrder(%#x) = %v, want %v", c.name, c.bits, got, c.want)
		}
	}
}

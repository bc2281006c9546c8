package wgpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// MemoryStats is the device's memory accounting.
type MemoryStats struct {
	InUse     uint64 `json:"in_use"`    // bytes of live buffers (as allocated, alignment included)
	Peak      uint64 `json:"peak"`      // highest InUse so far
	Allocated uint64 `json:"allocated"` // bytes of VkDeviceMemory blocks held
	Blocks    int    `json:"blocks"`    // number of VkDeviceMemory blocks held
}

// ResetMemoryPeak starts MemoryStats' Peak again from the bytes in use now.
func (d *Device) ResetMemoryPeak() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mem.peak = d.mem.inUse
}

// MemoryStats reports bytes in use, the peak and the blocks held.
func (d *Device) MemoryStats() MemoryStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return MemoryStats{InUse: d.mem.inUse, Peak: d.mem.peak, Allocated: d.mem.allocated, Blocks: len(d.mem.blocks)}
}

// MemoryBudget is how much device-local memory the device can still use: what to size batches by. Sizes are in
// bytes, summed over the device-local heaps (Heaps has them one by one).
type MemoryBudget struct {
	// Size is the heaps' total size.
	Size uint64 `json:"size"`
	// Budget is how much this process may allocate from the heaps (its current Usage included) before allocations
	// may fail or degrade performance, as the driver estimates it now. At most Size.
	Budget uint64 `json:"budget"`
	// Usage is how much of the heaps this process uses now (all its devices, as the driver counts it).
	Usage uint64 `json:"usage"`
	// Estimated is true when the driver lacks VK_EXT_memory_budget: Budget is then Size (other processes' use is
	// unknown) and Usage is this device's own allocations.
	Estimated bool `json:"estimated"`
	// Heaps are the device-local heaps.
	Heaps []HeapBudget `json:"heaps"`
}

// HeapBudget is one heap's share of a MemoryBudget.
type HeapBudget struct {
	Index  int    `json:"index"` // into AdapterInfo.MemoryHeaps
	Size   uint64 `json:"size"`
	Budget uint64 `json:"budget"`
	Usage  uint64 `json:"usage"`
}

// Available is the budget not yet used: Budget - Usage, or 0.
func (m MemoryBudget) Available() uint64 {
	if m.Usage >= m.Budget {
		return 0
	}
	return m.Budget - m.Usage
}

// MemoryBudget reports the device-local heaps' size, budget and usage, from VK_EXT_memory_budget where the driver
// has it (RequestDevice enables it), else estimated from the heap sizes and this device's allocations. It is a
// query of the driver at each call, cheap enough to make per batch.
func (d *Device) MemoryBudget() (MemoryBudget, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return MemoryBudget{}, err
	}
	a := d.adapter
	mp := &a.memProps
	var ar vk.Arena
	defer ar.Release()
	var bp *vk.PhysicalDeviceMemoryBudgetPropertiesEXT
	if a.exts["VK_EXT_memory_budget"] {
		p2 := vk.New[vk.PhysicalDeviceMemoryProperties2](&ar)
		bp = vk.New[vk.PhysicalDeviceMemoryBudgetPropertiesEXT](&ar)
		p2.PNext = unsafe.Pointer(bp)
		a.inst.fn.GetPhysicalDeviceMemoryProperties2(a.pd, p2)
		mp = &p2.MemoryProperties
	}
	held := d.mem.heapAllocated()
	out := MemoryBudget{Estimated: bp == nil}
	for i, h := range mp.MemoryHeaps[:mp.MemoryHeapCount] {
		if h.Flags&vk.MemoryHeapDeviceLocalBit == 0 {
			continue
		}
		hb := HeapBudget{Index: i, Size: h.Size, Budget: h.Size, Usage: held[i]}
		if bp != nil {
			hb.Budget, hb.Usage = min(bp.HeapBudget[i], h.Size), bp.HeapUsage[i]
		}
		out.Heaps = append(out.Heaps, hb)
		out.Size += hb.Size
		out.Budget += hb.Budget
		out.Usage += hb.Usage
	}
	return out, nil
}

// span is a free range of a block.
type span struct{ off, size uint64 }

// memBlock is one VkDeviceMemory, mapped for its whole life when host-visible.
type memBlock struct {
	mem       vk.DeviceMemory
	size      uint64
	typeIndex uint32
	mapped    unsafe.Pointer // nil unless host-visible
	free      []span         // sorted by offset, coalesced
	used      uint64
	dedicated bool // sized for one buffer; freed when empty
}

// allocator sub-allocates buffers from few large blocks: drivers cap the number of allocations, and allocation is
// slow. First fit, with coalescing of freed ranges. Guarded by Device.mu.
type allocator struct {
	d         *Device
	blockSize uint64
	staged    bool // DeviceDescriptor.StageTransfers: device buffers never in mapped memory
	blocks    []*memBlock
	inUse     uint64
	peak      uint64
	allocated uint64
}

// memoryClass is what a buffer needs from memory.
type memoryClass int

const (
	memDevice   memoryClass = iota // fast for the GPU
	memUpload                      // host-visible, write-combined is fine
	memReadback                    // host-visible, cached preferred
)

// typeOrder lists the acceptable memory types for a class, best first. Device buffers never go to host memory
// when a device-local type is acceptable: a GPU reading weights over PCIe is silently 10-100x slower, and the
// caller would rather get ErrOutOfMemory and shrink its batch.
func (a *allocator) typeOrder(bits uint32, class memoryClass) []uint32 {
	mp := &a.d.adapter.memProps
	local := false
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		if bits&(1<<i) != 0 && mp.MemoryTypes[i].PropertyFlags&vk.MemoryPropertyDeviceLocalBit != 0 {
			local = true
		}
	}
	score := func(f vk.MemoryPropertyFlags) int {
		hostOK := vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
		switch class {
		case memDevice:
			s := 0
			if f&vk.MemoryPropertyDeviceLocalBit != 0 {
				s += 4
			} else if local {
				return -1
			}
			if f&vk.MemoryPropertyHostVisibleBit == 0 {
				s += 1
			}
			return s
		case memUpload:
			if f&hostOK != hostOK {
				return -1
			}
			if f&vk.MemoryPropertyHostCachedBit == 0 {
				return 2
			}
			return 1
		default:
			if f&hostOK != hostOK {
				return -1
			}
			if f&vk.MemoryPropertyHostCachedBit != 0 {
				return 2
			}
			return 1
		}
	}
	var out []uint32
	for best := 5; best >= 0; best-- {
		for i := uint32(0); i < mp.MemoryTypeCount; i++ {
			if bits&(1<<i) != 0 && score(mp.MemoryTypes[i].PropertyFlags) == best {
				out = append(out, i)
			}
		}
	}
	return out
}

// alloc finds room for req in a block of an acceptable type, allocating a block if none has room.
func (a *allocator) alloc(req vk.MemoryRequirements, class memoryClass) (*memBlock, uint64, error) {
	types := a.typeOrder(req.MemoryTypeBits, class)
	if len(types) == 0 {
		return nil, 0, errorf(ErrOutOfMemory, "no memory type for buffer class %d (type bits %#x)", class, req.MemoryTypeBits)
	}
	for _, t := range types {
		for _, b := range a.blocks {
			if b.typeIndex != t || b.dedicated || !a.blockFits(b, class) {
				continue
			}
			if off, ok := b.take(req.Size, req.Alignment); ok {
				a.note(req.Size)
				return b, off, nil
			}
		}
	}
	var lastErr error
	for _, t := range types {
		b, err := a.newBlock(t, req.Size, class)
		if err != nil {
			lastErr = err
			continue
		}
		off, _ := b.take(req.Size, req.Alignment)
		a.note(req.Size)
		return b, off, nil
	}
	if errors.Is(lastErr, ErrOutOfMemory) {
		h := a.d.adapter.memProps.MemoryTypes[types[0]].HeapIndex
		return nil, 0, fmt.Errorf("%w: %d bytes asked of heap %d (%s, %d bytes), %d bytes of it held by this device: %w",
			ErrOutOfMemory, req.Size, h, heapKind(a.d.adapter.memProps.MemoryHeaps[h]), a.d.adapter.memProps.MemoryHeaps[h].Size,
			a.heapAllocated()[h], lastErr)
	}
	return nil, 0, lastErr
}

// heapAllocated is the bytes of VkDeviceMemory this device holds, per heap index.
func (a *allocator) heapAllocated() [vk.MaxMemoryHeaps]uint64 {
	var n [vk.MaxMemoryHeaps]uint64
	for _, b := range a.blocks {
		n[a.d.adapter.memProps.MemoryTypes[b.typeIndex].HeapIndex] += b.size
	}
	return n
}

func heapKind(h vk.MemoryHeap) string {
	if h.Flags&vk.MemoryHeapDeviceLocalBit != 0 {
		return "device-local"
	}
	return "host"
}

func (a *allocator) note(size uint64) {
	a.inUse += size
	a.peak = max(a.peak, a.inUse)
}

// blockFits reports whether a block can hold a buffer of the class: host classes need mapped memory, and device
// buffers of a device that stages its transfers need memory the host has not mapped.
func (a *allocator) blockFits(b *memBlock, class memoryClass) bool {
	if class != memDevice {
		return b.mapped != nil
	}
	return !a.staged || b.mapped == nil
}

func (a *allocator) newBlock(typeIndex uint32, need uint64, class memoryClass) (*memBlock, error) {
	size := a.blockSize
	dedicated := need > a.blockSize/2
	if dedicated {
		size = need
	}
	var ar vk.Arena
	defer ar.Release()
	ai := vk.New[vk.MemoryAllocateInfo](&ar)
	ai.AllocationSize, ai.MemoryTypeIndex = size, typeIndex
	b := &memBlock{size: size, typeIndex: typeIndex, free: []span{{0, size}}, dedicated: dedicated}
	err := check("vkAllocateMemory", a.d.fn.AllocateMemory(a.d.h, ai, nil, &b.mem))
	if errors.Is(err, ErrOutOfMemory) && !dedicated { // no room for a whole block: one of just the buffer's size
		size, dedicated = need, true
		ai.AllocationSize = size
		*b = memBlock{size: size, typeIndex: typeIndex, free: []span{{0, size}}, dedicated: dedicated}
		err = check("vkAllocateMemory", a.d.fn.AllocateMemory(a.d.h, ai, nil, &b.mem))
	}
	if err != nil {
		return nil, fmt.Errorf("allocate %d-byte memory block of type %d: %w", size, typeIndex, a.d.noteLost(err))
	}
	// Map host-visible coherent memory for its whole life (non-coherent memory is used as device memory only).
	coherent := vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
	if a.d.adapter.memProps.MemoryTypes[typeIndex].PropertyFlags&coherent == coherent && !(a.staged && class == memDevice) {
		if err := check("vkMapMemory", a.d.fn.MapMemory(a.d.h, b.mem, 0, vk.WholeSize, 0, &b.mapped)); err != nil {
			a.d.fn.FreeMemory(a.d.h, b.mem, nil)
			return nil, a.d.noteLost(err)
		}
	}
	if !a.blockFits(b, class) { // a host class on memory that cannot be mapped
		a.d.fn.FreeMemory(a.d.h, b.mem, nil)
		return nil, errorf(ErrOutOfMemory, "memory type %d is not host-coherent", typeIndex)
	}
	a.blocks = append(a.blocks, b)
	a.allocated += size
	return b, nil
}

// take carves size bytes at the given alignment out of the first free span that fits.
func (b *memBlock) take(size, align uint64) (uint64, bool) {
	align = max(align, 1)
	for i, s := range b.free {
		off := (s.off + align - 1) / align * align
		if off+size > s.off+s.size {
			continue
		}
		var repl []span
		if off > s.off {
			repl = append(repl, span{s.off, off - s.off})
		}
		if end := off + size; end < s.off+s.size {
			repl = append(repl, span{end, s.off + s.size - end})
		}
		b.free = append(b.free[:i], append(repl, b.free[i+1:]...)...)
		b.used += size
		return off, true
	}
	return 0, false
}

// give returns a range to the block, merging it with its free neighbours.
func (b *memBlock) give(off, size uint64) {
	i := 0
	for i < len(b.free) && b.free[i].off < off {
		i++
	}
	b.free = append(b.free[:i], append([]span{{off, size}}, b.free[i:]...)...)
	if i+1 < len(b.free) && b.free[i].off+b.free[i].size == b.free[i+1].off {
		b.free[i].size += b.free[i+1].size
		b.free = append(b.free[:i+1], b.free[i+2:]...)
	}
	if i > 0 && b.free[i-1].off+b.free[i-1].size == b.free[i].off {
		b.free[i-1].size += b.free[i].size
		b.free = append(b.free[:i], b.free[i+1:]...)
	}
	b.used -= size
}

// free returns a buffer's range; empty dedicated blocks, and empty blocks beyond one per type, are released.
func (a *allocator) free(b *memBlock, off, size uint64) {
	b.give(off, size)
	a.inUse -= size
	if b.used != 0 {
		return
	}
	keep := !b.dedicated
	if keep {
		for _, o := range a.blocks {
			if o != b && o.typeIndex == b.typeIndex && o.used == 0 && !o.dedicated && (o.mapped == nil) == (b.mapped == nil) {
				keep = false
			}
		}
	}
	if keep {
		return
	}
	for i, o := range a.blocks {
		if o == b {
			a.blocks = append(a.blocks[:i], a.blocks[i+1:]...)
			break
		}
	}
	a.allocated -= b.size
	a.d.fn.FreeMemory(a.d.h, b.mem, nil)
}

func (a *allocator) destroy() {
	for _, b := range a.blocks {
		a.d.fn.FreeMemory(a.d.h, b.mem, nil)
	}
	a.blocks, a.allocated, a.inUse = nil, 0, 0
}

package wgpu

import (
	"fmt"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// MemoryStats is the device's memory accounting.
type MemoryStats struct {
	InUse     uint64 `json:"inUse"`     // bytes of live buffers (as allocated, alignment included)
	Peak      uint64 `json:"peak"`      // highest InUse so far
	Allocated uint64 `json:"allocated"` // bytes of VkDeviceMemory blocks held
	Blocks    int    `json:"blocks"`    // number of VkDeviceMemory blocks held
}

// MemoryStats reports bytes in use, the peak and the blocks held.
func (d *Device) MemoryStats() MemoryStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return MemoryStats{InUse: d.mem.inUse, Peak: d.mem.peak, Allocated: d.mem.allocated, Blocks: len(d.mem.blocks)}
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

// typeOrder lists the acceptable memory types for a class, best first.
func (a *allocator) typeOrder(bits uint32, class memoryClass) []uint32 {
	mp := &a.d.adapter.memProps
	score := func(f vk.MemoryPropertyFlags) int {
		hostOK := vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
		switch class {
		case memDevice:
			s := 0
			if f&vk.MemoryPropertyDeviceLocalBit != 0 {
				s += 4
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
			if b.typeIndex != t || b.dedicated || !blockFits(b, class) {
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
	return nil, 0, lastErr
}

func (a *allocator) note(size uint64) {
	a.inUse += size
	a.peak = max(a.peak, a.inUse)
}

// simulateDiscrete keeps device buffers out of host-visible memory, so tests on a unified-memory device (lavapipe)
// take the staging paths a discrete GPU takes.
var simulateDiscrete = false

// blockFits reports whether a block can hold a buffer of the class: host classes need mapped memory.
func blockFits(b *memBlock, class memoryClass) bool {
	if class != memDevice {
		return b.mapped != nil
	}
	return !simulateDiscrete || b.mapped == nil
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
	if err := check("vkAllocateMemory", a.d.fn.AllocateMemory(a.d.h, ai, nil, &b.mem)); err != nil {
		return nil, fmt.Errorf("allocate %d-byte memory block: %w", size, a.d.noteLost(err))
	}
	// Map host-visible coherent memory for its whole life (non-coherent memory is used as device memory only).
	coherent := vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit
	if a.d.adapter.memProps.MemoryTypes[typeIndex].PropertyFlags&coherent == coherent && !(simulateDiscrete && class == memDevice) {
		if err := check("vkMapMemory", a.d.fn.MapMemory(a.d.h, b.mem, 0, vk.WholeSize, 0, &b.mapped)); err != nil {
			a.d.fn.FreeMemory(a.d.h, b.mem, nil)
			return nil, a.d.noteLost(err)
		}
	}
	if !blockFits(b, class) { // a host class on memory that cannot be mapped
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

package wgpu

import (
	"fmt"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// BufferUsage says how a buffer may be used (WebGPU's GPUBufferUsage bits).
type BufferUsage uint32

// Buffer usages. MapRead may be combined only with CopyDst, MapWrite only with CopySrc.
const (
	BufferUsageMapRead      BufferUsage = 0x0001
	BufferUsageMapWrite     BufferUsage = 0x0002
	BufferUsageCopySrc      BufferUsage = 0x0004
	BufferUsageCopyDst      BufferUsage = 0x0008
	BufferUsageUniform      BufferUsage = 0x0040
	BufferUsageStorage      BufferUsage = 0x0080
	BufferUsageQueryResolve BufferUsage = 0x0200
)

// BufferDescriptor configures CreateBuffer.
type BufferDescriptor struct {
	Label string
	Size  uint64 // bytes, a multiple of 4
	Usage BufferUsage
}

// Buffer is GPU memory with a usage. Its bytes are sub-allocated from a device memory block.
type Buffer struct {
	d         *Device
	h         vk.Buffer
	label     string
	size      uint64
	usage     BufferUsage
	block     *memBlock
	off       uint64 // in block
	allocSize uint64
	lastUse   uint64 // index+1 of the last submission that used the buffer
	mapped    bool
}

// CreateBuffer creates a buffer; its contents start as zero.
func (d *Device) CreateBuffer(desc *BufferDescriptor) (*Buffer, error) {
	return d.createBuffer(desc, nil)
}

// CreateBufferInit creates a buffer whose contents start as data, then zeros
// to its size: CreateBuffer and a WriteBuffer of data at offset 0, without
// zeroing first the bytes data overwrites (on host-visible memory a pass over
// them on the host, else a fill on the device), as wgpu's create_buffer_init.
// len(data) must be a multiple of 4 and at most desc.Size. Like WriteBuffer
// it copies data before it returns.
func (d *Device) CreateBufferInit(desc *BufferDescriptor, data []byte) (*Buffer, error) {
	if len(data)%4 != 0 || uint64(len(data)) > desc.Size {
		return nil, errorf(ErrBadUsage, "buffer %q: %d bytes of data for %d bytes: at most the size, a multiple of 4", desc.Label, len(data), desc.Size)
	}
	if desc.Usage&BufferUsageCopyDst == 0 {
		return nil, errorf(ErrBadUsage, "buffer %q: initial data needs CopyDst usage", desc.Label)
	}
	return d.createBuffer(desc, data)
}

// createBuffer is CreateBuffer, and with data CreateBufferInit.
func (d *Device) createBuffer(desc *BufferDescriptor, data []byte) (*Buffer, error) {
	u := desc.Usage
	switch {
	case desc.Size == 0 || desc.Size%4 != 0:
		return nil, errorf(ErrBadUsage, "buffer %q: size %d is not a positive multiple of 4", desc.Label, desc.Size)
	case u == 0:
		return nil, errorf(ErrBadUsage, "buffer %q: no usage", desc.Label)
	case u&BufferUsageMapRead != 0 && u&^(BufferUsageMapRead|BufferUsageCopyDst) != 0:
		return nil, errorf(ErrBadUsage, "buffer %q: MapRead combines only with CopyDst", desc.Label)
	case u&BufferUsageMapWrite != 0 && u&^(BufferUsageMapWrite|BufferUsageCopySrc) != 0:
		return nil, errorf(ErrBadUsage, "buffer %q: MapWrite combines only with CopySrc", desc.Label)
	case d.limits.MaxBufferSize != 0 && desc.Size > d.limits.MaxBufferSize:
		return nil, errorf(ErrLimit, "buffer %q: %d bytes exceed maxBufferSize %d", desc.Label, desc.Size, d.limits.MaxBufferSize)
	}
	var vu vk.BufferUsageFlags = vk.BufferUsageTransferDstBit // every buffer can be cleared (vkCmdFillBuffer)
	if u&(BufferUsageCopySrc|BufferUsageMapWrite) != 0 {
		vu |= vk.BufferUsageTransferSrcBit
	}
	if u&BufferUsageStorage != 0 {
		vu |= vk.BufferUsageStorageBufferBit
	}
	if u&BufferUsageUniform != 0 {
		vu |= vk.BufferUsageUniformBufferBit
	}
	class := memDevice
	if u&BufferUsageMapWrite != 0 {
		class = memUpload
	} else if u&BufferUsageMapRead != 0 {
		class = memReadback
	}
	b, staged, err := d.initBuffer(desc.Label, desc.Size, u, vu, class, data)
	if err != nil || !staged {
		return b, err
	}
	// Device memory: the data through staging buffers, ordered before any
	// later submission. No one else holds b yet.
	if err := d.queue.WriteBuffer(b, 0, data); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// initBuffer creates a buffer whose bytes past len(data) start as zeros and
// writes data into it where its memory is host-visible; where it is not,
// staged says that data is still to be written.
func (d *Device) initBuffer(label string, size uint64, u BufferUsage, vu vk.BufferUsageFlags, class memoryClass, data []byte) (b *Buffer, staged bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, false, err
	}
	from := uint64(len(data)) // the bytes from here on start as zeros
	if b, err = d.createBufferLocked(label, size, u, vu, class, from); err != nil {
		return nil, false, err
	}
	if b.block.mapped != nil {
		if len(data) > 0 {
			d.queue.stats.Writes++
			d.queue.stats.WriteBytes += uint64(len(data))
			copy(b.bytes(), data) // idle host-visible memory: in queue order already
		}
		return b, false, nil
	}
	if from < size { // zero the rest on the GPU, ordered before any later submission
		if err := d.queue.pendingEncoder(); err != nil {
			b.destroyLocked()
			return nil, false, err
		}
		d.queue.pending.hold(b)
		d.queue.pending.clearBuffer(b, from, size-from)
	}
	return b, len(data) > 0, nil
}

// createBufferLocked creates and binds a buffer; d.mu must be held. Where
// its memory is host-visible, its bytes from offset from on are zeroed (the
// caller writes those before it: from = size for a staging or readback
// buffer, written whole before any read).
func (d *Device) createBufferLocked(label string, size uint64, u BufferUsage, vu vk.BufferUsageFlags, class memoryClass, from uint64) (*Buffer, error) {
	b := &Buffer{d: d, label: label, size: size, usage: u}
	var ar vk.Arena
	defer ar.Release()
	ci := vk.New[vk.BufferCreateInfo](&ar)
	ci.Size, ci.Usage, ci.SharingMode = size, vu, vk.SharingModeExclusive
	if err := check("vkCreateBuffer", d.fn.CreateBuffer(d.h, ci, nil, &b.h)); err != nil {
		return nil, fmt.Errorf("buffer %q (%d bytes): %w", label, size, d.noteLost(err))
	}
	var req vk.MemoryRequirements
	d.fn.GetBufferMemoryRequirements(d.h, b.h, &req)
	block, off, err := d.mem.alloc(req, class)
	if err != nil {
		d.fn.DestroyBuffer(d.h, b.h, nil)
		return nil, fmt.Errorf("buffer %q (%d bytes): %w", label, size, err)
	}
	b.block, b.off, b.allocSize = block, off, req.Size
	if err := check("vkBindBufferMemory", d.fn.BindBufferMemory(d.h, b.h, block.mem, off)); err != nil {
		d.mem.free(block, off, req.Size)
		d.fn.DestroyBuffer(d.h, b.h, nil)
		return nil, fmt.Errorf("buffer %q: %w", label, d.noteLost(err))
	}
	if block.mapped != nil && from < size { // blocks are recycled: zero the range
		clear(b.bytes()[from:])
	}
	d.live[b] = struct{}{}
	return b, nil
}

// destroyLocked destroys a buffer now; d.mu must be held and the GPU must be done with it.
func (b *Buffer) destroyLocked() {
	if _, ok := b.d.live[b]; ok {
		delete(b.d.live, b)
		b.destroy()
	}
}

// bytes is the buffer's host-visible memory (nil when not host-visible).
func (b *Buffer) bytes() []byte {
	if b.block.mapped == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(b.block.mapped, b.off)), b.size)
}

// Size is the buffer's size in bytes.
func (b *Buffer) Size() uint64 { return b.size }

// Usage is the buffer's usage.
func (b *Buffer) Usage() BufferUsage { return b.usage }

// Label is the buffer's label.
func (b *Buffer) Label() string { return b.label }

// Map waits until the GPU has finished all submitted work that uses the buffer and returns its bytes, valid until
// Unmap. Other goroutines may use the device while it waits. The buffer must have MapRead (read the bytes) or MapWrite (write them) usage, and must not be used in a
// submission while mapped. A buffer already mapped (no Unmap since its Map) cannot be mapped again: ErrBadUsage, as
// in WebGPU, since one Unmap would end both.
func (b *Buffer) Map() ([]byte, error) {
	if b.usage&(BufferUsageMapRead|BufferUsageMapWrite) == 0 {
		return nil, errorf(ErrBadUsage, "map buffer %q without MapRead or MapWrite usage", b.label)
	}
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	if err := b.d.queue.settle(b); err != nil { // releases d.mu while it waits
		return nil, err
	}
	if b.mapped { // (checked after the wait: another goroutine may have mapped it meanwhile)
		return nil, errorf(ErrBadUsage, "map buffer %q: already mapped (Unmap first)", b.label)
	}
	b.mapped = true
	return b.bytes(), nil
}

// Unmap ends a Map; the bytes it returned must no longer be used.
func (b *Buffer) Unmap() {
	b.d.mu.Lock()
	b.mapped = false
	b.d.mu.Unlock()
}

// Close releases the buffer; its memory returns to the device once work already submitted that uses it is done.
func (b *Buffer) Close() error { return b.d.release(b) }

func (b *Buffer) describe() string { return fmt.Sprintf("buffer %q", b.label) }

func (b *Buffer) destroy() {
	b.d.fn.DestroyBuffer(b.d.h, b.h, nil)
	if !b.d.closed {
		b.d.mem.free(b.block, b.off, b.allocSize)
	}
}

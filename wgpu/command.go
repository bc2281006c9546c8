package wgpu

import (
	"fmt"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// cmdSlot is a command pool with its one command buffer, recycled once its submission finished.
type cmdSlot struct {
	pool vk.CommandPool
	cb   vk.CommandBuffer
}

// CommandEncoderDescriptor configures CreateCommandEncoder.
type CommandEncoderDescriptor struct{ Label string }

// CommandEncoder records commands into a CommandBuffer. It inserts the barriers WebGPU's semantics need: each
// command sees the writes of earlier commands it depends on (read after write, write after write, write after
// read), and independent commands are left free to overlap. Errors are kept and returned by Finish. An encoder is
// used by one goroutine at a time; several encoders may record concurrently.
type CommandEncoder struct {
	d       *Device
	label   string
	slot    *cmdSlot
	err     error
	done    bool
	inPass  bool
	used    map[*Buffer]struct{} // buffers recorded with, pinned (Device.pin) until the command buffer is released
	objs    map[child]struct{}   // bind groups, pipelines and query sets recorded with, pinned likewise
	staging []*Buffer            // released with the command buffer
	locked  bool                 // an internal encoder used with d.mu held
	stamps  []stamp              // queries written, in order
	needs   []stamp              // queries resolved that this recording did not write before

	skipBarriers bool // tests only: check that validation catches the hazards

	writes, reads map[*Buffer][]span    // byte ranges accessed since the last barrier
	stages        vk.PipelineStageFlags // stages of those accesses

	// Barriers counts the barriers inserted between dependent commands; Dispatches counts dispatches.
	Barriers, Dispatches int
}

// CommandBuffer is a finished recording, submitted once with Queue.Submit.
type CommandBuffer struct {
	d         *Device
	label     string
	slot      *cmdSlot
	used      map[*Buffer]struct{}
	objs      map[child]struct{}
	staging   []*Buffer
	stamps    []stamp // queries written
	needs     []stamp // queries resolved that earlier submissions must have written
	submitted bool
}

// CreateCommandEncoder starts a recording.
func (d *Device) CreateCommandEncoder(desc *CommandEncoderDescriptor) (*CommandEncoder, error) {
	label := ""
	if desc != nil {
		label = desc.Label
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	return d.newEncoderLocked(label)
}

func (d *Device) newEncoderLocked(label string) (*CommandEncoder, error) {
	s, err := d.getSlot()
	if err != nil {
		return nil, fmt.Errorf("command encoder %q: %w", label, err)
	}
	e := &CommandEncoder{d: d, label: label, slot: s, used: map[*Buffer]struct{}{}, objs: map[child]struct{}{},
		writes: map[*Buffer][]span{}, reads: map[*Buffer][]span{}}
	// Recording passes pointers to Go values that hold no Go pointers (legal without pinning), so an encoder
	// that is dropped unfinished leaks nothing but its command pool and its pins (closed objects it recorded with
	// stay allocated), which Device.Close releases.
	bi := vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo, Flags: vk.CommandBufferUsageOneTimeSubmitBit}
	if err := check("vkBeginCommandBuffer", d.fn.BeginCommandBuffer(s.cb, &bi)); err != nil {
		d.putSlot(s)
		return nil, d.noteLost(err)
	}
	// Earlier submissions' writes become visible to this one.
	if !noOpeningBarrier {
		e.memoryBarrier(stagesGPU, stagesGPU)
	}
	return e, nil
}

const stagesGPU = vk.PipelineStageComputeShaderBit | vk.PipelineStageTransferBit

// noOpeningBarrier leaves out the barrier that starts every command buffer (tests only: check that validation
// catches the hazards across command buffers).
var noOpeningBarrier = false

// getSlot takes a recycled command pool or creates one. d.mu must be held.
func (d *Device) getSlot() (*cmdSlot, error) {
	if n := len(d.cmdFree); n > 0 {
		s := d.cmdFree[n-1]
		d.cmdFree = d.cmdFree[:n-1]
		return s, nil
	}
	var ar vk.Arena
	defer ar.Release()
	s := &cmdSlot{}
	ci := vk.New[vk.CommandPoolCreateInfo](&ar)
	ci.Flags, ci.QueueFamilyIndex = vk.CommandPoolCreateTransientBit, d.adapter.family
	if err := check("vkCreateCommandPool", d.fn.CreateCommandPool(d.h, ci, nil, &s.pool)); err != nil {
		return nil, d.noteLost(err)
	}
	ai := vk.New[vk.CommandBufferAllocateInfo](&ar)
	ai.CommandPool, ai.Level, ai.CommandBufferCount = s.pool, vk.CommandBufferLevelPrimary, 1
	if err := check("vkAllocateCommandBuffers", d.fn.AllocateCommandBuffers(d.h, ai, &s.cb)); err != nil {
		d.fn.DestroyCommandPool(d.h, s.pool, nil)
		return nil, d.noteLost(err)
	}
	d.cmdSlots = append(d.cmdSlots, s)
	return s, nil
}

// putSlot resets a command pool and keeps it for reuse. d.mu must be held.
func (d *Device) putSlot(s *cmdSlot) {
	if d.fn.ResetCommandPool(d.h, s.pool, 0) != vk.Success {
		return // kept in cmdSlots, destroyed at Device.Close
	}
	d.cmdFree = append(d.cmdFree, s)
}

func (e *CommandEncoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// ok reports whether recording may continue.
func (e *CommandEncoder) ok() bool {
	if e.done {
		e.fail(errorf(ErrBadUsage, "encoder %q used after Finish", e.label))
	}
	if e.d.gone.Load() {
		e.fail(ErrClosed)
	}
	return e.err == nil
}

func (e *CommandEncoder) uses(b *Buffer) bool { _, ok := e.used[b]; return ok }

// hold pins c (once per encoder) before a command records its handle, so that closing c cannot destroy it while
// the recording or its command buffer still refers to it; Queue.Submit then refuses the command buffer, and its
// release destroys c. It fails the encoder with ErrClosed, naming c, if c was closed already.
func (e *CommandEncoder) hold(c child) bool {
	b, isBuf := c.(*Buffer)
	if isBuf && e.uses(b) {
		return true
	}
	if _, ok := e.objs[c]; !isBuf && ok {
		return true
	}
	if !e.locked {
		e.d.mu.Lock()
		defer e.d.mu.Unlock()
	}
	if err := e.d.pin(c); err != nil {
		e.fail(err)
		return false
	}
	if isBuf {
		e.used[b] = struct{}{}
	} else {
		e.objs[c] = struct{}{}
	}
	return true
}

// access is a byte range of a buffer a command touches.
type access struct {
	b         *Buffer
	off, size uint64
	write     bool
}

// overlaps reports whether [off, off+size) meets any of the spans.
func overlaps(spans []span, off, size uint64) bool {
	for _, s := range spans {
		if off < s.off+s.size && s.off < off+size {
			return true
		}
	}
	return false
}

// prepare inserts a barrier if the next command, at stage, conflicts with accesses since the last barrier (read
// or write after write, write after read, on overlapping bytes), then records its accesses. Commands on
// disjoint ranges, such as kernels writing different tensors of one activation buffer, stay barrier-free. The
// buffers must be held (hold).
func (e *CommandEncoder) prepare(stage vk.PipelineStageFlags, acc []access) {
	hazard := false
	for _, a := range acc {
		if overlaps(e.writes[a.b], a.off, a.size) || (a.write && overlaps(e.reads[a.b], a.off, a.size)) {
			hazard = true
			break
		}
	}
	if hazard && !e.skipBarriers {
		// The tracking is cleared below, so the barrier orders everything
		// recorded so far before every later GPU command, whatever its stage:
		// a compute read before a copy must be ordered before a later compute
		// write, and a compute write before a compute-to-compute barrier before
		// a later copy that reads it.
		e.memoryBarrier(e.stages, stagesGPU)
		e.Barriers++
		clear(e.writes)
		clear(e.reads)
		e.stages = 0
	}
	for _, a := range acc {
		if a.write {
			e.writes[a.b] = append(e.writes[a.b], span{a.off, a.size})
		} else {
			e.reads[a.b] = append(e.reads[a.b], span{a.off, a.size})
		}
	}
	e.stages |= stage
}

// memoryBarrier makes writes by the src stages visible to the dst stages (compute, transfer or host).
func (e *CommandEncoder) memoryBarrier(src, dst vk.PipelineStageFlags) {
	var srcAccess, dstAccess vk.AccessFlags
	if src&vk.PipelineStageComputeShaderBit != 0 {
		srcAccess |= vk.AccessShaderWriteBit
	}
	if src&vk.PipelineStageTransferBit != 0 {
		srcAccess |= vk.AccessTransferWriteBit
	}
	if dst&vk.PipelineStageComputeShaderBit != 0 {
		dstAccess |= vk.AccessShaderReadBit | vk.AccessShaderWriteBit | vk.AccessUniformReadBit
	}
	if dst&vk.PipelineStageTransferBit != 0 {
		dstAccess |= vk.AccessTransferReadBit | vk.AccessTransferWriteBit
	}
	if dst&vk.PipelineStageHostBit != 0 {
		dstAccess |= vk.AccessHostReadBit
	}
	mb := vk.MemoryBarrier{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: srcAccess, DstAccessMask: dstAccess}
	e.d.fn.CmdPipelineBarrier(e.slot.cb, src, dst, 0, 1, &mb, 0, nil, 0, nil)
}

func (e *CommandEncoder) checkBuffer(op string, b *Buffer, offset, size uint64) bool {
	if b == nil || b.d != e.d {
		e.fail(errorf(ErrBadUsage, "%s: buffer is nil or from another device", op))
		return false
	}
	if err := checkRange(op, b, offset, size); err != nil {
		e.fail(err)
		return false
	}
	return e.hold(b)
}

// CopyBufferToBuffer copies size bytes; src needs CopySrc usage, dst CopyDst. Offsets and size are multiples of 4.
func (e *CommandEncoder) CopyBufferToBuffer(src *Buffer, srcOffset uint64, dst *Buffer, dstOffset, size uint64) {
	if !e.ok() || e.passOpen("CopyBufferToBuffer") || !e.checkBuffer("CopyBufferToBuffer", src, srcOffset, size) ||
		!e.checkBuffer("CopyBufferToBuffer", dst, dstOffset, size) {
		return
	}
	if src.usage&(BufferUsageCopySrc|BufferUsageMapWrite) == 0 || dst.usage&(BufferUsageCopyDst|BufferUsageMapRead) == 0 {
		e.fail(errorf(ErrBadUsage, "CopyBufferToBuffer %q -> %q: needs CopySrc and CopyDst usages", src.label, dst.label))
		return
	}
	if src == dst && srcOffset < dstOffset+size && dstOffset < srcOffset+size {
		e.fail(errorf(ErrBadUsage, "CopyBufferToBuffer within %q: ranges overlap", src.label))
		return
	}
	if size == 0 {
		return
	}
	e.prepare(vk.PipelineStageTransferBit, []access{{src, srcOffset, size, false}, {dst, dstOffset, size, true}})
	r := vk.BufferCopy{SrcOffset: srcOffset, DstOffset: dstOffset, Size: size}
	e.d.fn.CmdCopyBuffer(e.slot.cb, src.h, dst.h, 1, &r)
}

// ClearBuffer sets size bytes of b from offset to zero (size 0: to the end; nothing when offset is the end).
// Offsets and size are multiples of 4.
func (e *CommandEncoder) ClearBuffer(b *Buffer, offset, size uint64) {
	if b != nil && size == 0 && offset <= b.size {
		size = b.size - offset
	}
	if !e.ok() || e.passOpen("ClearBuffer") || !e.checkBuffer("ClearBuffer", b, offset, size) {
		return
	}
	if b.usage&BufferUsageCopyDst == 0 {
		e.fail(errorf(ErrBadUsage, "ClearBuffer %q without CopyDst usage", b.label))
		return
	}
	if size > 0 { // vkCmdFillBuffer takes no empty range
		e.clearBuffer(b, offset, size)
	}
}

func (e *CommandEncoder) clearBuffer(b *Buffer, offset, size uint64) {
	e.prepare(vk.PipelineStageTransferBit, []access{{b, offset, size, true}})
	e.d.fn.CmdFillBuffer(e.slot.cb, b.h, offset, size, 0)
}

func (e *CommandEncoder) passOpen(op string) bool {
	if e.inPass {
		e.fail(errorf(ErrBadUsage, "%s while a compute pass is open", op))
	}
	return e.inPass
}

// Finish ends the recording. It returns the first error of the recording, if any.
func (e *CommandEncoder) Finish() (*CommandBuffer, error) {
	if e.done {
		return nil, errorf(ErrBadUsage, "encoder %q finished twice", e.label)
	}
	e.passOpen("Finish")
	if e.ok() { // results become visible to Map and ReadBuffer
		e.memoryBarrier(stagesGPU, vk.PipelineStageHostBit)
		e.fail(check("vkEndCommandBuffer", e.d.fn.EndCommandBuffer(e.slot.cb)))
	}
	e.done = true
	if e.err != nil {
		e.abandon()
		return nil, fmt.Errorf("command encoder %q: %w", e.label, e.err)
	}
	cb := &CommandBuffer{d: e.d, label: e.label, slot: e.slot, used: e.used, objs: e.objs, staging: e.staging,
		stamps: e.stamps, needs: e.needs}
	e.slot, e.staging = nil, nil
	return cb, nil
}

// abandon returns the encoder's resources without submitting.
func (e *CommandEncoder) abandon() {
	e.done = true
	if e.slot == nil || e.d.gone.Load() {
		return
	}
	cb := &CommandBuffer{d: e.d, slot: e.slot, used: e.used, objs: e.objs, staging: e.staging}
	e.slot, e.staging = nil, nil
	if !e.locked {
		e.d.mu.Lock()
		defer e.d.mu.Unlock()
	}
	cb.release()
}

// release recycles the command pool, frees staging buffers and unpins what the recording held. d.mu must be held.
func (cb *CommandBuffer) release() {
	if cb.slot != nil {
		cb.d.putSlot(cb.slot)
		cb.slot = nil
	}
	for _, b := range cb.staging {
		b.destroyLocked()
	}
	cb.staging = nil
	for b := range cb.used {
		cb.d.unpin(b)
	}
	for c := range cb.objs {
		cb.d.unpin(c)
	}
	cb.used, cb.objs = nil, nil
}

// Close releases a command buffer that will not be submitted (Submit refused it, or it is not wanted). Submitted
// ones are released automatically. Until then, objects it was recorded with stay allocated even if closed.
func (cb *CommandBuffer) Close() error {
	cb.d.mu.Lock()
	defer cb.d.mu.Unlock()
	if !cb.submitted && !cb.d.closed {
		cb.submitted = true
		cb.release()
	}
	return nil
}

// pushConstants records push constant bytes; used by ComputePass.
func (e *CommandEncoder) pushConstants(layout vk.PipelineLayout, offset uint32, data []byte) {
	e.d.fn.CmdPushConstants(e.slot.cb, layout, vk.ShaderStageComputeBit, offset, uint32(len(data)), unsafe.Pointer(&data[0]))
}

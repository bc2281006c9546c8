package wgpu

import (
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// SubmissionIndex identifies a Queue.Submit; Queue.WaitFor waits for it.
type SubmissionIndex uint64

// Queue is the device's queue. Its methods are safe for concurrent use; they serialize on the device.
type Queue struct {
	d            *Device
	h            vk.Queue
	next         uint64      // index of the next submission
	completed    uint64      // submissions with index < completed are done
	inflight     []*inflight // in submission order
	fences       []vk.Fence  // free fences (unsignaled state not guaranteed)
	pending      *CommandEncoder
	pendingBytes uint64
}

// inflight is a submitted batch and what to release when its fence signals.
type inflight struct {
	idx      uint64
	fence    vk.Fence
	cbs      []*CommandBuffer
	deferred []child // closed while this submission ran: destroyed when it finishes
}

// forceStaging makes WriteBuffer always go through a staging buffer (for benchmarks of that path).
var forceStaging = false

// stagingFlush is how many staged upload bytes make WriteBuffer submit them without waiting for the next Submit.
var stagingFlush = 64 << 20 // a variable for tests

// Submit executes command buffers in order, after every earlier submission and WriteBuffer. It does not wait.
func (q *Queue) Submit(cbs ...*CommandBuffer) (SubmissionIndex, error) {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if err := q.d.usable(); err != nil {
		return 0, err
	}
	seen := map[*CommandBuffer]bool{}
	for _, cb := range cbs {
		if cb == nil || cb.d != q.d || cb.submitted || seen[cb] {
			return 0, errorf(ErrBadUsage, "command buffer nil, submitted twice or to another device")
		}
		seen[cb] = true
		for b := range cb.used {
			if _, ok := q.d.live[b]; !ok {
				return 0, errorf(ErrClosed, "command buffer %q uses closed buffer %q", cb.label, b.label)
			}
			if b.mapped {
				return 0, errorf(ErrBadUsage, "command buffer %q uses buffer %q while it is mapped", cb.label, b.label)
			}
		}
		for o := range cb.objs {
			if _, ok := q.d.live[o]; !ok {
				return 0, errorf(ErrClosed, "command buffer %q uses a closed bind group, pipeline or query set", cb.label)
			}
		}
	}
	idx, err := q.submitLocked(cbs)
	return SubmissionIndex(idx), err
}

// submitLocked submits the pending uploads, then cbs. d.mu must be held.
func (q *Queue) submitLocked(cbs []*CommandBuffer) (uint64, error) {
	if q.pending != nil {
		pcb, err := q.pending.Finish()
		q.pending, q.pendingBytes = nil, 0
		if err != nil {
			return 0, err
		}
		cbs = append([]*CommandBuffer{pcb}, cbs...)
	}
	if len(cbs) == 0 {
		return q.next - 1, nil
	}
	var fence vk.Fence
	if n := len(q.fences); n > 0 {
		fence, q.fences = q.fences[n-1], q.fences[:n-1]
		if err := check("vkResetFences", q.d.fn.ResetFences(q.d.h, 1, &fence)); err != nil {
			return 0, q.d.noteLost(err)
		}
	} else {
		var ar vk.Arena
		ci := vk.New[vk.FenceCreateInfo](&ar)
		err := check("vkCreateFence", q.d.fn.CreateFence(q.d.h, ci, nil, &fence))
		ar.Release()
		if err != nil {
			return 0, err
		}
	}
	var ar vk.Arena
	defer ar.Release()
	handles := vk.NewSlice[vk.CommandBuffer](&ar, len(cbs))
	for i, cb := range cbs {
		handles[i] = cb.slot.cb
	}
	si := vk.New[vk.SubmitInfo](&ar)
	si.CommandBufferCount, si.PCommandBuffers = uint32(len(cbs)), &handles[0]
	if err := check("vkQueueSubmit", q.d.fn.QueueSubmit(q.h, 1, si, fence)); err != nil {
		q.fences = append(q.fences, fence)
		return 0, q.d.noteLost(err)
	}
	idx := q.next
	q.next++
	for _, cb := range cbs {
		cb.submitted = true
		for b := range cb.used {
			b.lastUse = idx + 1
		}
		for o := range cb.objs {
			if qs, ok := o.(*QuerySet); ok {
				qs.lastUse = idx + 1
			}
		}
	}
	q.inflight = append(q.inflight, &inflight{idx: idx, fence: fence, cbs: cbs})
	return idx, q.retire(false)
}

// retire releases finished submissions, in order; with wait it waits for all of them. d.mu must be held.
func (q *Queue) retire(wait bool) error {
	for len(q.inflight) > 0 {
		f := q.inflight[0]
		if wait {
			if err := check("vkWaitForFences", q.d.fn.WaitForFences(q.d.h, 1, &f.fence, vk.True, ^uint64(0))); err != nil {
				return q.d.noteLost(err)
			}
		} else {
			r := q.d.fn.GetFenceStatus(q.d.h, f.fence)
			if r == vk.NotReady {
				return nil
			}
			if err := check("vkGetFenceStatus", r); err != nil {
				return q.d.noteLost(err)
			}
		}
		q.inflight = q.inflight[1:]
		q.completed = f.idx + 1
		q.fences = append(q.fences, f.fence)
		for _, cb := range f.cbs {
			cb.release()
		}
		for _, c := range f.deferred {
			c.destroy()
		}
	}
	return nil
}

// deferDestroy destroys c once the GPU is done with every submission so far (now, if idle). d.mu must be held.
func (q *Queue) deferDestroy(c child) error {
	var err error
	if b, ok := c.(*Buffer); ok && q.pending != nil && q.pending.uses(b) {
		_, err = q.submitLocked(nil) // the pending uploads still use it
	}
	if n := len(q.inflight); n > 0 {
		q.inflight[n-1].deferred = append(q.inflight[n-1].deferred, c)
		return err
	}
	c.destroy()
	return err
}

// waitFor waits until submissions with index < upTo are done. lastUse values of buffers are such bounds.
func (q *Queue) waitFor(upTo uint64) error {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if q.d.closed {
		return ErrClosed
	}
	return q.waitForLocked(upTo)
}

// waitForLocked is waitFor with d.mu held.
func (q *Queue) waitForLocked(upTo uint64) error {
	for len(q.inflight) > 0 && q.inflight[0].idx < upTo {
		f := q.inflight[0]
		if err := check("vkWaitForFences", q.d.fn.WaitForFences(q.d.h, 1, &f.fence, vk.True, ^uint64(0))); err != nil {
			return q.d.noteLost(err)
		}
		if err := q.retire(false); err != nil {
			return err
		}
	}
	return q.d.lost
}

// WaitFor waits until the submission idx (and all before it) finished on the GPU.
func (q *Queue) WaitFor(idx SubmissionIndex) error { return q.waitFor(uint64(idx) + 1) }

// WaitIdle submits pending uploads and waits until the GPU finished all submitted work.
func (q *Queue) WaitIdle() error {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if err := q.d.usable(); err != nil {
		return err
	}
	if q.pending != nil {
		if _, err := q.submitLocked(nil); err != nil {
			return err
		}
	}
	return q.retire(true)
}

// pendingEncoder makes sure q.pending exists. d.mu must be held.
func (q *Queue) pendingEncoder() error {
	if q.pending != nil {
		return nil
	}
	e, err := q.d.newEncoderLocked("queue uploads")
	if err != nil {
		return err
	}
	e.locked = true
	q.pending = e
	return nil
}

// WriteBuffer writes data into b at offset, ordered after all earlier submissions and before later ones. b needs
// CopyDst usage; offset and len(data) must be multiples of 4. Data is copied before WriteBuffer returns.
func (q *Queue) WriteBuffer(b *Buffer, offset uint64, data []byte) error {
	if err := checkRange("WriteBuffer", b, offset, uint64(len(data))); err != nil {
		return err
	}
	if b.usage&BufferUsageCopyDst == 0 {
		return errorf(ErrBadUsage, "WriteBuffer to buffer %q without CopyDst usage", b.label)
	}
	if len(data) == 0 {
		return nil
	}
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if err := q.d.usable(); err != nil {
		return err
	}
	if _, ok := q.d.live[b]; !ok {
		return ErrClosed
	}
	if b.mapped {
		return errorf(ErrBadUsage, "WriteBuffer to buffer %q while it is mapped", b.label)
	}
	if err := q.retire(false); err != nil {
		return err
	}
	if dst := b.bytes(); dst != nil && !forceStaging && b.lastUse <= q.completed && (q.pending == nil || !q.pending.uses(b)) {
		copy(dst[offset:], data) // idle host-visible memory: the write is already in queue order
		return nil
	}
	for len(data) > 0 { // in chunks, so staging memory stays bounded
		chunk := data[:min(len(data), stagingFlush)]
		st, err := q.d.createBufferLocked("staging", uint64(len(chunk)), BufferUsageMapWrite|BufferUsageCopySrc,
			vk.BufferUsageTransferSrcBit, memUpload)
		if err != nil {
			return fmt.Errorf("WriteBuffer %q: %w", b.label, err)
		}
		copy(st.bytes(), chunk)
		if err := q.pendingEncoder(); err != nil {
			st.destroyLocked()
			return err
		}
		q.pending.staging = append(q.pending.staging, st)
		q.pending.CopyBufferToBuffer(st, 0, b, offset, uint64(len(chunk)))
		q.pendingBytes += uint64(len(chunk))
		if q.pendingBytes >= uint64(stagingFlush) {
			if _, err = q.submitLocked(nil); err != nil {
				return err
			}
		}
		data, offset = data[len(chunk):], offset+uint64(len(chunk))
	}
	return nil
}

// ReadBuffer copies b's bytes from offset into dst, after all earlier submissions and writes. b needs CopySrc
// usage; offset and len(dst) must be multiples of 4. It waits for the GPU.
func (q *Queue) ReadBuffer(b *Buffer, offset uint64, dst []byte) error {
	if err := checkRange("ReadBuffer", b, offset, uint64(len(dst))); err != nil {
		return err
	}
	if b.usage&(BufferUsageCopySrc|BufferUsageMapRead) == 0 {
		return errorf(ErrBadUsage, "ReadBuffer from buffer %q without CopySrc usage", b.label)
	}
	if len(dst) == 0 {
		return nil
	}
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if err := q.d.usable(); err != nil {
		return err
	}
	if _, ok := q.d.live[b]; !ok {
		return ErrClosed
	}
	src, srcOff := b, offset
	if b.bytes() == nil {
		st, err := q.d.createBufferLocked("readback", uint64(len(dst)), BufferUsageMapRead|BufferUsageCopyDst,
			vk.BufferUsageTransferDstBit, memReadback)
		if err == nil {
			err = q.pendingEncoder()
		}
		if err != nil {
			return fmt.Errorf("ReadBuffer %q: %w", b.label, err)
		}
		q.pending.CopyBufferToBuffer(b, offset, st, 0, uint64(len(dst)))
		q.pending.staging = append(q.pending.staging, st)
		src, srcOff = st, 0
		defer st.destroyLocked() // after the copy out; st's submission has finished by then
		q.pending.staging = q.pending.staging[:len(q.pending.staging)-1]
	}
	if q.pending != nil && q.pending.uses(b) {
		if _, err := q.submitLocked(nil); err != nil {
			return err
		}
	}
	if err := q.waitForLocked(src.lastUse); err != nil {
		return err
	}
	copy(dst, src.bytes()[srcOff:])
	return nil
}

func checkRange(op string, b *Buffer, offset, size uint64) error {
	if offset%4 != 0 || size%4 != 0 {
		return errorf(ErrBadUsage, "%s %q: offset %d and size %d must be multiples of 4", op, b.label, offset, size)
	}
	if offset > b.size || size > b.size-offset {
		return errorf(ErrBadUsage, "%s %q: range [%d, %d) outside the buffer's %d bytes", op, b.label, offset, offset+size, b.size)
	}
	return nil
}

// destroy releases the queue's fences; d.mu must be held and the device idle.
func (q *Queue) destroy() {
	for _, f := range q.inflight {
		q.fences = append(q.fences, f.fence)
		for _, cb := range f.cbs {
			cb.release()
		}
		for _, c := range f.deferred {
			c.destroy()
		}
	}
	q.inflight = nil
	if q.pending != nil {
		q.pending.abandon()
		q.pending = nil
	}
	for _, f := range q.fences {
		q.d.fn.DestroyFence(q.d.h, f, nil)
	}
	q.fences = nil
}

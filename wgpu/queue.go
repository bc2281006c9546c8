package wgpu

import (
	"fmt"
	"sort"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// SubmissionIndex identifies a Queue.Submit; Queue.WaitFor waits for it.
type SubmissionIndex uint64

// Queue is the device's queue. Its methods are safe for concurrent use; they serialize on the device, except that
// waits for the GPU (WaitFor, WaitIdle, ReadBuffer, Buffer.Map, QuerySet.Read) release the device meanwhile, so
// other goroutines can record, submit and write while one waits.
type Queue struct {
	d            *Device
	h            vk.Queue
	next         uint64      // index of the next submission
	completed    uint64      // submissions with index < completed are done
	inflight     []*inflight // in submission order
	fences       []vk.Fence  // free fences (unsignaled state not guaranteed); none has a waiter
	pending      *CommandEncoder
	pendingBytes uint64
	waiters      int        // goroutines inside vkWaitForFences, d.mu released
	idle         *sync.Cond // on d.mu; broadcast when waiters drops to 0 (Device.Close waits for that)
	stats        QueueStats
}

// QueueStats counts what a queue did, so that callers and tests can check how
// often they synchronize with the GPU.
type QueueStats struct {
	Submits       uint64 // vkQueueSubmit calls (Submit, and uploads flushed on their own)
	Writes        uint64 // WriteBuffer calls
	WriteBytes    uint64 // bytes given to WriteBuffer
	Readbacks     uint64 // ReadBuffer calls
	ReadbackBytes uint64 // bytes read by ReadBuffer
}

// Stats returns the counts so far.
func (q *Queue) Stats() QueueStats {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	return q.stats
}

// inflight is a submitted batch and what to release when its fence signals.
type inflight struct {
	idx      uint64
	fence    vk.Fence
	cbs      []*CommandBuffer
	deferred []child // closed while this submission ran: destroyed when it finishes
	waiters  int     // goroutines waiting on fence with d.mu released: it must not be reset or destroyed
	retired  bool    // released by retire while waited on: the last waiter recycles the fence
}

// waitHook, when set (tests only), runs with d.mu released just before a goroutine waits on a fence.
var waitHook func()

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
	written := map[stamp]bool{} // by the command buffers before this one
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
		for _, s := range cb.needs {
			if !s.q.written[s.index] && !written[s] {
				return 0, errorf(ErrBadUsage, "command buffer %q resolves query %d of query set %q, which no command buffer before it writes",
					cb.label, s.index, s.q.label)
			}
		}
		for _, s := range cb.stamps {
			written[s] = true
		}
	}
	idx, err := q.submitLocked(cbs)
	if err == nil {
		for s := range written {
			s.q.written[s.index] = true
		}
	}
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
	q.stats.Submits++
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
	if holdFences {
		return idx, nil
	}
	return idx, q.retire()
}

// holdFences keeps Submit from asking whether earlier submissions are done (tests only: a validation layer that
// sees a submission's fence signaled no longer reports a hazard with it, so a test of a hazard between submissions
// holds them, which a fast driver may otherwise finish before the next is submitted).
var holdFences = false

// retire releases finished submissions, in order, without waiting. d.mu must be held.
func (q *Queue) retire() error {
	for len(q.inflight) > 0 {
		f := q.inflight[0]
		r := q.d.fn.GetFenceStatus(q.d.h, f.fence)
		if r == vk.NotReady {
			return nil
		}
		if err := check("vkGetFenceStatus", r); err != nil {
			return q.d.noteLost(err)
		}
		q.inflight = q.inflight[1:]
		q.completed = f.idx + 1
		if f.waiters == 0 {
			q.fences = append(q.fences, f.fence)
		} else {
			f.retired = true // still passed to vkWaitForFences by someone: recycled when the last one is back
		}
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

// waitLocked waits until submissions with index < upTo are done and retired; lastUse values of buffers are such
// bounds. d.mu must be held; it is released while waiting on a fence and held again on return, so anything read
// under d.mu before the call must be checked again after it. It fails with ErrClosed if the device was closed
// meanwhile, and with the device-lost error if the device is lost.
func (q *Queue) waitLocked(upTo uint64) error {
	for {
		if err := q.d.usable(); err != nil {
			return err
		}
		if err := q.retire(); err != nil {
			return err
		}
		if len(q.inflight) == 0 || q.inflight[0].idx >= upTo {
			return nil
		}
		// The last submission below upTo: its fence signals after every earlier submission's on this queue.
		f := q.inflight[sort.Search(len(q.inflight), func(i int) bool { return q.inflight[i].idx >= upTo })-1]
		f.waiters++
		q.waiters++
		fence := f.fence
		q.d.mu.Unlock()
		if waitHook != nil {
			waitHook()
		}
		r := q.d.fn.WaitForFences(q.d.h, 1, &fence, vk.True, ^uint64(0))
		q.d.mu.Lock()
		f.waiters--
		q.waiters--
		if f.waiters == 0 && f.retired {
			q.fences = append(q.fences, f.fence)
		}
		if q.waiters == 0 {
			q.idle.Broadcast()
		}
		if err := check("vkWaitForFences", r); err != nil {
			return q.d.noteLost(err)
		}
	}
}

// settle waits until no submitted or pending work uses b (whose lastUse may grow while d.mu is released by
// other goroutines' submissions). d.mu must be held, as for waitLocked. On success b is live and idle, and stays
// so while d.mu is held.
func (q *Queue) settle(b *Buffer) error {
	return q.settleObj(b, b, &b.lastUse)
}

// settleObj is settle for any child: c must be live, pending uploads must not use b (nil: none can use c), and the
// submissions with index < *lastUse must be done.
func (q *Queue) settleObj(c child, b *Buffer, lastUse *uint64) error {
	for {
		if err := q.d.usable(); err != nil {
			return err
		}
		if _, ok := q.d.live[c]; !ok {
			return ErrClosed
		}
		if b != nil && q.pending != nil && q.pending.uses(b) {
			if _, err := q.submitLocked(nil); err != nil {
				return err
			}
		}
		if *lastUse <= q.completed {
			return nil
		}
		if err := q.waitLocked(*lastUse); err != nil {
			return err
		}
	}
}

// WaitFor waits until the submission idx (and all before it) finished on the GPU. Other goroutines may use the
// device meanwhile.
func (q *Queue) WaitFor(idx SubmissionIndex) error {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	return q.waitLocked(uint64(idx) + 1)
}

// WaitIdle submits pending uploads and waits until the GPU finished all work submitted before the call. Other
// goroutines may use the device meanwhile.
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
	return q.waitLocked(q.next)
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
	q.stats.Writes++
	q.stats.WriteBytes += uint64(len(data))
	if _, ok := q.d.live[b]; !ok {
		return ErrClosed
	}
	if b.mapped {
		return errorf(ErrBadUsage, "WriteBuffer to buffer %q while it is mapped", b.label)
	}
	if err := q.retire(); err != nil {
		return err
	}
	if dst := b.bytes(); dst != nil && !forceStaging && b.lastUse <= q.completed && (q.pending == nil || !q.pending.uses(b)) {
		copy(dst[offset:], data) // idle host-visible memory: the write is already in queue order
		return nil
	}
	for len(data) > 0 { // in chunks, so staging memory stays bounded
		chunk := data[:min(len(data), stagingFlush)]
		st, err := q.d.createBufferLocked("staging", uint64(len(chunk)), BufferUsageMapWrite|BufferUsageCopySrc,
			vk.BufferUsageTransferSrcBit, memUpload, uint64(len(chunk)))
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
	q.stats.Readbacks++
	q.stats.ReadbackBytes += uint64(len(dst))
	if _, ok := q.d.live[b]; !ok {
		return ErrClosed
	}
	if b.bytes() == nil { // copy into host-visible memory, ordered now; st is ours alone until it is destroyed
		st, err := q.d.createBufferLocked("readback", uint64(len(dst)), BufferUsageMapRead|BufferUsageCopyDst,
			vk.BufferUsageTransferDstBit, memReadback, uint64(len(dst)))
		if err != nil {
			return fmt.Errorf("ReadBuffer %q: %w", b.label, err)
		}
		defer st.destroyLocked() // after the copy out (or on error); its submission has finished or been abandoned
		if err := q.pendingEncoder(); err != nil {
			return fmt.Errorf("ReadBuffer %q: %w", b.label, err)
		}
		q.pending.CopyBufferToBuffer(b, offset, st, 0, uint64(len(dst)))
		if err := q.settle(st); err != nil {
			return err
		}
		copy(dst, st.bytes())
		return nil
	}
	// Host-visible: read once no work uses b. Submissions other goroutines make while this one waits are waited
	// for too (ReadBuffer then takes effect after them).
	if err := q.settle(b); err != nil {
		return err
	}
	copy(dst, b.bytes()[offset:])
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

// destroy releases the queue's fences; d.mu must be held, the device idle and no one waiting (q.waiters == 0).
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

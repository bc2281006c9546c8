package wgpu

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// QuerySetDescriptor configures CreateQuerySet; only timestamp queries exist.
type QuerySetDescriptor struct {
	Label string
	Count uint32
}

// QuerySet is a set of GPU timestamp queries (feature timestamp-query).
type QuerySet struct {
	d       *Device
	h       vk.QueryPool
	label   string
	count   uint32
	lastUse uint64 // index+1 of the last submission that wrote it
	written []bool // by query: a submitted command buffer writes it (guarded by d.mu)
}

// stamp is a query of a query set.
type stamp struct {
	q     *QuerySet
	index uint32
}

// CreateQuerySet creates count timestamp queries.
func (d *Device) CreateQuerySet(desc *QuerySetDescriptor) (*QuerySet, error) {
	if !d.features[FeatureTimestampQuery] {
		return nil, errorf(ErrMissingFeature, "query set %q: %s not enabled", desc.Label, FeatureTimestampQuery)
	}
	if desc.Count == 0 || desc.Count > 4096 {
		return nil, errorf(ErrBadUsage, "query set %q: count %d not in 1..4096", desc.Label, desc.Count)
	}
	q := &QuerySet{d: d, label: desc.Label, count: desc.Count, written: make([]bool, desc.Count)}
	var ar vk.Arena
	defer ar.Release()
	ci := vk.New[vk.QueryPoolCreateInfo](&ar)
	ci.QueryType, ci.QueryCount = vk.QueryTypeTimestamp, desc.Count
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	if err := check("vkCreateQueryPool", d.fn.CreateQueryPool(d.h, ci, nil, &q.h)); err != nil {
		return nil, fmt.Errorf("query set %q: %w", desc.Label, d.noteLost(err))
	}
	d.live[q] = struct{}{}
	return q, nil
}

// Count is the number of queries.
func (q *QuerySet) Count() uint32 { return q.count }

// ValidBits is how many low bits of a timestamp the GPU's counter keeps
// (Vulkan's timestampValidBits, 36 to 64). Read masks each timestamp to them,
// so where the counter wraps between two timestamps the later one reads
// smaller: the ticks between them are their difference modulo 2^ValidBits
// (Limits.TimestampPeriod ns a tick).
func (q *QuerySet) ValidBits() uint32 { return q.d.adapter.tsBits }

// Read waits for the last submission that wrote the query set and returns queries [first, first+count) in
// nanoseconds (on the GPU's clock; only differences are meaningful). Queries never written are an error.
func (q *QuerySet) Read(first, count uint32) ([]uint64, error) {
	if uint64(first)+uint64(count) > uint64(q.count) || count == 0 {
		return nil, errorf(ErrBadUsage, "query set %q: range [%d, %d) outside %d queries", q.label, first, uint64(first)+uint64(count), q.count)
	}
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if err := q.d.queue.settleObj(q, nil, &q.lastUse); err != nil { // releases d.mu while it waits
		return nil, err
	}
	// A query never written is uninitialized: the driver must not be asked for it (Vulkan's
	// VUID-vkGetQueryPoolResults-None-09401).
	if i := slices.Index(q.written[first:first+count], false); i >= 0 {
		return nil, errorf(ErrBadUsage, "query set %q: query %d not written by any submitted command buffer", q.label, first+uint32(i))
	}
	out := make([]uint64, count)
	r := q.d.fn.GetQueryPoolResults(q.d.h, q.h, first, count, uintptr(8*count), unsafe.Pointer(&out[0]), 8, vk.QueryResult64Bit)
	if r == vk.NotReady {
		return nil, errorf(ErrBadUsage, "query set %q: queries [%d, %d) not written by any finished submission", q.label, first, first+count)
	}
	if err := check("vkGetQueryPoolResults", r); err != nil {
		return nil, err
	}
	mask := ^uint64(0)
	if bits := q.d.adapter.tsBits; bits < 64 {
		mask = 1<<bits - 1
	}
	period := float64(q.d.limits.TimestampPeriod)
	for i, v := range out {
		out[i] = uint64(float64(v&mask) * period)
	}
	return out, nil
}

// Close releases the query set.
func (q *QuerySet) Close() error { return q.d.release(q) }

func (q *QuerySet) describe() string { return fmt.Sprintf("query set %q", q.label) }

func (q *QuerySet) destroy() { q.d.fn.DestroyQueryPool(q.d.h, q.h, nil) }

// writeTimestamp resets query index and writes a timestamp to it once prior commands reach stage.
func (e *CommandEncoder) writeTimestamp(q *QuerySet, index uint32, stage vk.PipelineStageFlags) {
	if q == nil || q.d != e.d || index >= q.count {
		e.fail(errorf(ErrBadUsage, "timestamp write: query set is nil, from another device, or index %d out of range", index))
		return
	}
	if !e.hold(q) {
		return
	}
	e.stamps = append(e.stamps, stamp{q, index})
	e.d.fn.CmdResetQueryPool(e.slot.cb, q.h, index, 1)
	e.d.fn.CmdWriteTimestamp(e.slot.cb, stage, q.h, index)
}

// WriteTimestamp writes a timestamp into query index after all earlier commands completed.
func (e *CommandEncoder) WriteTimestamp(q *QuerySet, index uint32) {
	if !e.ok() || e.passOpen("WriteTimestamp") {
		return
	}
	e.writeTimestamp(q, index, vk.PipelineStageBottomOfPipeBit)
}

// ResolveQuerySet copies queries [first, first+count) into dst at offset (a multiple of 256) as uint64 values.
// Unlike WebGPU they are raw ticks: multiply by Limits.TimestampPeriod for nanoseconds. dst needs QueryResolve
// usage. Each query must be written earlier in this recording or by a command buffer submitted before it:
// Queue.Submit refuses it otherwise (the copy waits for each query, and one never written would never come).
func (e *CommandEncoder) ResolveQuerySet(q *QuerySet, first, count uint32, dst *Buffer, offset uint64) {
	if !e.ok() || e.passOpen("ResolveQuerySet") || !e.checkBuffer("ResolveQuerySet", dst, offset, 8*uint64(count)) {
		return
	}
	if q == nil || q.d != e.d || uint64(first)+uint64(count) > uint64(q.count) || offset%256 != 0 || dst.usage&BufferUsageQueryResolve == 0 {
		e.fail(errorf(ErrBadUsage, "ResolveQuerySet: bad query set or range, offset not a multiple of 256, or buffer %q lacks QueryResolve", dst.label))
		return
	}
	if count == 0 || !e.hold(q) {
		return
	}
	for i := first; i < first+count; i++ { // queries this recording has not written must be written when it runs
		if !slices.Contains(e.stamps, stamp{q, i}) {
			e.needs = append(e.needs, stamp{q, i})
		}
	}
	e.prepare(vk.PipelineStageTransferBit, []access{{dst, offset, 8 * uint64(count), true}})
	e.d.fn.CmdCopyQueryPoolResults(e.slot.cb, q.h, first, count, dst.h, offset, 8, vk.QueryResult64Bit|vk.QueryResultWaitBit)
}

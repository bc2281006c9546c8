package wgpu

import (
	"slices"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// ComputePassDescriptor configures BeginComputePass.
type ComputePassDescriptor struct {
	Label string
	// TimestampWrites, if set, records GPU timestamps at the beginning and end of the pass (feature
	// timestamp-query).
	TimestampWrites *PassTimestampWrites
}

// PassTimestampWrites names the queries a pass writes its beginning and end timestamps to.
type PassTimestampWrites struct {
	QuerySet                  *QuerySet
	BeginningOfPassWriteIndex uint32
	EndOfPassWriteIndex       uint32
}

// ComputePass records dispatches. Each dispatch sees the writes of earlier dispatches to the buffers it binds.
// After End, using the pass is an error of the encoder (Finish returns it).
type ComputePass struct {
	e        *CommandEncoder
	ended    bool
	ts       *PassTimestampWrites
	pipeline *ComputePipeline
	bound    *ComputePipeline
	groups   []*BindGroup
	dirty    []bool
	// unaliased are the bind groups of the last dispatch of a pipeline with several, found not to alias one
	// another (ComputePipeline.checkAliasing): later dispatches with the same groups skip the check.
	unaliased []*BindGroup
	// pushSet marks the 4-byte words of push constants set for the current push-constant size (pushSize); words
	// not set are zeroed before a dispatch, as wgpu does, instead of reaching the shader undefined.
	pushSet  []bool
	pushSize uint32
}

// BeginComputePass starts a compute pass; End it before other encoder commands.
func (e *CommandEncoder) BeginComputePass(desc *ComputePassDescriptor) *ComputePass {
	p := &ComputePass{e: e}
	if !e.ok() || e.passOpen("BeginComputePass") {
		return p
	}
	e.inPass = true
	if desc != nil && desc.TimestampWrites != nil {
		p.ts = desc.TimestampWrites
		e.writeTimestamp(p.ts.QuerySet, p.ts.BeginningOfPassWriteIndex, vk.PipelineStageTopOfPipeBit)
	}
	return p
}

// usable reports whether the pass may record: the encoder has no error and the pass was not ended.
func (p *ComputePass) usable(op string) bool {
	if p.ended {
		p.e.fail(errorf(ErrBadUsage, "%s on a compute pass after its End", op))
	}
	return p.e.ok()
}

// SetPipeline selects the pipeline for the following dispatches.
func (p *ComputePass) SetPipeline(pl *ComputePipeline) {
	if !p.usable("SetPipeline") {
		return
	}
	if pl == nil || pl.d != p.e.d {
		p.e.fail(errorf(ErrBadUsage, "SetPipeline: pipeline is nil or from another device"))
		return
	}
	if !p.e.hold(pl) {
		return
	}
	p.pipeline = pl
	// Vulkan keeps push constants across pipelines whose layouts have the same push-constant range (ours are all
	// [0, size)), and leaves them undefined otherwise.
	if n := pl.layout.pushSize; n != p.pushSize || p.pushSet == nil {
		p.pushSize, p.pushSet = n, make([]bool, n/4)
	}
}

// SetBindGroup binds g as @group(index) for the following dispatches.
func (p *ComputePass) SetBindGroup(index uint32, g *BindGroup) {
	if !p.usable("SetBindGroup") {
		return
	}
	if g == nil || g.d != p.e.d || index >= p.e.d.limits.MaxBindGroups {
		p.e.fail(errorf(ErrBadUsage, "SetBindGroup(%d): group is nil, from another device, or index too large", index))
		return
	}
	if !p.e.hold(g) {
		return
	}
	for uint32(len(p.groups)) <= index {
		p.groups = append(p.groups, nil)
		p.dirty = append(p.dirty, false)
	}
	p.groups[index], p.dirty[index] = g, true
}

// SetPushConstants sets push constant bytes at offset (multiples of 4) for the following dispatches; the current
// pipeline's layout must declare them. Bytes not set since the pass began, or since SetPipeline changed the
// push-constant size, are zero.
func (p *ComputePass) SetPushConstants(offset uint32, data []byte) {
	e := p.e
	if !p.usable("SetPushConstants") {
		return
	}
	if p.pipeline == nil {
		e.fail(errorf(ErrBadUsage, "SetPushConstants before SetPipeline"))
		return
	}
	if offset%4 != 0 || len(data)%4 != 0 || uint64(offset)+uint64(len(data)) > uint64(p.pipeline.layout.pushSize) {
		e.fail(errorf(ErrBadUsage, "SetPushConstants: range [%d, %d) outside the layout's %d bytes or unaligned", offset, int(offset)+len(data), p.pipeline.layout.pushSize))
		return
	}
	if len(data) > 0 {
		e.pushConstants(p.pipeline.layout.h, offset, data)
		for i := offset / 4; i < (offset+uint32(len(data)))/4; i++ {
			p.pushSet[i] = true
		}
	}
}

// DispatchWorkgroups runs the pipeline on an x*y*z grid of workgroups. As in WebGPU, the bind groups the
// pipeline's layout uses may not alias: a storage (read_write) binding of one group must not share bytes with a
// binding of another group in the same buffer (CreateBindGroup checks a group's own bindings).
func (p *ComputePass) DispatchWorkgroups(x, y, z uint32) {
	e := p.e
	if !p.usable("DispatchWorkgroups") {
		return
	}
	pl := p.pipeline
	if pl == nil {
		e.fail(errorf(ErrBadUsage, "DispatchWorkgroups before SetPipeline"))
		return
	}
	if m := e.d.limits.MaxComputeWorkgroupsPerDimension; x > m || y > m || z > m {
		e.fail(errorf(ErrLimit, "DispatchWorkgroups(%d, %d, %d): limit %d per dimension", x, y, z, m))
		return
	}
	if len(p.groups) < len(pl.layout.groups) {
		e.fail(errorf(ErrBadUsage, "pipeline %q needs %d bind groups, %d set", pl.label, len(pl.layout.groups), len(p.groups)))
		return
	}
	var acc []access
	for i, gl := range pl.layout.groups {
		g := p.groups[i]
		if g == nil || g.layout != gl {
			e.fail(errorf(ErrBadUsage, "pipeline %q: bind group %d missing or of another layout", pl.label, i))
			return
		}
		acc = slices.Grow(acc, len(g.bound))
		for _, b := range g.bound {
			acc = append(acc, b.access)
		}
	}
	if err := pl.checkSizes(p.groups); err != nil {
		e.fail(err)
		return
	}
	if n := len(pl.layout.groups); n > 1 && !slices.Equal(p.unaliased, p.groups[:n]) {
		if err := pl.checkAliasing(p.groups[:n]); err != nil {
			e.fail(err)
			return
		}
		p.unaliased = append(p.unaliased[:0], p.groups[:n]...)
	}
	for _, a := range acc {
		if !e.hold(a.b) { // a buffer of a bind group closed since
			return
		}
	}
	if x == 0 || y == 0 || z == 0 {
		return
	}
	p.zeroUnsetPushConstants()
	e.prepare(vk.PipelineStageComputeShaderBit, acc)
	cb := e.slot.cb
	if p.bound != pl {
		e.d.fn.CmdBindPipeline(cb, vk.PipelineBindPointCompute, pl.h)
		p.bound = pl
		for i := range p.dirty {
			p.dirty[i] = true
		}
	}
	for i := range pl.layout.groups {
		if p.dirty[i] {
			set := p.groups[i].set
			e.d.fn.CmdBindDescriptorSets(cb, vk.PipelineBindPointCompute, pl.layout.h, uint32(i), 1, &set, 0, nil)
			p.dirty[i] = false
		}
	}
	if pl.race != nil && !p.raceDispatch(pl.race, uint64(x)*uint64(y)*uint64(z)) {
		return
	}
	e.d.fn.CmdDispatch(cb, x, y, z)
	e.Dispatches++
}

// zeroUnsetPushConstants records zeros for the push-constant words not set, in runs.
func (p *ComputePass) zeroUnsetPushConstants() {
	set := p.pushSet
	for i := 0; i < len(set); {
		if set[i] {
			i++
			continue
		}
		j := i
		for j < len(set) && !set[j] {
			set[j] = true
			j++
		}
		p.e.pushConstants(p.pipeline.layout.h, uint32(4*i), make([]byte, 4*(j-i)))
		i = j
	}
}

// End finishes the pass.
func (p *ComputePass) End() {
	e := p.e
	if p.ended || !e.inPass {
		e.fail(errorf(ErrBadUsage, "compute pass ended twice"))
		return
	}
	p.ended = true
	e.inPass = false
	if p.ts != nil && e.ok() {
		e.writeTimestamp(p.ts.QuerySet, p.ts.EndOfPassWriteIndex, vk.PipelineStageBottomOfPipeBit)
	}
}

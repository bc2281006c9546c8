package wgpu

import (
	"encoding/binary"
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// The race check (DeviceDescriptor.RaceCheck): every WGSL module is compiled with wgsl.Options.RaceCheck, whose
// shadow and report buffers this file binds at @group(raceGroup) of every pipeline, in a pipeline layout of its
// own (the pipeline's groups, empty ones up to raceGroup, and the race group), compatible with the pipeline's
// layout for its groups and push constants, so that the bind groups and push constants recorded with the
// pipeline's layout stay bound. Before each dispatch the encoder zeroes the shadow, between barriers (each
// race-checked dispatch runs alone): the regions of its workgroups (workgroup memory), then the shadows of the
// read_write storage bindings the pipeline checks, sized by the ranges its bind groups bind; the report buffer
// collects the pipeline's races for Device.Races.

// raceGroup is the bind group the race check takes: WebGPU's last (maxBindGroups is at least 4).
const raceGroup = 3

// raceShadowBytes is the most bytes of shadow a device keeps (less where its storage binding limit is lower).
const raceShadowBytes = 128 << 20

// deviceRace is a race-checking device's shared state.
type deviceRace struct {
	shadow  *Buffer
	layout  *BindGroupLayout // the race group: binding 0 the shadow, 1 the report
	empty   *BindGroupLayout // groups between a pipeline's last and raceGroup
	reports []*raceReport    // every race-checked pipeline's, in creation order
}

// raceReport is one pipeline's report buffer, kept until the device closes.
type raceReport struct {
	pipeline string
	sp       *wgsl.Specialized
	buf      *Buffer
}

// pipelineRace is what a race-checked pipeline binds.
type pipelineRace struct {
	layout      vk.PipelineLayout // destroyed with the pipeline
	group       *BindGroup
	regionBytes uint64             // shadow bytes per workgroup
	bindings    []wgsl.RaceBinding // the storage bindings it checks, whose shadows follow the workgroups'
}

// Race is a data race on workgroup or storage memory that a pipeline of a race-checking device found.
type Race struct {
	Pipeline string
	*wgsl.Race
}

// Error is "pipeline "label": file:line:col: data race on workgroup memory ..." (or storage memory).
func (r *Race) Error() string { return fmt.Sprintf("pipeline %q: %v", r.Pipeline, r.Race.Error()) }

// startRaceCheck creates the race check's buffers and layouts at device creation.
func (d *Device) startRaceCheck() error {
	size := uint64(raceShadowBytes)
	size = min(size, d.limits.MaxStorageBufferBindingSize)
	if m := d.limits.MaxBufferSize; m != 0 {
		size = min(size, m)
	}
	size &^= 3
	r := &deviceRace{}
	var err error
	if r.shadow, err = d.CreateBuffer(&BufferDescriptor{Label: "race check shadow", Size: size, Usage: BufferUsageStorage | BufferUsageCopyDst}); err != nil {
		return fmt.Errorf("race check: %w", err)
	}
	if r.layout, err = d.CreateBindGroupLayout(&BindGroupLayoutDescriptor{Label: "race check", Entries: []BindGroupLayoutEntry{
		{Binding: 0, Type: BindingStorage}, {Binding: 1, Type: BindingStorage}}}); err != nil {
		return fmt.Errorf("race check: %w", err)
	}
	if r.empty, err = d.CreateBindGroupLayout(&BindGroupLayoutDescriptor{Label: "race check: unused group"}); err != nil {
		return fmt.Errorf("race check: %w", err)
	}
	d.race = r
	return nil
}

// raceOptions is the compiler's race check, on a race-checking device.
func (d *Device) raceOptions() *wgsl.RaceCheck {
	if d.race == nil {
		return nil
	}
	return &wgsl.RaceCheck{Group: raceGroup, ShadowBinding: 0, ReportBinding: 1}
}

// checkRaceGroups refuses a WGSL module that binds the race check's group.
func (d *Device) checkRaceGroups(name string, refl *wgsl.Reflection) error {
	if d.race == nil {
		return nil
	}
	for _, b := range refl.Bindings {
		if b.Group >= raceGroup {
			return errorf(ErrLimit, "%s: @group(%d) @binding(%d): the race check takes @group(%d) and up", name, b.Group, b.Binding, raceGroup)
		}
	}
	return nil
}

// newPipelineRace makes a race-checked pipeline's report, race group and layout.
func (d *Device) newPipelineRace(label string, layout *PipelineLayout, sp *wgsl.Specialized) (*pipelineRace, error) {
	r := d.race
	if len(layout.groups) > raceGroup {
		return nil, errorf(ErrLimit, "pipeline %q: %d bind groups; the race check takes @group(%d)", label, len(layout.groups), raceGroup)
	}
	rep, err := d.CreateBuffer(&BufferDescriptor{Label: label + " race report", Size: 4 * wgsl.RaceReportWords,
		Usage: BufferUsageStorage | BufferUsageCopySrc})
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: race check: %w", label, err)
	}
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Label: label + " race check", Layout: r.layout,
		Entries: []BindGroupEntry{{Binding: 0, Buffer: r.shadow}, {Binding: 1, Buffer: rep}}})
	if err != nil {
		return nil, fmt.Errorf("pipeline %q: race check: %w", label, err)
	}
	var ar vk.Arena
	defer ar.Release()
	sets := vk.NewSlice[vk.DescriptorSetLayout](&ar, raceGroup+1)
	for i := range sets {
		switch {
		case i < len(layout.groups):
			sets[i] = layout.groups[i].h
		case i < raceGroup:
			sets[i] = r.empty.h
		default:
			sets[i] = r.layout.h
		}
	}
	ci := pipelineLayoutInfo(&ar, sets, layout.pushSize) // the same push constants: compatible with layout
	pr := &pipelineRace{group: g, regionBytes: 4 * sp.RaceShadowWords(), bindings: sp.RaceBindings()}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	if err := check("vkCreatePipelineLayout", d.fn.CreatePipelineLayout(d.h, ci, nil, &pr.layout)); err != nil {
		return nil, fmt.Errorf("pipeline %q: race check: %w", label, d.noteLost(err))
	}
	r.reports = append(r.reports, &raceReport{pipeline: label, sp: sp, buf: rep})
	return pr, nil
}

// raceDispatch records what a race-checked dispatch of n workgroups needs before it: the shadow of its
// workgroups and of the storage bindings it checks zeroed, after every earlier command and before this one, and the
// race group bound. It fails the encoder where the shadow is too small or the dispatch too large for the check.
func (p *ComputePass) raceDispatch(pr *pipelineRace, n uint64) bool {
	e := p.e
	shadow := e.d.race.shadow
	label := p.pipeline.label
	if len(pr.bindings) > 0 && n > wgsl.RaceMaxWorkgroups {
		e.fail(errorf(ErrLimit, "pipeline %q: the race check of storage memory counts %d workgroups, not %d: dispatch fewer",
			label, wgsl.RaceMaxWorkgroups, n))
		return false
	}
	need := n * pr.regionBytes
	if n != 0 && need/n != pr.regionBytes || need > shadow.size {
		e.fail(errorf(ErrLimit, "pipeline %q: the race check's shadow of %d workgroups takes %d bytes, above its %d: dispatch fewer",
			label, n, need, shadow.size))
		return false
	}
	for _, b := range pr.bindings {
		bound, ok := p.groups[b.Group].size[b.Binding]
		if !ok {
			e.fail(errorf(ErrBadUsage, "pipeline %q: race check: bind group %d has no binding %d (%s)", label, b.Group, b.Binding, b.Name))
			return false
		}
		need += 4 * b.ShadowWords(bound)
		if need > shadow.size {
			e.fail(errorf(ErrLimit, "pipeline %q: the race check's shadow of %d workgroups and storage up to @group(%d) @binding(%d) %s "+
				"(%d bytes bound) takes %d bytes, above its %d: bind less", label, n, b.Group, b.Binding, b.Name, bound, need, shadow.size))
			return false
		}
	}
	cb := e.slot.cb
	e.memoryBarrier(stagesGPU, vk.PipelineStageTransferBit)
	if need > 0 {
		e.d.fn.CmdFillBuffer(cb, shadow.h, 0, need, 0)
	}
	e.memoryBarrier(stagesGPU, vk.PipelineStageComputeShaderBit)
	set := pr.group.set
	e.d.fn.CmdBindDescriptorSets(cb, vk.PipelineBindPointCompute, pr.layout, raceGroup, 1, &set, 0, nil)
	return true
}

// Races reads what the race check (DeviceDescriptor.RaceCheck) found: for every pipeline created since the device
// was, in creation order, the first data race on workgroup or storage memory its dispatches met and how many there
// were, after all work submitted so far. It waits for the GPU. A device without the race check returns nothing.
func (d *Device) Races() ([]*Race, error) {
	if d.race == nil {
		return nil, nil
	}
	d.mu.Lock()
	reports := append([]*raceReport(nil), d.race.reports...)
	d.mu.Unlock()
	var out []*Race
	buf := make([]byte, 4*wgsl.RaceReportWords)
	words := make([]uint32, wgsl.RaceReportWords)
	for _, r := range reports {
		if err := d.queue.ReadBuffer(r.buf, 0, buf); err != nil {
			return out, fmt.Errorf("race report of pipeline %q: %w", r.pipeline, err)
		}
		for i := range words {
			words[i] = binary.LittleEndian.Uint32(buf[4*i:])
		}
		race, err := r.sp.DecodeRace(words)
		if err != nil {
			return out, fmt.Errorf("race report of pipeline %q: %w", r.pipeline, err)
		}
		if race != nil {
			out = append(out, &Race{Pipeline: r.pipeline, Race: race})
		}
	}
	return out, nil
}

package wgpu

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// BindGroupEntry binds a buffer range to a binding.
type BindGroupEntry struct {
	Binding uint32
	Buffer  *Buffer
	Offset  uint64 // a multiple of the min storage/uniform offset alignment
	// Size is the bytes bound, 0 for the rest of the buffer: a multiple of 4, and at least the layout's
	// MinBindingSize and, when the layout leaves that 0, the minimum binding size of the shader variable of each
	// pipeline dispatched with the group (WGSL modules: fixed-size types' size; a runtime-sized array counts one
	// element). A shader clamps indices into a runtime-sized array against the bound length, which a smaller
	// range would make 0.
	Size uint64
}

// BindGroupDescriptor configures CreateBindGroup.
type BindGroupDescriptor struct {
	Label   string
	Layout  *BindGroupLayout
	Entries []BindGroupEntry // exactly one per layout entry
}

// BindGroup is a set of buffer ranges bound together (a descriptor set).
type BindGroup struct {
	d      *Device
	set    vk.DescriptorSet
	pool   vk.DescriptorPool
	label  string
	layout *BindGroupLayout
	bound  []boundBuffer     // what a dispatch using the group reads and writes, by binding number
	size   map[uint32]uint64 // bytes bound, by binding
}

// boundBuffer is one binding of a bind group: its number and the buffer range it binds (written where the layout
// has a storage binding).
type boundBuffer struct {
	binding uint32
	access
}

// Descriptor pools hold this many sets, and descriptors of each type.
const (
	poolSets        = 256
	poolDescriptors = 1024
)

// CreateBindGroup binds buffers to the bindings of a layout.
//
// No storage binding (read_write) may overlap another binding of the group in the same buffer: WebGPU refuses
// such writable aliasing in every dispatch, which binds the whole group, so it is refused here already. Bindings
// of different groups are checked by each dispatch that binds them together.
func (d *Device) CreateBindGroup(desc *BindGroupDescriptor) (*BindGroup, error) {
	l := desc.Layout
	if l == nil || l.d != d {
		return nil, errorf(ErrBadUsage, "bind group %q: layout is nil or from another device", desc.Label)
	}
	if len(desc.Entries) != len(l.entries) {
		return nil, errorf(ErrBadUsage, "bind group %q: %d entries for a layout of %d", desc.Label, len(desc.Entries), len(l.entries))
	}
	g := &BindGroup{d: d, label: desc.Label, layout: l, size: make(map[uint32]uint64, len(desc.Entries))}
	var ar vk.Arena
	defer ar.Release()
	infos := vk.NewSlice[vk.DescriptorBufferInfo](&ar, len(desc.Entries))
	writes := vk.NewSlice[vk.WriteDescriptorSet](&ar, len(desc.Entries))
	seen := map[uint32]bool{}
	for i, e := range desc.Entries {
		t, ok := l.entries[e.Binding]
		if !ok || seen[e.Binding] {
			return nil, errorf(ErrBadUsage, "bind group %q: binding %d not in the layout or given twice", desc.Label, e.Binding)
		}
		seen[e.Binding] = true
		b := e.Buffer
		if b == nil || b.d != d {
			return nil, errorf(ErrBadUsage, "bind group %q binding %d: buffer is nil or from another device", desc.Label, e.Binding)
		}
		size := e.Size
		if size == 0 && e.Offset <= b.size {
			size = b.size - e.Offset
		}
		if size < max(t.minSize, 1) {
			return nil, errorf(ErrBadUsage, "bind group %q binding %d%s: %d bytes bound (buffer %q at offset %d), below the minimum binding size %d",
				desc.Label, e.Binding, whatSuffix(t.what), size, b.label, e.Offset, max(t.minSize, 1))
		}
		if err := checkRange(fmt.Sprintf("bind group %q binding %d: buffer", desc.Label, e.Binding), b, e.Offset, size); err != nil {
			return nil, err
		}
		align, maxRange, need := uint64(d.limits.MinStorageBufferOffsetAlignment), d.limits.MaxStorageBufferBindingSize, BufferUsageStorage
		if t.typ == BindingUniform {
			align, maxRange, need = uint64(d.limits.MinUniformBufferOffsetAlignment), 64<<10, BufferUsageUniform
		}
		switch {
		case b.usage&need == 0:
			return nil, errorf(ErrBadUsage, "bind group %q binding %d: buffer %q lacks the usage the binding needs", desc.Label, e.Binding, b.label)
		case align > 0 && e.Offset%align != 0:
			return nil, errorf(ErrBadUsage, "bind group %q binding %d: offset %d not a multiple of %d", desc.Label, e.Binding, e.Offset, align)
		case size > maxRange:
			return nil, errorf(ErrLimit, "bind group %q binding %d: %d bytes exceed the binding limit %d", desc.Label, e.Binding, size, maxRange)
		}
		infos[i] = vk.DescriptorBufferInfo{Buffer: b.h, Offset: e.Offset, Range: size}
		w := &writes[i]
		w.DstBinding, w.DescriptorCount, w.DescriptorType, w.PBufferInfo = e.Binding, 1, descriptorType(t.typ), &infos[i]
		g.bound = append(g.bound, boundBuffer{e.Binding, access{b, e.Offset, size, t.typ == BindingStorage}})
		g.size[e.Binding] = size
	}
	slices.SortFunc(g.bound, func(x, y boundBuffer) int { return cmp.Compare(x.binding, y.binding) })
	for i, x := range g.bound {
		for _, y := range g.bound[i+1:] {
			if aliases(x.access, y.access) {
				return nil, errorf(ErrBadUsage, "bind group %q: %s", desc.Label, aliasing(g.describeBinding(x), g.describeBinding(y), x.access, y.access))
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.usable(); err != nil {
		return nil, err
	}
	for _, e := range desc.Entries { // a closed buffer's handle may be destroyed: it must not reach the driver
		if _, ok := d.live[e.Buffer]; !ok {
			return nil, fmt.Errorf("bind group %q binding %d: %w: %s", desc.Label, e.Binding, ErrClosed, e.Buffer.describe())
		}
	}
	if err := d.pin(l); err != nil { // the group's layout lives as long as it does
		return nil, fmt.Errorf("bind group %q: %w", desc.Label, err)
	}
	if err := d.allocSet(&ar, g); err != nil {
		d.unpin(l)
		return nil, fmt.Errorf("bind group %q: %w", desc.Label, err)
	}
	for i := range writes {
		writes[i].DstSet = g.set
	}
	if len(writes) > 0 {
		d.fn.UpdateDescriptorSets(d.h, uint32(len(writes)), &writes[0], 0, nil)
	}
	d.live[g] = struct{}{}
	return g, nil
}

// whatSuffix is " (what)", or "" for no what.
func whatSuffix(what string) string {
	if what == "" {
		return ""
	}
	return " (" + what + ")"
}

// checkSizes checks that g binds at least what the pipeline's shader needs where the layout's MinBindingSize left
// that to the dispatch.
func (p *ComputePipeline) checkSizes(groups []*BindGroup) error {
	for _, c := range p.late {
		g := groups[c.group]
		if n := g.size[c.binding]; n < c.min {
			return errorf(ErrBadUsage, "pipeline %q: bind group %d (%q) binding %d (%s): %d bytes bound, below the minimum binding size %d",
				p.label, c.group, g.label, c.binding, c.what, n, c.min)
		}
	}
	return nil
}

// aliases reports whether x and y share bytes of one buffer and at least one of them is writable: WebGPU's
// writable aliasing, which no dispatch may bind.
func aliases(x, y access) bool {
	return x.b == y.b && (x.write || y.write) && x.off < y.off+y.size && y.off < x.off+x.size
}

// aliasing is the message for bindings x and y, named nx and ny, that alias (aliases).
func aliasing(nx, ny string, x, y access) string {
	return fmt.Sprintf("%s overlaps %s in buffer %q, bytes [%d, %d): a storage (read_write) binding may not share bytes with another binding of its buffer in one dispatch",
		nx, ny, x.b.label, max(x.off, y.off), min(x.off+x.size, y.off+y.size))
}

// describeBinding names b, one of g's bindings, for messages: "binding 1 (x: array<f32>), storage [0, 1024)", its
// WGSL variable where the layout knows it, its type and the byte range bound.
func (g *BindGroup) describeBinding(b boundBuffer) string {
	lb := g.layout.entries[b.binding]
	return fmt.Sprintf("binding %d%s, %s [%d, %d)", b.binding, whatSuffix(lb.what), lb.typ, b.off, b.off+b.size)
}

// checkAliasing refuses groups, bound together for a dispatch of p, of which two bind aliasing ranges (aliases).
// A group's own bindings were checked by CreateBindGroup.
func (p *ComputePipeline) checkAliasing(groups []*BindGroup) error {
	for i, gx := range groups {
		for j := i + 1; j < len(groups); j++ {
			gy := groups[j]
			for _, x := range gx.bound {
				for _, y := range gy.bound {
					if aliases(x.access, y.access) {
						nx := fmt.Sprintf("bind group %d (%q) %s", i, gx.label, gx.describeBinding(x))
						ny := fmt.Sprintf("bind group %d (%q) %s", j, gy.label, gy.describeBinding(y))
						return errorf(ErrBadUsage, "pipeline %q: %s", p.label, aliasing(nx, ny, x.access, y.access))
					}
				}
			}
		}
	}
	return nil
}

// allocSet allocates g's descriptor set from the first pool with room, creating a pool when all are full.
func (d *Device) allocSet(ar *vk.Arena, g *BindGroup) error {
	ai := vk.New[vk.DescriptorSetAllocateInfo](ar)
	layouts := vk.NewSlice[vk.DescriptorSetLayout](ar, 1)
	layouts[0] = g.layout.h
	ai.DescriptorSetCount, ai.PSetLayouts = 1, &layouts[0]
	for i := len(d.descPools) - 1; i >= 0; i-- {
		ai.DescriptorPool = d.descPools[i]
		r := d.fn.AllocateDescriptorSets(d.h, ai, &g.set)
		if r == vk.Success {
			g.pool = d.descPools[i]
			return nil
		}
		if r != vk.ErrorOutOfPoolMemory && r != vk.ErrorFragmentedPool {
			return d.noteLost(check("vkAllocateDescriptorSets", r))
		}
	}
	sizes := vk.NewSlice[vk.DescriptorPoolSize](ar, 2)
	sizes[0] = vk.DescriptorPoolSize{Type: vk.DescriptorTypeStorageBuffer, DescriptorCount: poolDescriptors}
	sizes[1] = vk.DescriptorPoolSize{Type: vk.DescriptorTypeUniformBuffer, DescriptorCount: poolDescriptors / 4}
	ci := vk.New[vk.DescriptorPoolCreateInfo](ar)
	ci.Flags, ci.MaxSets, ci.PoolSizeCount, ci.PPoolSizes = vk.DescriptorPoolCreateFreeDescriptorSetBit, poolSets, 2, &sizes[0]
	var pool vk.DescriptorPool
	if err := check("vkCreateDescriptorPool", d.fn.CreateDescriptorPool(d.h, ci, nil, &pool)); err != nil {
		return d.noteLost(err)
	}
	d.descPools = append(d.descPools, pool)
	ai.DescriptorPool = pool
	if err := check("vkAllocateDescriptorSets", d.fn.AllocateDescriptorSets(d.h, ai, &g.set)); err != nil {
		return d.noteLost(err)
	}
	g.pool = pool
	return nil
}

// Close releases the bind group. Command buffers already recorded with it must have finished executing.
func (g *BindGroup) Close() error { return g.d.release(g) }

func (g *BindGroup) describe() string { return fmt.Sprintf("bind group %q", g.label) }

func (g *BindGroup) destroy() {
	if !g.d.closed { // Device.Close destroys the pools, which frees the sets
		g.d.fn.FreeDescriptorSets(g.d.h, g.pool, 1, &g.set)
	}
	g.d.unpin(g.layout)
}

package wgpu

import (
	"fmt"
	"testing"
)

// aliasOneGroupWGSL computes out[i] = x[i] + w[i] * k.x with all four bindings in one group.
const aliasOneGroupWGSL = `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> k: vec4<f32>;
@compute @workgroup_size(1)
fn main() {
	let n = min(arrayLength(&out), min(arrayLength(&x), arrayLength(&w)));
	for (var i = 0u; i < n; i++) {
		out[i] = x[i] + w[i] * k.x;
	}
}
`

// aliasTwoGroupsWGSL computes out[i] = x[i] + w[i], its inputs in group 0 and its output in group 1.
const aliasTwoGroupsWGSL = `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(1) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1)
fn main() {
	let n = min(arrayLength(&out), min(arrayLength(&x), arrayLength(&w)));
	for (var i = 0u; i < n; i++) {
		out[i] = x[i] + w[i];
	}
}
`

// aliasEnv is a device with buffer "acts" of 8 units, each unit a multiple of the storage and uniform offset
// alignments, filled with f[i] = i (as f32) by reset.
type aliasEnv struct {
	d    *Device
	acts *Buffer
	unit uint64
}

func newAliasEnv(t *testing.T) *aliasEnv {
	env := newEnv(t)
	d := env.dev
	unit := uint64(max(d.limits.MinStorageBufferOffsetAlignment, d.limits.MinUniformBufferOffsetAlignment, 64))
	acts, err := d.CreateBuffer(&BufferDescriptor{Label: "acts", Size: 8 * unit, Usage: storageRW | BufferUsageUniform})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acts.Close() })
	return &aliasEnv{d: d, acts: acts, unit: unit}
}

// initial is the f32 at float index i of acts after reset.
func (a *aliasEnv) initial(i uint64) float32 { return float32(i) }

func (a *aliasEnv) reset(t *testing.T) {
	t.Helper()
	f := make([]float32, a.acts.Size()/4)
	for i := range f {
		f[i] = a.initial(uint64(i))
	}
	if err := a.d.Queue().WriteBuffer(a.acts, 0, f32Bytes(f)); err != nil {
		t.Fatal(err)
	}
}

// span is a binding's range in units of acts: Size 0 binds the rest of the buffer.
func (a *aliasEnv) span(binding uint32, off, size uint64) BindGroupEntry {
	return BindGroupEntry{Binding: binding, Buffer: a.acts, Offset: off * a.unit, Size: size * a.unit}
}

// bytes is "[lo, hi)" of a range given in units of acts.
func (a *aliasEnv) bytes(lo, hi uint64) string { return fmt.Sprintf("[%d, %d)", lo*a.unit, hi*a.unit) }

// check runs p with groups and checks, in acts, that out (the range of entry out) holds x[i] + w[i] * scale for
// the elements all three bind, and everything else its initial value.
func (a *aliasEnv) check(t *testing.T, name string, p *ComputePipeline, groups []*BindGroup, x, w, out BindGroupEntry, scale float32) {
	t.Helper()
	a.reset(t)
	run(t, a.d, func(c *ComputePass) {
		c.SetPipeline(p)
		for i, g := range groups {
			c.SetBindGroup(uint32(i), g)
		}
		c.DispatchWorkgroups(1, 1, 1)
	})
	length := func(e BindGroupEntry) uint64 {
		if e.Size == 0 {
			return (a.acts.Size() - e.Offset) / 4
		}
		return e.Size / 4
	}
	n := min(length(out), length(x), length(w))
	got := readF32(t, a.d, a.acts)
	bad := 0
	for i := range uint64(len(got)) {
		want := a.initial(i)
		if j := i - out.Offset/4; i >= out.Offset/4 && j < n {
			want = a.initial(x.Offset/4+j) + a.initial(w.Offset/4+j)*scale
		}
		if got[i] != want && bad < 5 {
			t.Errorf("%s: acts[%d] = %v, want %v", name, i, got[i], want)
			bad++
		}
	}
}

// TestAliasingOneGroup: CreateBindGroup refuses a group in which a storage (read_write) binding shares bytes of
// its buffer with another binding, read-only storage or uniform, partly or wholly, also where a binding of size 0
// binds the rest of the buffer; the error names both bindings with their WGSL variables, types and ranges, the
// buffer and the bytes shared. Read-only bindings that overlap, touching ranges and disjoint ranges of one buffer
// are accepted and compute the right result.
func TestAliasingOneGroup(t *testing.T) {
	a := newAliasEnv(t)
	d := a.d
	p := autoPipeline(t, d, "alias1", aliasOneGroupWGSL)
	bgl := groupLayout(t, p, 0)
	k := func(off uint64) BindGroupEntry {
		return BindGroupEntry{Binding: 3, Buffer: a.acts, Offset: off * a.unit, Size: 16}
	}
	kEnd := func(off uint64) uint64 { return off*a.unit + 16 }
	for _, c := range []struct {
		name      string
		x, w, out BindGroupEntry
		k         BindGroupEntry
		want      []string // in the error; none: accepted
	}{
		{name: "out is x", x: a.span(0, 0, 1), w: a.span(1, 2, 1), out: a.span(2, 0, 1), k: k(6),
			want: []string{`bind group "g": binding 0 (x: array<f32>), read-only-storage ` + a.bytes(0, 1) +
				` overlaps binding 2 (out: array<f32>), storage ` + a.bytes(0, 1) + ` in buffer "acts", bytes ` + a.bytes(0, 1)}},
		{name: "out partly over w", x: a.span(0, 0, 1), w: a.span(1, 1, 2), out: a.span(2, 2, 2), k: k(6),
			want: []string{`binding 1 (w: array<f32>), read-only-storage ` + a.bytes(1, 3) + ` overlaps binding 2 (out: array<f32>), storage ` +
				a.bytes(2, 4) + ` in buffer "acts", bytes ` + a.bytes(2, 3)}},
		{name: "uniform inside out", x: a.span(0, 0, 1), w: a.span(1, 1, 1), out: a.span(2, 3, 1), k: k(3),
			want: []string{`binding 2 (out: array<f32>), storage ` + a.bytes(3, 4) + ` overlaps binding 3 (k: vec4<f32>), uniform [` +
				fmt.Sprint(3*a.unit) + ", " + fmt.Sprint(kEnd(3)) + `) in buffer "acts", bytes [` + fmt.Sprint(3*a.unit) + ", " + fmt.Sprint(kEnd(3)) + ")"}},
		{name: "out the whole buffer", x: a.span(0, 6, 1), w: BindGroupEntry{Binding: 1, Buffer: newBuffer(t, d, a.unit, storageRW)}, out: a.span(2, 0, 0), k: k(7),
			want: []string{`binding 0 (x: array<f32>), read-only-storage ` + a.bytes(6, 7) + ` overlaps binding 2 (out: array<f32>), storage ` +
				a.bytes(0, 8) + ` in buffer "acts", bytes ` + a.bytes(6, 7)}},
		{name: "out the rest of the buffer", x: a.span(0, 0, 1), w: a.span(1, 7, 1), out: a.span(2, 6, 0), k: k(1),
			want: []string{`binding 1 (w: array<f32>), read-only-storage ` + a.bytes(7, 8) + ` overlaps binding 2 (out: array<f32>), storage ` +
				a.bytes(6, 8) + ` in buffer "acts", bytes ` + a.bytes(7, 8)}},

		{name: "x is w, k inside them", x: a.span(0, 0, 2), w: a.span(1, 0, 2), out: a.span(2, 4, 1), k: k(1)},
		{name: "out touches x and w", x: a.span(0, 0, 1), w: a.span(1, 2, 1), out: a.span(2, 1, 1), k: k(3)},
		{name: "disjoint ranges", x: a.span(0, 0, 1), w: a.span(1, 2, 1), out: a.span(2, 4, 1), k: k(6)},
		{name: "out the rest of the buffer after x and w", x: a.span(0, 4, 1), w: a.span(1, 5, 1), out: a.span(2, 6, 0), k: k(0)},
		{name: "x and w the whole buffer, out another", x: a.span(0, 0, 0), w: a.span(1, 0, 0),
			out: BindGroupEntry{Binding: 2, Buffer: newBuffer(t, d, a.unit, storageRW)}, k: k(0)},
	} {
		g, err := d.CreateBindGroup(&BindGroupDescriptor{Label: "g", Layout: bgl, Entries: []BindGroupEntry{c.out, c.k, c.w, c.x}})
		if len(c.want) > 0 {
			if err == nil {
				g.Close()
			}
			wantErr(t, c.name, err, c.want...)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.out.Buffer == a.acts {
			scale := a.initial(c.k.Offset / 4)
			a.check(t, c.name, p, []*BindGroup{g}, c.x, c.w, c.out, scale)
		} else {
			run(t, d, func(cp *ComputePass) {
				cp.SetPipeline(p)
				cp.SetBindGroup(0, g)
				cp.DispatchWorkgroups(1, 1, 1)
			})
		}
		g.Close()
	}
}

// TestAliasingAcrossGroups: a dispatch whose bind groups alias across groups (a storage binding of one sharing
// bytes of its buffer with a binding of another) is refused, its error (at Finish) naming the pipeline and both
// bindings by group, bind group label, WGSL variable, type and range, the buffer and the bytes shared; also after
// a dispatch of the same pipeline with groups that do not alias (the check's cache), and where one group is bound
// at two indices of an explicit layout (no WGSL names). Read-only bindings that overlap and touching ranges run.
func TestAliasingAcrossGroups(t *testing.T) {
	a := newAliasEnv(t)
	d := a.d
	p := autoPipeline(t, d, "alias2", aliasTwoGroupsWGSL)
	group := func(index int, label string, es ...BindGroupEntry) *BindGroup {
		t.Helper()
		g, err := d.CreateBindGroup(&BindGroupDescriptor{Label: label, Layout: groupLayout(t, p, index), Entries: es})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	dispatch := func(groups ...[]*BindGroup) error {
		_, err := record(t, d, func(e *CommandEncoder) {
			c := e.BeginComputePass(nil)
			c.SetPipeline(p)
			for _, gs := range groups {
				for i, g := range gs {
					c.SetBindGroup(uint32(i), g)
				}
				c.DispatchWorkgroups(1, 1, 1)
			}
			c.End()
		})
		return err
	}
	other := newBuffer(t, d, a.unit, storageRW)

	xw := []BindGroupEntry{a.span(0, 0, 1), a.span(1, 0, 1)} // x and w the same range: read-only, accepted
	in := group(0, "in", xw...)
	outOverX := group(1, "out over x", a.span(0, 0, 1))
	err := dispatch([]*BindGroup{in, outOverX})
	wantErr(t, "out over x", err, `pipeline "alias2": bind group 0 ("in") binding 0 (x: array<f32>), read-only-storage `+a.bytes(0, 1)+
		` overlaps bind group 1 ("out over x") binding 0 (out: array<f32>), storage `+a.bytes(0, 1)+` in buffer "acts", bytes `+a.bytes(0, 1))

	outWhole := group(1, "out whole", a.span(0, 0, 0))
	inW := group(0, "in w", BindGroupEntry{Binding: 0, Buffer: other}, a.span(1, 3, 1))
	err = dispatch([]*BindGroup{inW, outWhole})
	wantErr(t, "out the whole buffer", err, `bind group 0 ("in w") binding 1 (w: array<f32>), read-only-storage `+a.bytes(3, 4)+
		` overlaps bind group 1 ("out whole") binding 0 (out: array<f32>), storage `+a.bytes(0, 8)+` in buffer "acts", bytes `+a.bytes(3, 4))

	outAfter := group(1, "out after", a.span(0, 1, 1)) // touches x and w
	err = dispatch([]*BindGroup{in, outAfter}, []*BindGroup{in, outAfter}, []*BindGroup{in, outOverX})
	wantErr(t, "out over x after a dispatch that does not alias", err, `bind group 1 ("out over x") binding 0 (out: array<f32>)`)

	a.check(t, "out touches x and w", p, []*BindGroup{in, outAfter}, xw[0], xw[1], a.span(0, 1, 1), 1)
	a.check(t, "out the rest of the buffer after x and w", p, []*BindGroup{in, group(1, "out rest", a.span(0, 1, 0))},
		xw[0], xw[1], a.span(0, 1, 0), 1)

	// One group at two indices: its storage binding aliases itself.
	twice := wgslModule(t, d, "twice.wgsl", `
@group(0) @binding(0) var<storage, read_write> p: array<f32>;
@group(1) @binding(0) var<storage, read_write> q: array<f32>;
@compute @workgroup_size(1)
fn main() { q[1] = p[0]; }
`)
	bgl, err := d.CreateBindGroupLayout(&BindGroupLayoutDescriptor{Label: "rw", Entries: []BindGroupLayoutEntry{{Binding: 0, Type: BindingStorage}}})
	if err != nil {
		t.Fatal(err)
	}
	defer bgl.Close()
	pl, err := d.CreatePipelineLayout(&PipelineLayoutDescriptor{Label: "rw rw", BindGroupLayouts: []*BindGroupLayout{bgl, bgl}})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	p2, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "twice", Layout: pl, Module: twice})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Label: "rw", Layout: bgl, Entries: []BindGroupEntry{a.span(0, 2, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = record(t, d, func(e *CommandEncoder) {
		c := e.BeginComputePass(nil)
		c.SetPipeline(p2)
		c.SetBindGroup(0, g)
		c.SetBindGroup(1, g)
		c.DispatchWorkgroups(1, 1, 1)
		c.End()
	})
	wantErr(t, "one group at two indices", err, `pipeline "twice": bind group 0 ("rw") binding 0, storage `+a.bytes(2, 3)+
		` overlaps bind group 1 ("rw") binding 0, storage `+a.bytes(2, 3)+` in buffer "acts", bytes `+a.bytes(2, 3))
}

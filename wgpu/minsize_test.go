package wgpu

import (
	"errors"
	"strings"
	"testing"
)

// minSizeWGSL has a runtime-sized array, a struct of a fixed header and a runtime-sized array (header 12 bytes,
// data at 16: one element makes 24) and a uniform struct of 32 bytes (a vec4 and a u32, rounded up to 16).
const minSizeWGSL = `
struct Head { n: u32, pad: u32, scale: f32, data: array<vec2<f32>> }
struct P { k: vec4<f32>, n: u32 }
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@group(0) @binding(1) var<storage, read> s: Head;
@group(0) @binding(2) var<uniform> u: P;
@compute @workgroup_size(1)
fn main() { o[0] = s.scale * s.data[u.n].y + u.k.x; }
`

// wantErr checks that err is ErrBadUsage and says each of the parts.
func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if !errors.Is(err, ErrBadUsage) {
		t.Errorf("%s: error %v, want ErrBadUsage", what, err)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not say %q", what, err, p)
		}
	}
}

// TestBindingMinSize: a bind group for an "auto" layout must bind at least each variable's minimum binding size
// (a runtime-sized array counts one element: with fewer bytes arrayLength is 0 and the shader's index clamp
// min(i, arrayLength-1) would let any index through), inside the buffer, at an aligned offset; the error names
// the binding, the variable, the size and the minimum. The sizes exactly at the minimum run.
func TestBindingMinSize(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	p := autoPipeline(t, d, "minsize", minSizeWGSL)
	bgl := groupLayout(t, p, 0)
	const size = 512
	o := newBuffer(t, d, size, storageRW)
	s := newBuffer(t, d, size, storageRW)
	u := newBuffer(t, d, size, BufferUsageUniform|BufferUsageCopyDst)
	group := func(eo, es, eu BindGroupEntry) (*BindGroup, error) {
		eo.Binding, es.Binding, eu.Binding = 0, 1, 2
		eo.Buffer, es.Buffer, eu.Buffer = o, s, u
		return d.CreateBindGroup(&BindGroupDescriptor{Label: "g", Layout: bgl, Entries: []BindGroupEntry{eo, es, eu}})
	}
	ok := [3]BindGroupEntry{{Size: 4}, {Size: 24}, {Size: 32}}
	for _, c := range []struct {
		name  string
		i     int            // the entry changed from ok
		e     BindGroupEntry // its offset and size
		parts []string
	}{
		{"array<f32> bound to 2 bytes", 0, BindGroupEntry{Size: 2},
			[]string{`bind group "g" binding 0 (o: array<f32>): 2 bytes bound (buffer "test" at offset 0), below the minimum binding size 4`}},
		{"struct bound to its header only", 1, BindGroupEntry{Size: 16},
			[]string{`binding 1 (s: Head): 16 bytes bound`, "below the minimum binding size 24"}},
		{"uniform too small", 2, BindGroupEntry{Size: 16},
			[]string{`binding 2 (u: P): 16 bytes bound`, "below the minimum binding size 32"}},
		{"empty range at the buffer's end", 0, BindGroupEntry{Offset: size},
			[]string{"binding 0 (o: array<f32>): 0 bytes bound", "minimum binding size 4"}},
		{"range past the buffer's end", 1, BindGroupEntry{Offset: 256, Size: 512},
			[]string{`binding 1: buffer "test": range [256, 768) outside the buffer's 512 bytes`}},
		{"size not a multiple of 4", 0, BindGroupEntry{Size: 6}, []string{"must be multiples of 4"}},
	} {
		es := ok
		es[c.i] = c.e
		_, err := group(es[0], es[1], es[2])
		wantErr(t, c.name, err, c.parts...)
	}
	if a := d.limits.MinStorageBufferOffsetAlignment; a > 4 {
		_, err := group(BindGroupEntry{Offset: 4, Size: 4}, ok[1], ok[2])
		wantErr(t, "storage offset unaligned", err, "binding 0: offset 4 not a multiple of")
	}
	if a := d.limits.MinUniformBufferOffsetAlignment; a > 4 {
		_, err := group(ok[0], ok[1], BindGroupEntry{Offset: 4, Size: 32})
		wantErr(t, "uniform offset unaligned", err, "binding 2: offset 4 not a multiple of")
	}

	// Exactly the minimums: s.data[0].y * s.scale + u.k.x.
	q := d.Queue()
	if err := q.WriteBuffer(s, 0, append(u32Bytes(1, 0), f32Bytes([]float32{3, 0, 0, 5})...)); err != nil {
		t.Fatal(err)
	}
	if err := q.WriteBuffer(u, 0, append(f32Bytes([]float32{0.5, 0, 0, 0}), u32Bytes(7, 0, 0, 0)...)); err != nil {
		t.Fatal(err)
	}
	g, err := group(ok[0], ok[1], ok[2])
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	run(t, d, func(c *ComputePass) {
		c.SetPipeline(p)
		c.SetBindGroup(0, g)
		c.DispatchWorkgroups(1, 1, 1)
	})
	// u.n = 7 is past s.data's one bound element: clamped to it.
	if got := readF32(t, d, o)[0]; got != 3*5+0.5 {
		t.Errorf("o[0] = %v, want %v", got, 3*5+0.5)
	}
}

// TestBindingMinSizeExplicitLayout: with an explicit layout, pipeline creation checks that the layout has every
// binding the WGSL entry point uses, with a fitting type and a MinBindingSize of 0 or at least the variable's
// minimum; CreateBindGroup checks a set MinBindingSize, and each dispatch checks the bound sizes where the layout
// left MinBindingSize 0.
func TestBindingMinSizeExplicitLayout(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	m := wgslModule(t, d, "minsize.wgsl", minSizeWGSL)
	layout := func(es ...BindGroupLayoutEntry) (*BindGroupLayout, *PipelineLayout) {
		t.Helper()
		bgl, err := d.CreateBindGroupLayout(&BindGroupLayoutDescriptor{Label: "bgl", Entries: es})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bgl.Close() })
		pl, err := d.CreatePipelineLayout(&PipelineLayoutDescriptor{Label: "pl", BindGroupLayouts: []*BindGroupLayout{bgl}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pl.Close() })
		return bgl, pl
	}
	pipeline := func(pl *PipelineLayout) (*ComputePipeline, error) {
		p, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "minsize", Module: m, Layout: pl})
		if err == nil {
			t.Cleanup(func() { p.Close() })
		}
		return p, err
	}
	o, s, u := BindGroupLayoutEntry{Binding: 0, Type: BindingStorage}, BindGroupLayoutEntry{Binding: 1, Type: BindingReadOnlyStorage},
		BindGroupLayoutEntry{Binding: 2, Type: BindingUniform}

	_, pl := layout(o, s)
	_, err := pipeline(pl)
	wantErr(t, "binding missing", err, `pipeline "minsize"`, `layout "pl" lacks @group(0) @binding(2) (u: P)`)
	ro := o
	ro.Type = BindingReadOnlyStorage
	_, pl = layout(ro, s, u)
	_, err = pipeline(pl)
	wantErr(t, "read-only layout for a read_write variable", err, "(o: array<f32>) is a storage binding, the layout's a read-only-storage")
	small := s
	small.MinBindingSize = 8
	_, pl = layout(o, small, u)
	_, err = pipeline(pl)
	wantErr(t, "MinBindingSize below the shader's", err, "(s: Head) needs at least 24 bytes, above the layout's MinBindingSize 8")
	rw := s
	rw.Type = BindingStorage // a read-write binding serves a read-only variable
	_, pl = layout(o, rw, u)
	if _, err = pipeline(pl); err != nil {
		t.Errorf("storage layout for var<storage, read>: %v", err)
	}

	const size = 256
	ob, sb, ub := newBuffer(t, d, size, storageRW), newBuffer(t, d, size, storageRW), newBuffer(t, d, size, BufferUsageUniform)
	entries := func(sSize uint64) []BindGroupEntry {
		return []BindGroupEntry{{0, ob, 0, 4}, {1, sb, 0, sSize}, {2, ub, 0, 32}}
	}

	// A MinBindingSize set in the layout: CreateBindGroup checks it.
	set := s
	set.MinBindingSize = 24
	bgl, pl := layout(o, set, u)
	if _, err := pipeline(pl); err != nil {
		t.Fatal(err)
	}
	_, err = d.CreateBindGroup(&BindGroupDescriptor{Label: "g", Layout: bgl, Entries: entries(16)})
	wantErr(t, "layout's MinBindingSize", err, `bind group "g" binding 1: 16 bytes bound (buffer "test" at offset 0), below the minimum binding size 24`)

	// MinBindingSize 0: the dispatch checks.
	bgl, pl = layout(o, s, u)
	p, err := pipeline(pl)
	if err != nil {
		t.Fatal(err)
	}
	dispatch := func(sSize uint64) error {
		g, err := d.CreateBindGroup(&BindGroupDescriptor{Label: "g", Layout: bgl, Entries: entries(sSize)})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		cb, err := recordDispatch(t, d, p, g, [3]uint32{1, 1, 1})
		if err != nil {
			return err
		}
		defer cb.Close()
		idx, err := d.Queue().Submit(cb)
		if err != nil {
			t.Fatal(err)
		}
		return d.Queue().WaitFor(idx)
	}
	wantErr(t, "dispatch below the shader's minimum", dispatch(16),
		`pipeline "minsize": bind group 0 ("g") binding 1 (s: Head): 16 bytes bound, below the minimum binding size 24`)
	if err := dispatch(24); err != nil {
		t.Errorf("dispatch at the minimum: %v", err)
	}
}

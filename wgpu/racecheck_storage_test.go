package wgpu

import (
	"os"
	"strings"
	"testing"
)

// storageRaceCases are TestRaceCheck's kernels with and without data races on storage buffers: out (binding 0) and
// aux (binding 1), both read_write. Within a workgroup only a storageBarrier orders two invocations' accesses of
// one scalar of storage memory (see wgsl/racecheck_storage.go); between workgroups nothing does.
var storageRaceCases = []raceCase{
	{name: "two workgroups write one element", buffer: "out", across: true,
		body: `out[64u * wg + li] = f32(li); // race
	if li == 0u {
		out[0] = 0.0; // race
	}`,
		kinds: []string{"write after write"}, want: func(li uint32) float32 { return float32(li) }},
	{name: "workgroups read one element that none writes", decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `out[64u * wg + li] = aux[li % 4u] + f32(li);`,
		want: func(li uint32) float32 { return float32(li) }},
	{name: "a workgroup reads what another wrote", buffer: "aux", across: true,
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `if wg == 0u {
		aux[li] = 2.0; // race
	}
	out[64u * wg + li] = aux[li]; // race`,
		kinds: []string{"read after write", "write after read"}, want: func(uint32) float32 { return 2 }},
	{name: "a neighbour's output read after a workgroupBarrier", buffer: "aux",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = f32(li);
	workgroupBarrier();
	out[64u * wg + li] = aux[64u * wg + (li + 1u) % 64u]; // race`,
		kinds: []string{"read after write"}},
	{name: "a neighbour's output read after a storageBarrier",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = f32(li);
	storageBarrier();
	out[64u * wg + li] = aux[64u * wg + (li + 1u) % 64u];`,
		want: func(li uint32) float32 { return float32((li + 1) % 64) }},
	{name: "an invocation's own element read and written in place",
		body: `out[64u * wg + li] = f32(li);
	out[64u * wg + li] = out[64u * wg + li] * 2.0;
	out[64u * wg + li] += 1.0;`,
		want: func(li uint32) float32 { return 2*float32(li) + 1 }},
	{name: "a neighbour's read overwritten without a barrier", buffer: "aux",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = f32(li);
	storageBarrier();
	let v = aux[64u * wg + (li + 1u) % 64u]; // race
	aux[64u * wg + li] = 0.0; // race
	out[64u * wg + li] = v;`,
		kinds: []string{"write after read", "read after write"}},
	// Only a storageBarrier orders these, a write after another's read too (see wgsl/racecheck_storage.go).
	{name: "a neighbour's read overwritten after a workgroupBarrier", buffer: "aux",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = f32(li);
	storageBarrier();
	let v = aux[64u * wg + (li + 1u) % 64u];
	workgroupBarrier();
	aux[64u * wg + li] = 0.0; // race
	out[64u * wg + li] = v + aux[64u * wg + li];`,
		kinds: []string{"write after read"}},
	{name: "a neighbour's read overwritten after a storageBarrier",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = f32(li);
	storageBarrier();
	let v = aux[64u * wg + (li + 1u) % 64u];
	storageBarrier();
	aux[64u * wg + li] = 0.0;
	out[64u * wg + li] = v + aux[64u * wg + li];`,
		want: func(li uint32) float32 { return float32((li + 1) % 64) }},
	{name: "a neighbour's read overwritten after workgroupUniformLoad", buffer: "aux",
		decls: "var<workgroup> x: f32;\n@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = f32(li);
	storageBarrier();
	let v = aux[64u * wg + (li + 1u) % 64u];
	let u = workgroupUniformLoad(&x);
	aux[64u * wg + li] = u; // race
	out[64u * wg + li] = v + aux[64u * wg + li];`,
		kinds: []string{"write after read"}},
	{name: "a storage race after two storageBarriers", buffer: "aux",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<f32>;",
		body: `aux[64u * wg + li] = 1.0;
	storageBarrier();
	aux[64u * wg + li] += 1.0;
	storageBarrier();
	aux[64u * wg + li / 2u] = 0.0; // race
	out[64u * wg + li] = 1.0;`,
		kinds: []string{"write after write"}, interval: 3},
	{name: "storage atomics", decls: "@group(0) @binding(1) var<storage, read_write> n: array<atomic<u32>>;",
		body: `atomicAdd(&n[0], 1u);
	atomicAdd(&n[1 + wg], li);
	storageBarrier();
	out[64u * wg + li] = f32(atomicLoad(&n[1 + wg]));`,
		want: func(uint32) float32 { return 63 * 64 / 2 }},
	{name: "neighbours write the components of one vector", buffer: "aux",
		decls: "@group(0) @binding(1) var<storage, read_write> aux: array<vec2<f32>>;",
		body: `if li % 2u == 0u {
		aux[32u * wg + li / 2u].x = 1.0; // race
	} else {
		aux[32u * wg + li / 2u].y = 2.0; // race
	}
	out[64u * wg + li] = 1.0;`,
		kinds: []string{"write after write"}},
	{name: "whole vectors of a struct's runtime-sized array",
		decls: "struct B { n: u32, v: array<vec2<f32>> }\n@group(0) @binding(1) var<storage, read_write> aux: B;",
		body: `aux.v[32u * wg + li / 2u][li % 2u] = 5.0; // race
	workgroupBarrier();
	out[64u * wg + li] = 1.0;`,
		kinds: []string{"write after write"}, buffer: "aux"},
	{name: "a struct's fixed member written by all", buffer: "aux",
		decls: "struct B { n: u32, v: array<f32> }\n@group(0) @binding(1) var<storage, read_write> aux: B;",
		body: `aux.v[64u * wg + li] = f32(li);
	aux.n = li; // race
	out[64u * wg + li] = aux.v[64u * wg + li];`,
		kinds: []string{"write after write"}},
	{name: "a struct's runtime-sized array, an element each",
		decls: "struct B { n: u32, v: array<f32> }\n@group(0) @binding(1) var<storage, read_write> aux: B;",
		body: `aux.v[64u * wg + li] = f32(li);
	aux.v[64u * wg + li] += 1.0;
	out[64u * wg + li] = aux.v[64u * wg + li];`,
		want: func(li uint32) float32 { return float32(li) + 1 }},
	{name: "a write through a storage pointer parameter", buffer: "out",
		decls: "fn put(p: ptr<storage, f32, read_write>, v: f32) {\n\t*p = v; // race\n}",
		body: `put(&out[64u * wg + li], f32(li));
	put(&out[64u * wg + li / 4u], 1.0);`,
		kinds: []string{"write after write"}},
}

// TestRaceCheckStorageF16: a storage buffer of f16 is shadowed in 2-byte scalars, so neighbours writing the two
// halves of one word do not race and two invocations writing one f16 element do, reported at its element.
func TestRaceCheckStorageF16(t *testing.T) {
	env := newEnvDesc(t, os.Getenv("WGPU_NO_VALIDATION") == "", DeviceDescriptor{RaceCheck: true}, FeatureShaderF16)
	d := env.dev
	for _, tc := range []struct {
		name, body string
		racy       bool
	}{
		{"halves of one word", "h[li] = f16(li);\n\tstorageBarrier();\n\tout[li] = f32(h[li ^ 1u]);", false},
		{"one element", "h[li / 2u] = f16(li);\n\tout[li] = f32(li ^ 1u);", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "enable f16;\n@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n" +
				"@group(0) @binding(1) var<storage, read_write> h: array<f16>;\n" +
				"@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) li: u32) {\n\t" + tc.body + "\n}\n"
			before, err := d.Races()
			if err != nil {
				t.Fatal(err)
			}
			p := wgslPipeline(t, d, wgslModule(t, d, tc.name, src), "main", nil, [3]uint32{64, 1, 1})
			out := newBuffer(t, d, 4*64, BufferUsageStorage|BufferUsageCopySrc)
			got := dispatchBuffers(t, d, p, 1, out, newBuffer(t, d, 2*64, BufferUsageStorage))
			for i, v := range got {
				if w := float32(i ^ 1); v != w {
					t.Fatalf("out[%d] = %v, want %v", i, v, w)
				}
			}
			races, err := d.Races()
			if err != nil {
				t.Fatal(err)
			}
			races = races[len(before):]
			switch {
			case !tc.racy && len(races) != 0:
				t.Errorf("races reported: %v", races)
			case tc.racy && len(races) != 1:
				t.Errorf("%d races reported, want 1: %v", len(races), races)
			case tc.racy:
				r := races[0]
				t.Log(r)
				if r.Kind != "write after write" || r.Var != "h" || r.Binding == nil || r.Binding.Unit != 2 || r.Scalar >= 32 ||
					r.Invocation/2 != r.Scalar || r.Other/2 != r.Scalar || r.At.Line != 6 {
					t.Errorf("reported %v; want two invocations writing element li/2 of h at line 6", r)
				}
			}
		})
	}
}

// TestRaceCheckStorageLimits: the storage shadow is sized by the range bound, not the buffer; a dispatch whose
// storage shadow exceeds the device's, or of more workgroups than the check's tags hold, is refused naming it.
func TestRaceCheckStorageLimits(t *testing.T) {
	env := newEnvDesc(t, os.Getenv("WGPU_NO_VALIDATION") == "", DeviceDescriptor{RaceCheck: true})
	d := env.dev
	m := wgslModule(t, d, "wide", `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(1) fn main(@builtin(workgroup_index) wg: u32) { out[wg % 4u] = 1.0; }`)
	p := wgslPipeline(t, d, m, "main", nil, [3]uint32{1, 1, 1})
	bgl, err := p.GetBindGroupLayout(0)
	if err != nil {
		t.Fatal(err)
	}
	big := newBuffer(t, d, 32<<20, BufferUsageStorage) // 192 MiB of shadow, bound whole
	for _, tc := range []struct {
		name   string
		size   uint64 // bytes bound
		groups [3]uint32
		want   string // in the error; "" for none
	}{
		{"a small range of a large buffer", 16, [3]uint32{4, 1, 1}, ""},
		{"a large range", 0, [3]uint32{1, 1, 1}, "@group(0) @binding(0) out"},
		{"too many workgroups", 16, [3]uint32{1 << 11, 1 << 10, 1}, "workgroups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: big, Size: tc.size}}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			cb, err := recordDispatch(t, d, p, g, tc.groups)
			if tc.want != "" {
				isErr(t, err, ErrLimit)
				if err != nil && (!strings.Contains(err.Error(), "race check") || !strings.Contains(err.Error(), tc.want)) {
					t.Errorf("error %q does not name the race check and %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			idx, err := d.Queue().Submit(cb)
			if err == nil {
				err = d.Queue().WaitFor(idx)
			}
			if err != nil {
				t.Fatal(err)
			}
			if races, err := d.Races(); err != nil || len(races) != 0 {
				t.Errorf("races %v, %v", races, err)
			}
		})
	}
}

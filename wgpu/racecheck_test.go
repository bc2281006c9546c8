package wgpu

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// raceCase is a kernel of 64 invocations whose out[64*workgroup + invocation] is want(invocation), and the races
// it has: none, or one whose first report is of one of kinds, at a line marked "// race".
type raceCase struct {
	name  string
	body  string                  // main's body; li is local_invocation_index, wg workgroup_id.x
	decls string                  // may declare a read_write storage buffer "aux" at @group(0) @binding(1), of 64 words a workgroup and 4 more
	want  func(li uint32) float32 // nil: racy, the output is not checked
	kinds []string
	// buffer is the storage variable the race is on ("" for workgroup memory).
	buffer string
	// across marks a race between workgroups: with one workgroup the kernel is race-free and out is want's.
	across bool
	// interval is the interval the race is reported in, where the case says (0: not checked).
	interval uint32
}

var raceCases = []raceCase{
	{name: "a barrier between write and read", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[li] = f32(li);
	workgroupBarrier();
	out[64u * wg + li] = s[(li + 1u) % 64u];`,
		want: func(li uint32) float32 { return float32((li + 1) % 64) }},
	{name: "a neighbour's write read without a barrier", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[li] = f32(li); // race
	out[64u * wg + li] = s[(li + 1u) % 64u]; // race`,
		kinds: []string{"read after write", "write after read"}},
	{name: "a neighbour's read overwritten without a barrier", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[li] = f32(li);
	workgroupBarrier();
	let v = s[(li + 1u) % 64u]; // race
	s[li] = 2.0 * v; // race
	out[64u * wg + li] = v;`,
		kinds: []string{"read after write", "write after read"}},
	{name: "every invocation writes one scalar", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[3] = f32(li); // race
	workgroupBarrier();
	out[64u * wg + li] = s[3];`,
		kinds: []string{"write after write"}},
	{name: "an invocation's own scalar, again and again", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[li] = 1.0;
	s[li] += f32(li);
	s[li] = s[li] * 2.0;
	out[64u * wg + li] = s[li];`,
		want: func(li uint32) float32 { return 2 * (1 + float32(li)) }},
	{name: "different components of one vector", decls: "var<workgroup> v: array<vec2<f32>, 64>;",
		body: `v[li].x = 1.0;
	v[(li + 1u) % 64u].y = f32(li);
	workgroupBarrier();
	out[64u * wg + li] = v[li].x + v[li].y;`,
		want: func(li uint32) float32 { return 1 + float32((li+63)%64) }},
	{name: "a whole vector read while a neighbour writes a component", decls: "var<workgroup> v: array<vec2<f32>, 64>;",
		body: `v[li].x = 1.0;
	v[(li + 1u) % 64u].y = f32(li); // race
	let w = v[li]; // race
	out[64u * wg + li] = w.x + w.y;`,
		kinds: []string{"read after write", "write after read"}},
	{name: "different members of structs", decls: "struct S { a: f32, b: vec2<f32> }\nvar<workgroup> st: array<S, 64>;",
		body: `st[li].b.y = f32(li);
	st[(li + 1u) % 64u].a = 2.0;
	st[(li + 2u) % 64u].b.x = 3.0;
	workgroupBarrier();
	out[64u * wg + li] = st[li].a + st[li].b.x + st[li].b.y;`,
		want: func(li uint32) float32 { return 5 + float32(li) }},
	{name: "a struct member written by two", decls: "struct S { a: f32, b: vec2<f32> }\nvar<workgroup> st: array<S, 64>;",
		body: `st[li].b.y = f32(li);
	st[li / 2u].b.y = 1.0; // race
	workgroupBarrier();
	out[64u * wg + li] = st[li].b.y;`,
		kinds: []string{"write after write"}},
	{name: "atomics", decls: "var<workgroup> n: atomic<u32>;",
		body: `atomicAdd(&n, li);
	workgroupBarrier();
	out[64u * wg + li] = f32(atomicLoad(&n));`,
		want: func(uint32) float32 { return 63 * 64 / 2 }},
	{name: "workgroupUniformLoad", decls: "var<workgroup> x: f32;",
		body: `if li == 0u { x = 5.0; }
	let v = workgroupUniformLoad(&x);
	out[64u * wg + li] = v;`,
		want: func(uint32) float32 { return 5 }},
	{name: "storageBarrier does not order workgroup memory", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[li] = f32(li); // race
	storageBarrier();
	out[64u * wg + li] = s[(li + 1u) % 64u]; // race`,
		kinds: []string{"read after write", "write after read"}},
	{name: "a race after two barriers", decls: "var<workgroup> s: array<f32, 64>;",
		body: `s[li] = 1.0;
	workgroupBarrier();
	s[li] += 1.0;
	workgroupBarrier();
	s[li / 2u] = 0.0; // race
	out[64u * wg + li] = 1.0;`,
		kinds: []string{"write after write"}, interval: 3},
	{name: "a write through a pointer parameter", decls: "var<workgroup> s: array<f32, 64>;\nfn put(p: ptr<workgroup, f32>, v: f32) {\n\t*p = v; // race\n}",
		body: `put(&s[li % 8u], f32(li));
	workgroupBarrier();
	out[64u * wg + li] = 1.0;`,
		kinds: []string{"write after write"}},
}

// TestRaceCheck runs kernels with and without data races on workgroup memory and on storage buffers on a
// race-checking device, one workgroup and several: the racy ones are reported, with the variable (and binding), the
// kind and the line, the others not, and their results are those of the same code unchecked.
func TestRaceCheck(t *testing.T) {
	env := newEnvDesc(t, os.Getenv("WGPU_NO_VALIDATION") == "", DeviceDescriptor{RaceCheck: true})
	d := env.dev
	for _, groups := range []uint32{1, 3} {
		for _, tc := range append(raceCases, storageRaceCases...) {
			if tc.across && groups == 1 {
				tc.kinds = nil // one workgroup: nothing to race with
			}
			t.Run(fmt.Sprintf("%s/%d workgroups", tc.name, groups), func(t *testing.T) {
				src := fmt.Sprintf("%s\n@group(0) @binding(0) var<storage, read_write> out: array<f32>;\n"+
					"@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) id: vec3<u32>) {\n"+
					"\tlet wg = id.x;\n\t%s\n}\n", tc.decls, tc.body)
				before, err := d.Races()
				if err != nil {
					t.Fatal(err)
				}
				m := wgslModule(t, d, tc.name, src)
				p := wgslPipeline(t, d, m, "main", nil, [3]uint32{64, 1, 1})
				out := newBuffer(t, d, 4*64*uint64(groups), BufferUsageStorage|BufferUsageCopySrc)
				var got []float32
				if strings.Contains(tc.decls, "@binding(1)") {
					got = dispatchBuffers(t, d, p, groups, out, newBuffer(t, d, 4*64*uint64(groups)+16, BufferUsageStorage))
				} else {
					got = dispatchOut(t, d, p, out, groups)
				}
				races, err := d.Races()
				if err != nil {
					t.Fatal(err)
				}
				races = races[len(before):]
				if len(tc.kinds) == 0 {
					for _, r := range races {
						t.Errorf("race reported in a race-free kernel: %v", r)
					}
					for i, v := range got {
						if w := tc.want(uint32(i % 64)); v != w {
							t.Fatalf("out[%d] = %v, want %v", i, v, w)
						}
					}
					return
				}
				if len(races) != 1 {
					t.Fatalf("%d races reported, want 1 pipeline's: %v", len(races), races)
				}
				r := races[0]
				t.Log(r)
				marked := []int{}
				for i, line := range strings.Split(src, "\n") {
					if strings.Contains(line, "// race") {
						marked = append(marked, i+1)
					}
				}
				if !slices.Contains(tc.kinds, r.Kind) || !slices.Contains(marked, r.At.Line) || r.Pipeline != "main" ||
					r.Invocation >= 64 || r.Other >= 64 || r.Workgroup >= groups || r.OtherWorkgroup >= groups || r.Count == 0 ||
					tc.across != (r.Workgroup != r.OtherWorkgroup) || !tc.across && r.Invocation == r.Other {
					t.Errorf("reported %v; want a race of kind %v at line %v, across workgroups %v", r, tc.kinds, marked, tc.across)
				}
				if tc.interval != 0 && r.Interval != tc.interval {
					t.Errorf("interval %d, want %d", r.Interval, tc.interval)
				}
				switch {
				case tc.buffer == "" && (r.Binding != nil || !strings.Contains(tc.decls, "var<workgroup> "+r.Var+":")):
					t.Errorf("variable %q (binding %v) is not the kernel's workgroup variable", r.Var, r.Binding)
				case tc.buffer != "" && (r.Binding == nil || r.Var != tc.buffer || r.Binding.Group != 0 ||
					!strings.Contains(src, fmt.Sprintf("@binding(%d) var<storage, read_write> %s:", r.Binding.Binding, r.Var))):
					t.Errorf("variable %q (binding %+v) is not the kernel's storage variable %q", r.Var, r.Binding, tc.buffer)
				}
			})
		}
	}
}

// TestRaceCheckResults runs a race-free kernel on a race-checking device and an ordinary one: the same results.
func TestRaceCheckResults(t *testing.T) {
	src := `var<workgroup> tile: array<f32, 256>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) id: vec3<u32>) {
	for (var k = 0u; k < 4u; k++) { tile[li * 4u + k] = f32(id.x * 256u + li * 4u + k) * 0.5; }
	workgroupBarrier();
	var s = 0.0;
	for (var k = 0u; k < 256u; k += 64u) { s += tile[(li + k) % 256u]; }
	workgroupBarrier();
	tile[li] = s;
	workgroupBarrier();
	out[id.x * 64u + li] = tile[63u - li];
}`
	var results [2][]float32
	for i, race := range []bool{false, true} {
		env := newEnvDesc(t, os.Getenv("WGPU_NO_VALIDATION") == "", DeviceDescriptor{RaceCheck: race})
		m := wgslModule(t, env.dev, "tile", src)
		p := wgslPipeline(t, env.dev, m, "main", nil, [3]uint32{64, 1, 1})
		out := newBuffer(t, env.dev, 4*64*5, BufferUsageStorage|BufferUsageCopySrc)
		results[i] = dispatchOut(t, env.dev, p, out, 5)
		races, err := env.dev.Races()
		if err != nil || len(races) != 0 {
			t.Errorf("race check %v: races %v, %v", race, races, err)
		}
	}
	if !slices.Equal(results[0], results[1]) {
		t.Errorf("results differ with the race check:\n%v\n%v", results[0], results[1])
	}
}

// TestRaceCheckLimits: a dispatch whose shadow exceeds the device's is refused, naming it, and a module binding the
// race check's group is refused.
func TestRaceCheckLimits(t *testing.T) {
	env := newEnvDesc(t, os.Getenv("WGPU_NO_VALIDATION") == "", DeviceDescriptor{RaceCheck: true})
	d := env.dev
	_, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "g3", WGSL: `@group(3) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() { o[0] = 1.0; }`})
	isErr(t, err, ErrLimit)
	m := wgslModule(t, d, "big", `var<workgroup> s: array<f32, 4096>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) li: u32) { s[li] = 1.0; workgroupBarrier(); out[0] = s[0]; }`)
	p := wgslPipeline(t, d, m, "main", nil, [3]uint32{64, 1, 1})
	bgl, err := p.GetBindGroupLayout(0)
	if err != nil {
		t.Fatal(err)
	}
	out := newBuffer(t, d, 4, BufferUsageStorage)
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: []BindGroupEntry{{Binding: 0, Buffer: out}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = recordDispatch(t, d, p, g, [3]uint32{1 << 14, 1, 1}) // 16384 workgroups of 4096 scalars: 768 MiB of shadow
	isErr(t, err, ErrLimit)
	if err != nil && !strings.Contains(err.Error(), "race check") {
		t.Errorf("error %q does not name the race check", err)
	}
}

package exectest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestStructInputsAndSubgroupIDs reads builtin values through a struct
// parameter and checks subgroup_id and num_subgroups against the subgroup
// size and against subgroupBroadcastFirst, which all lanes of one subgroup share.
func TestStructInputsAndSubgroupIDs(t *testing.T) {
	d := newDevice(t, wgpu.FeatureSubgroups)
	src := `enable subgroups;
struct In {
	@builtin(local_invocation_index) li: u32,
	@builtin(workgroup_id) wid: vec3<u32>,
	@builtin(subgroup_id) sid: u32,
	@builtin(num_subgroups) n: u32,
}
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64)
fn main(in: In, @builtin(subgroup_size) size: u32, @builtin(global_invocation_id) gid: vec3<u32>) {
	let k = 5u * gid.x;
	o[k] = in.li + 64u * in.wid.x;
	o[k + 1u] = in.sid;
	o[k + 2u] = in.n;
	o[k + 3u] = size;
	o[k + 4u] = subgroupBroadcastFirst(in.sid);
}`
	const groups, wg = 3, 64
	out := getU32(d.run(t, src, nil, nil, [3]uint32{groups, 1, 1}, make([]byte, 4*5*groups*wg))[0])
	for g := range groups {
		count := map[uint32]int{}
		for l := range wg {
			r := out[5*(g*wg+l):][:5]
			gi, sid, n, size, first := r[0], r[1], r[2], r[3], r[4]
			if gi != uint32(g*wg+l) {
				t.Fatalf("invocation %d: struct input gave index %d", g*wg+l, gi)
			}
			if size == 0 || n != (wg+size-1)/size {
				t.Errorf("invocation %d: num_subgroups %d with subgroup size %d", gi, n, size)
			}
			if sid >= n || first != sid {
				t.Errorf("invocation %d: subgroup_id %d, num_subgroups %d, first lane's %d", gi, sid, n, first)
			}
			count[sid]++
			if count[sid] > int(size) {
				t.Errorf("workgroup %d: more than %d invocations in subgroup %d", g, size, sid)
			}
		}
		if len(count) != int(out[5*g*wg+2]) {
			t.Errorf("workgroup %d: %d distinct subgroup ids, num_subgroups %d", g, len(count), out[5*g*wg+2])
		}
	}
}

// TestBreakIfSeesContinuing runs a loop whose break if reads a name of its
// continuing block.
func TestBreakIfSeesContinuing(t *testing.T) {
	d := newDevice(t)
	src := `@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(1)
fn main() {
	var i = 0u;
	var s = 0u;
	loop {
		s += i;
		continuing {
			let next = i + 1u;
			i = next;
			break if next * next > o[0];
		}
	}
	o[1] = s;
	o[2] = i;
}`
	out := getU32(d.run(t, src, nil, nil, one, u32s(50, 0, 0))[0])
	s, i := uint32(0), uint32(0)
	for {
		s += i
		i++
		if i*i > 50 {
			break
		}
	}
	if out[1] != s || out[2] != i {
		t.Errorf("sum %d, i %d; want %d, %d", out[1], out[2], s, i)
	}
}

// TestLinearIndexing checks global_invocation_index and workgroup_index
// (WGSL's linear_indexing) on a 2D grid, with a constant and with an
// override workgroup size, against the linearization computed here.
func TestLinearIndexing(t *testing.T) {
	d := newDevice(t)
	const src = `
override WX: u32 = 2;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
struct In { @builtin(workgroup_index) w: u32, @builtin(local_invocation_index) li: u32 }
@compute @workgroup_size(WX, 2)
fn main(@builtin(global_invocation_index) g: u32, in: In) { o[g] = in.w * 100u + in.li + 1u; }`
	for _, wx := range []uint32{2, 3} {
		groups := [3]uint32{3, 2, 1}
		wgs := [3]uint32{wx, 2, 1}
		total := groups[0] * groups[1] * wgs[0] * wgs[1]
		out := d.run(t, src, map[string]float64{"WX": float64(wx)}, nil, groups, make([]byte, 4*total))
		got := getU32(out[0])
		for wy := range groups[1] {
			for wxi := range groups[0] {
				for ly := range wgs[1] {
					for lx := range wgs[0] {
						gx, gy := wxi*wgs[0]+lx, wy*wgs[1]+ly
						g := gx + groups[0]*wgs[0]*gy
						want := (wxi+groups[0]*wy)*100 + lx + wgs[0]*ly + 1
						if got[g] != want {
							t.Errorf("WX=%d: o[%d] = %d, want %d", wx, g, got[g], want)
						}
					}
				}
			}
		}
	}
}

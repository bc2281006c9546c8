package wgpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// wgslPipeline creates the pipeline of entry in WGSL module m with consts and checks its workgroup size.
func wgslPipeline(t *testing.T, d *Device, m *ShaderModule, entry string, consts map[string]float64, wg [3]uint32) *ComputePipeline {
	t.Helper()
	p, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: entry, Module: m, EntryPoint: entry, Constants: consts})
	if err != nil {
		t.Fatalf("%s %v: %v", entry, consts, err)
	}
	t.Cleanup(func() { p.Close() })
	if got, ok := p.WorkgroupSize(); !ok || got != wg {
		t.Errorf("%s %v: workgroup size %v (%v), want %v", entry, consts, got, ok, wg)
	}
	return p
}

// autoPipeline compiles src and makes the pipeline of its one entry point with an "auto" layout, both closed
// when the test ends.
func autoPipeline(t *testing.T, d *Device, label, src string) *ComputePipeline {
	t.Helper()
	p, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: label, Module: wgslModule(t, d, label+".wgsl", src)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// groupLayout is p's bind group layout index, or fails the test.
func groupLayout(t *testing.T, p *ComputePipeline, index int) *BindGroupLayout {
	t.Helper()
	bgl, err := p.GetBindGroupLayout(index)
	if err != nil {
		t.Fatal(err)
	}
	return bgl
}

// dispatchOut runs p over groups workgroups with its binding 0 bound to out, then reads out.
func dispatchOut(t *testing.T, d *Device, p *ComputePipeline, out *Buffer, groups uint32) []float32 {
	t.Helper()
	return dispatchBuffers(t, d, p, groups, out)
}

// dispatchBuffers runs p over groups workgroups with its bindings 0, 1, ... of group 0 bound to bufs, then reads
// bufs[0].
func dispatchBuffers(t *testing.T, d *Device, p *ComputePipeline, groups uint32, bufs ...*Buffer) []float32 {
	t.Helper()
	bgl, err := p.GetBindGroupLayout(0)
	if err != nil {
		t.Fatal(err)
	}
	var entries []BindGroupEntry
	for i, b := range bufs {
		entries = append(entries, BindGroupEntry{Binding: uint32(i), Buffer: b})
	}
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	run(t, d, func(c *ComputePass) {
		c.SetPipeline(p)
		c.SetBindGroup(0, g)
		c.DispatchWorkgroups(groups, 1, 1)
	})
	return readF32(t, d, bufs[0])
}

func wgslModule(t testing.TB, d *Device, label, src string) *ShaderModule {
	t.Helper()
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: label, WGSL: src})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestWGSLPipelineOverrides runs, on the device, the WGSL that specialization constants cannot express and so is
// compiled per pipeline (issue 8): workgroup sizes and an array count computed from a float override, two entry
// points with different override workgroup sizes in one module, a derived override with an @id set by a pipeline
// constant, and a module without entry points. Results are checked against the same arithmetic in Go.
func TestWGSLPipelineOverrides(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	out := newBuffer(t, d, 4*64, storageRW)

	t.Run("float_workgroup_size", func(t *testing.T) {
		m := wgslModule(t, d, "wg.wgsl", `override f: f32 = 1.5;
override wg = u32(f * 2.0);
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(wg) fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3u) {
	o[w.x * wg + li] = f32(li) + 100.0 * f32(w.x) + f;
}`)
		for _, f := range []float32{1.5, 4, 2.75} {
			wg := uint32(f * 2) // WGSL's u32(f32) truncates toward zero, as Go does
			p := wgslPipeline(t, d, m, "main", map[string]float64{"f": float64(f)}, [3]uint32{wg, 1, 1})
			d.Queue().WriteBuffer(out, 0, make([]byte, out.Size()))
			got := dispatchOut(t, d, p, out, 3)
			for i := range got {
				want := float32(0)
				if uint32(i) < 3*wg {
					want = float32(uint32(i)%wg) + 100*float32(uint32(i)/wg) + f
				}
				if got[i] != want {
					t.Fatalf("f=%g: o[%d] = %g, want %g", f, i, got[i], want)
				}
			}
		}
	})

	t.Run("float_array_count", func(t *testing.T) {
		m := wgslModule(t, d, "count.wgsl", `override f: f32 = 2.0;
override k: u32 = 1u;
var<workgroup> w: array<u32, u32(f * 3.0)>;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() {
	let n = u32(f * 3.0);
	for (var i = 0u; i < n; i++) { w[i] = i * i + k; }
	var s = 0u;
	for (var i = 0u; i < 16u; i++) { s += w[min(i, n - 1u)]; } // the last element repeats past n
	o[0] = f32(s);
	o[1] = f32(n);
}`)
		for _, f := range []float64{2, 2.5, 0.4} {
			n := uint32(f * 3)
			k := uint32(3)
			p := wgslPipeline(t, d, m, "main", map[string]float64{"f": f, "k": float64(k)}, [3]uint32{1, 1, 1})
			got := dispatchOut(t, d, p, out, 1)
			var s uint32
			for i := range uint32(16) {
				j := min(i, n-1)
				s += j*j + k
			}
			if got[0] != float32(s) || got[1] != float32(n) {
				t.Errorf("f=%g: sum %g, n %g; want %d, %d", f, got[0], got[1], s, n)
			}
		}
		// Evaluated at pipeline creation: a count of 0 is a pipeline error naming the expression.
		_, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Module: m, Constants: map[string]float64{"f": 0.2}})
		var list wgsl.ErrorList
		if !errors.Is(err, ErrBadUsage) || !errors.As(err, &list) || !strings.Contains(err.Error(), "array element count must be positive") {
			t.Errorf("count 0: %v", err)
		}
	})

	t.Run("two_entry_points", func(t *testing.T) {
		m := wgslModule(t, d, "two.wgsl", `override a: u32 = 4u;
override b: u32 = 2u;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(a) fn ea(@builtin(global_invocation_id) g: vec3u) { o[g.x] = f32(g.x + 1u); }
@compute @workgroup_size(b * 3u, 1) fn eb(@builtin(global_invocation_id) g: vec3u) { o[g.x] = 2.0 * f32(g.x); }`)
		if wm, ok := m.Reflection(); !ok || len(wm.EntryPoints) != 2 {
			t.Fatalf("reflection: %v %v", wm, ok)
		}
		for _, c := range []struct {
			entry  string
			consts map[string]float64
			wg     uint32
			value  func(i uint32) float32
		}{
			{"ea", nil, 4, func(i uint32) float32 { return float32(i + 1) }},
			{"ea", map[string]float64{"a": 8}, 8, func(i uint32) float32 { return float32(i + 1) }},
			{"eb", nil, 6, func(i uint32) float32 { return 2 * float32(i) }},
			{"eb", map[string]float64{"b": 5, "a": 1}, 15, func(i uint32) float32 { return 2 * float32(i) }},
		} {
			p := wgslPipeline(t, d, m, c.entry, c.consts, [3]uint32{c.wg, 1, 1})
			d.Queue().WriteBuffer(out, 0, make([]byte, out.Size()))
			got := dispatchOut(t, d, p, out, 2)
			for i := range got {
				want := float32(0)
				if uint32(i) < 2*c.wg {
					want = c.value(uint32(i))
				}
				if got[i] != want {
					t.Fatalf("%s %v: o[%d] = %g, want %g", c.entry, c.consts, i, got[i], want)
				}
			}
		}
	})

	t.Run("derived_override_id", func(t *testing.T) {
		m := wgslModule(t, d, "derived.wgsl", `override a: u32 = 3u;
@id(5) override dd: u32 = a * 10u;
override z: u32 = 1u;
override q = 12u / z;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() { o[0] = f32(dd); o[1] = f32(a); o[2] = f32(q); }`)
		for _, c := range []struct {
			consts   map[string]float64
			dd, a, q uint32
		}{
			{nil, 30, 3, 12},
			{map[string]float64{"5": 7}, 7, 3, 12},
			{map[string]float64{"a": 4}, 40, 4, 12},
			{map[string]float64{"a": 4, "dd": 9, "z": 4}, 9, 4, 3},
			{map[string]float64{"q": 2, "z": 0}, 30, 3, 2}, // q set: its initializer (a division by 0) is not used
		} {
			p := wgslPipeline(t, d, m, "main", c.consts, [3]uint32{1, 1, 1})
			got := dispatchOut(t, d, p, out, 1)
			if got[0] != float32(c.dd) || got[1] != float32(c.a) || got[2] != float32(c.q) {
				t.Errorf("%v: got %v, want dd=%d a=%d q=%d", c.consts, got[:3], c.dd, c.a, c.q)
			}
		}
		for _, c := range []struct {
			consts map[string]float64
			want   string
		}{
			{map[string]float64{"z": 0}, "integer division by zero"},
			{map[string]float64{"5": 1, "dd": 2}, "also set as"},
			{map[string]float64{"nope": 1}, `"nope": the module has no override`},
			{map[string]float64{"a": -1}, "-1 is not a u32"},
		} {
			_, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Module: m, Constants: c.consts})
			if !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v; want ErrBadUsage with %q", c.consts, err, c.want)
			}
		}
	})

	t.Run("no_entry_point", func(t *testing.T) {
		m := wgslModule(t, d, "lib.wgsl", "fn twice(x: f32) -> f32 { return 2.0 * x; }")
		_, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Module: m})
		if !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), `no compute entry point "main"`) {
			t.Errorf("pipeline of a module without entry points: %v", err)
		}
	})
}

// A workgroup size beyond the device's limits, known once the constants are
// applied, is refused at pipeline creation with ErrLimit: per dimension and
// in invocations per workgroup.
func TestWGSLPipelineWorkgroupLimits(t *testing.T) {
	env := newEnv(t)
	d := env.dev
	lim := d.Limits()
	m := wgslModule(t, d, "limits.wgsl", `override x: u32 = 1u;
override y: u32 = 1u;
@compute @workgroup_size(x, y) fn main() {}`)
	ok := map[string]float64{"x": float64(lim.MaxComputeWorkgroupSizeX), "y": 1}
	wgslPipeline(t, d, m, "main", ok, [3]uint32{lim.MaxComputeWorkgroupSizeX, 1, 1})
	// The largest y whose x*y still exceeds the invocation limit with x at its maximum.
	y := min(lim.MaxComputeWorkgroupSizeY, lim.MaxComputeInvocationsPerWorkgroup/lim.MaxComputeWorkgroupSizeX+1)
	for _, c := range []struct {
		consts map[string]float64
		want   string
	}{
		{map[string]float64{"x": float64(lim.MaxComputeWorkgroupSizeX) + 1}, "x is"},
		{map[string]float64{"y": float64(lim.MaxComputeWorkgroupSizeY) + 1}, "y is"},
		{map[string]float64{"x": float64(lim.MaxComputeWorkgroupSizeX), "y": float64(y)}, "invocations"},
	} {
		_, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "limits", Module: m, Constants: c.consts})
		isErr(t, err, ErrLimit)
		if err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want it to say %q", c.consts, err, c.want)
		}
	}
}

// A device made smaller than its adapter (DeviceDescriptor.LimitsCap) says
// so in Limits and holds every check to it: a workgroup the adapter allows
// but the cap does not is refused, as is a RequiredLimits above the cap.
func TestLimitsCap(t *testing.T) {
	env := newEnv(t)
	have := env.ad.Info().Limits
	if have.MaxComputeInvocationsPerWorkgroup < 256 || have.MaxComputeWorkgroupSizeX < 256 {
		t.Skipf("%s allows fewer than 256 invocations", env.ad.Info().Name)
	}
	caps := Limits{MaxComputeInvocationsPerWorkgroup: 128, MaxComputeWorkgroupSizeX: 128}
	d, err := env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: "-", LimitsCap: caps})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if l := d.Limits(); l.MaxComputeInvocationsPerWorkgroup != 128 || l.MaxComputeWorkgroupSizeX != 128 ||
		l.MaxComputeWorkgroupSizeY != have.MaxComputeWorkgroupSizeY {
		t.Errorf("limits %+v, want the cap's two and the adapter's others", l)
	}
	m := wgslModule(t, d, "capped.wgsl", `override x: u32 = 1u;
@compute @workgroup_size(x) fn main() {}`)
	wgslPipeline(t, d, m, "main", map[string]float64{"x": 128}, [3]uint32{128, 1, 1})
	_, err = d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "capped", Module: m, Constants: map[string]float64{"x": 256}})
	isErr(t, err, ErrLimit)
	_, err = env.ad.RequestDevice(&DeviceDescriptor{PipelineCacheDir: "-", LimitsCap: caps, RequiredLimits: Limits{MaxComputeInvocationsPerWorkgroup: 256}})
	isErr(t, err, ErrLimit)
}

package wgsl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var raceOpt = Options{RaceCheck: &RaceCheck{Group: 3, ShadowBinding: 0, ReportBinding: 1}}

// TestRaceCheckSPIRV compiles the realistic kernels with the race check, as a
// whole module and per entry point, and validates the SPIR-V.
func TestRaceCheckSPIRV(t *testing.T) {
	files, err := filepath.Glob("testdata/kernels/*.wgsl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kernels: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Compile(filepath.Base(file), string(src), raceOpt)
			if err != nil {
				t.Fatal(err)
			}
			if m.SPIRV != nil {
				spirvVal(t, file, m.SPIRV)
			}
			for _, ep := range m.Reflection.EntryPoints {
				sp, err := m.Specialize(ep.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				spirvVal(t, file+":"+ep.Name, sp.SPIRV)
			}
		})
	}
}

const raceLayoutSrc = `
struct S { x: f32, y: vec2<u32> }
var<workgroup> a: array<vec4<f32>, 8>;
var<workgroup> b: f32;
var<workgroup> c: array<S, 3>;
var<workgroup> m: mat2x3<f32>;
var<workgroup> n: atomic<u32>;
override N: u32 = 4;
var<workgroup> o: array<f32, N * 2>;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) i: u32) {
	a[i % 8u].y = 1.0;
	c[i % 3u].y.x = 2u;
	m[1].z = b;
	o[i % 8u] = 0.0;
	atomicAdd(&n, 1u);
	workgroupBarrier();
	out[i] = a[i % 8u].y + f32(c[i % 3u].y.x) + m[1].z + o[0] + f32(atomicLoad(&n));
}
`

// TestRaceCheckLayout checks the shadow's size against the scalars counted by
// hand, and that an override-sized array leaves the whole module without
// SPIR-V but specializes.
func TestRaceCheckLayout(t *testing.T) {
	m, err := Compile("layout.wgsl", raceLayoutSrc, raceOpt)
	if err != nil {
		t.Fatal(err)
	}
	if m.SPIRV != nil || !strings.Contains(m.NoSPIRV, `"o"`) {
		t.Errorf("whole module: SPIR-V %v, NoSPIRV %q; want none, naming o", m.SPIRV != nil, m.NoSPIRV)
	}
	for _, tc := range []struct {
		n    float64
		want uint64
	}{{4, 3 * (32 + 1 + 9 + 6 + 1 + 8)}, {16, 3 * (32 + 1 + 9 + 6 + 1 + 32)}} {
		sp, err := m.Specialize("main", map[string]float64{"N": tc.n})
		if err != nil {
			t.Fatal(err)
		}
		spirvVal(t, "layout.wgsl", sp.SPIRV)
		if got := sp.RaceShadowWords(); got != tc.want {
			t.Errorf("N = %v: %d shadow words a workgroup, want %d", tc.n, got, tc.want)
		}
	}
	plain, err := Compile("layout.wgsl", raceLayoutSrc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := plain.Specialize("main", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sp.RaceShadowWords() != 0 {
		t.Errorf("without the race check: %d shadow words", sp.RaceShadowWords())
	}
	if _, err := sp.DecodeRace(make([]uint32, RaceReportWords)); err == nil {
		t.Error("DecodeRace of a module without the race check: no error")
	}
}

// TestDecodeRace reads report words as the instrumented code writes them.
func TestDecodeRace(t *testing.T) {
	m, err := Compile("layout.wgsl", raceLayoutSrc, raceOpt)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := m.Specialize("main", nil)
	if err != nil {
		t.Fatal(err)
	}
	words := make([]uint32, RaceReportWords)
	if r, err := sp.DecodeRace(words); r != nil || err != nil {
		t.Fatalf("empty report: %v, %v", r, err)
	}
	at := strings.Index(raceLayoutSrc, "m[1].z = b;")
	copy(words, []uint32{5, 2, 1, 0, 7, 3, 1, uint32(at), 9})
	r, err := sp.DecodeRace(words)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 5 || r.Kind != "write after read" || r.Var != "b" || r.Invocation != 7 || r.Other != 3 || r.Workgroup != 9 ||
		r.At.Line != 15 || r.EntryPoint != "main" {
		t.Errorf("decoded %+v (at %+v)", r, r.At)
	}
	msg := r.Error()
	for _, want := range []string{"layout.wgsl:15:2:", "write after read", "b scalar 0", "invocation 7 here and invocation 3", "and 4 more", "m[1].z = b;"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	for _, bad := range [][]uint32{
		{1, 4, 0, 0, 0, 0, 1, 0, 0},                              // no such kind
		{1, 1, 99, 0, 0, 0, 1, 0, 0},                             // no such variable
		{1, 1, 0, 0, 0, 0, 1, uint32(len(raceLayoutSrc) + 1), 0}, // past the source
	} {
		w := make([]uint32, RaceReportWords)
		copy(w, bad)
		if r, err := sp.DecodeRace(w); err == nil {
			t.Errorf("report %v: decoded %+v, want an error", bad, r)
		}
	}
}

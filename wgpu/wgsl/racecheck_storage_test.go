package wgsl

import (
	"slices"
	"strings"
	"testing"
)

const raceStorageSrc = `enable f16;
struct P { a: f32, b: vec3<f32>, c: array<vec2<f32>> }
struct Q { x: u32, y: array<f16, 6> }
var<workgroup> s: array<f32, 8>;
@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read_write> p: P;
@group(1) @binding(0) var<storage, read_write> q: Q;
@group(1) @binding(1) var<storage, read_write> h: array<vec4<f16>>;
@group(1) @binding(2) var<storage, read_write> cnt: atomic<u32>;
@compute @workgroup_size(8)
fn main(@builtin(local_invocation_index) i: u32) {
	s[i] = in0[i];
	out[i] = s[(i + 1u) % 8u];
	p.b.y = 1.0;
	p.c[i].x = p.a;
	q.y[i % 6u] = h[i].z;
	h[i][i % 4u] = 2.0h;
	atomicAdd(&cnt, 1u);
	storageBarrier();
	out[i + 1u] += 1.0;
}
`

// TestRaceCheckStorageLayout checks the storage bindings a race-checked
// pipeline shadows against their layouts worked out by hand (read-only ones
// have none; f16 ones have 2-byte scalars), the scalars a bound range
// gives, and the instrumented module against spirv-val.
func TestRaceCheckStorageLayout(t *testing.T) {
	m, err := Compile("storage.wgsl", raceStorageSrc, raceOpt)
	if err != nil {
		t.Fatal(err)
	}
	spirvVal(t, "storage.wgsl", m.SPIRV)
	sp, err := m.Specialize("main", nil)
	if err != nil {
		t.Fatal(err)
	}
	spirvVal(t, "storage.wgsl:main", sp.SPIRV)
	want := []RaceBinding{
		{Group: 0, Binding: 1, Name: "out", Unit: 4, Stride: 4},
		{Group: 0, Binding: 2, Name: "p", Unit: 4, Fixed: 32, Stride: 8}, // b at 16, c at 32
		{Group: 1, Binding: 0, Name: "q", Unit: 2, Fixed: 16},            // y at 4, 12 bytes, the struct rounded to 16
		{Group: 1, Binding: 1, Name: "h", Unit: 2, Stride: 8},
		{Group: 1, Binding: 2, Name: "cnt", Unit: 4, Fixed: 4},
	}
	if got := sp.RaceBindings(); !slices.Equal(got, want) {
		t.Errorf("race bindings\n%+v\nwant\n%+v", got, want)
	}
	for _, tc := range []struct {
		b            RaceBinding
		bound, words uint64
	}{
		{want[0], 40, 6 * 10},
		{want[0], 42, 6 * 10},           // a partial element is not in arrayLength
		{want[1], 32 + 3*8 + 4, 6 * 14}, // 8 scalars before c, 3 elements of 2
		{want[2], 64, 6 * 8},            // fixed size: what is bound beyond is not the variable's
		{want[3], 20, 6 * 8},            // 2 elements of 4 halves
	} {
		if got := tc.b.ShadowWords(tc.bound); got != tc.words {
			t.Errorf("%s with %d bytes bound: %d shadow words, want %d", tc.b.Name, tc.bound, got, tc.words)
		}
	}
	plain, err := Compile("storage.wgsl", raceStorageSrc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sp, err := plain.Specialize("main", nil); err != nil || sp.RaceBindings() != nil {
		t.Errorf("without the race check: bindings %v, %v", sp.RaceBindings(), err)
	}
}

// TestDecodeRaceStorage reads a report of a race on a storage buffer: its
// variable index follows the workgroup variables.
func TestDecodeRaceStorage(t *testing.T) {
	m, err := Compile("storage.wgsl", raceStorageSrc, raceOpt)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := m.Specialize("main", nil)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(raceStorageSrc, "q.y[i % 6u]")
	words := make([]uint32, RaceReportWords)
	copy(words, []uint32{4, 3, 1 + 2, 3, 7, 3, 1, uint32(at), 9, 2}) // s, then out, p, q: q
	r, err := sp.DecodeRace(words)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 4 || r.Kind != "write after write" || r.Var != "q" || r.Binding == nil || r.Binding.Group != 1 ||
		r.Binding.Binding != 0 || r.Scalar != 3 || r.Invocation != 7 || r.Other != 3 || r.Workgroup != 9 ||
		r.OtherWorkgroup != 2 || r.At.Line != 17 {
		t.Errorf("decoded %+v (at %+v)", r, r.At)
	}
	msg := r.Error()
	for _, want := range []string{"storage.wgsl:17:2:", "data race on storage memory (write after write)",
		"@group(1) @binding(0) q scalar 3 (byte 6)", "invocation 7 of workgroup 9 here and invocation 3 of workgroup 2",
		"and 3 more", "q.y[i % 6u] = h[i].z;"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "storageBarrier") {
		t.Errorf("message %q of a race between workgroups speaks of storageBarrier", msg)
	}
	words[9], words[6] = 9, 2 // the same workgroup, after one storageBarrier
	if r, err = sp.DecodeRace(words); err != nil || !strings.Contains(r.Error(), "no storageBarrier between them (both after storageBarrier 1)") {
		t.Errorf("decoded %v, %v", r, err)
	}
	words[1] = 2 // a write after read: only a storageBarrier orders it too
	if r, err = sp.DecodeRace(words); err != nil || !strings.Contains(r.Error(), "(write after read)") ||
		!strings.Contains(r.Error(), "no storageBarrier between them (both after storageBarrier 1)") {
		t.Errorf("decoded %v, %v", r, err)
	}
	words[2] = 1 + 5 // past cnt
	if r, err := sp.DecodeRace(words); err == nil {
		t.Errorf("report of variable 6 of 6: decoded %+v, want an error", r)
	}
}

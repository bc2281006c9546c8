package wgsl

import (
	"errors"
	"strings"
	"testing"
)

// pipelinePrograms are valid WGSL that specialization constants cannot
// express: Compile accepts them without whole-module SPIR-V, and their
// pipelines come from Specialize (issue 8). TestTintOracle checks them.
var pipelinePrograms = []struct{ name, src, noSPIRV string }{
	{"override_derived_id", "override a: u32 = 1u; @id(3) override b: u32 = a * 2u;" + ep, "has an @id and an initializer"},
	{"computed_override_array_count", "override s: f32 = 2.0; override n = u32(s);\nvar<workgroup> w: array<f32, n>;\n" +
		"@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n" +
		"@compute @workgroup_size(1) fn main() { w[1] = 3.0; o[0] = w[1]; }", "an array element count"},
	{"computed_override_workgroup_size", "override s: f32 = 2.0; override n = u32(s);\n@compute @workgroup_size(n) fn main() {}", "a @workgroup_size argument"},
	{"two_entries_override_size", "override n: u32 = 4u;\n@compute @workgroup_size(n) fn a() {}\n@compute @workgroup_size(1) fn b() {}", "is not the only entry point"},
	{"no_entry_point", "fn f() {}", "no entry point"},
}

func init() {
	for _, p := range pipelinePrograms {
		validPrograms = append(validPrograms, struct{ name, src string }{p.name, p.src})
	}
}

func TestNoWholeModuleSPIRV(t *testing.T) {
	for _, p := range pipelinePrograms {
		t.Run(p.name, func(t *testing.T) {
			m := compileOK(t, p.name+".wgsl", p.src)
			if m.SPIRV != nil || !strings.Contains(m.NoSPIRV, p.noSPIRV) {
				t.Errorf("SPIR-V %d words, NoSPIRV %q; want none, because %q", len(m.SPIRV), m.NoSPIRV, p.noSPIRV)
			}
			if _, err := CompileSPIRV(p.name+".wgsl", p.src); err == nil || !strings.Contains(err.Error(), p.noSPIRV) {
				t.Errorf("CompileSPIRV: %v; want an error naming %q", err, p.noSPIRV)
			}
		})
	}
}

// specSrc has a float override that sizes the workgroup and an array, a
// derived override with an @id, and two entry points.
const specSrc = `override scale: f32 = 1.5;
override wg = u32(scale * 4.0);
@id(7) override k: i32 = i32(scale) + 1;
override flag: bool;
override half: u32 = 8u / u32(scale);
var<workgroup> buf: array<f32, u32(scale * 2.0)>;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(wg, 2) fn main(@builtin(local_invocation_index) li: u32) {
	buf[li % 3u] = f32(k);
	o[li] = buf[0] + f32(half);
}
override notflag = !flag;
@compute @workgroup_size(3) fn other() { if flag { o[0] = 1.0; } }
@compute @workgroup_size(3) fn third() { if notflag { o[0] = 1.0; } }
`

func TestSpecializeValues(t *testing.T) {
	m := compileOK(t, "spec.wgsl", specSrc)
	for _, c := range []struct {
		consts map[string]float64
		wg     [3]uint32
	}{
		{nil, [3]uint32{6, 2, 1}},                               // u32(1.5 * 4.0)
		{map[string]float64{"scale": 2.25}, [3]uint32{9, 2, 1}}, // u32(9.0)
		{map[string]float64{"wg": 5, "7": -3}, [3]uint32{5, 2, 1}},
		{map[string]float64{"scale": 1, "wg": 64}, [3]uint32{64, 2, 1}},
	} {
		sp, err := m.Specialize("main", c.consts)
		if err != nil {
			t.Errorf("%v: %v", c.consts, err)
			continue
		}
		if sp.WorkgroupSize != c.wg {
			t.Errorf("%v: workgroup size %v, want %v", c.consts, sp.WorkgroupSize, c.wg)
		}
		spirvVal(t, "spec.wgsl/main", sp.SPIRV)
		if got := entryPointNames(sp.SPIRV); len(got) != 1 || got[0] != "main" {
			t.Errorf("%v: entry points %v, want [main]", c.consts, got)
		}
	}
	// The reflected default comes from specializing with the defaults.
	if got := m.Reflection.EntryPoints[0].WorkgroupSize; got != [3]uint32{6, 2, 1} {
		t.Errorf("reflected workgroup size %v, want [6 2 1]", got)
	}
	// flag has no default: main does not use it, other does.
	if _, err := m.Specialize("other", map[string]float64{"flag": 1}); err != nil {
		t.Errorf("other with flag: %v", err)
	}
	if _, err := m.Specialize("other", nil); err == nil || !strings.Contains(err.Error(), "override 'flag' has no initializer") {
		t.Errorf("other without flag: %v; want an error naming 'flag'", err)
	}
	if _, err := m.Specialize("third", nil); err == nil || !strings.Contains(err.Error(), "override 'notflag' needs override 'flag', which has no initializer") {
		t.Errorf("third without flag: %v; want an error naming 'notflag' and 'flag'", err)
	}
	if _, err := m.Specialize("third", map[string]float64{"flag": 0}); err != nil {
		t.Errorf("third with flag: %v", err)
	}
}

func TestSpecializeErrors(t *testing.T) {
	m := compileOK(t, "spec.wgsl", specSrc)
	for _, c := range []struct {
		entry  string
		consts map[string]float64
		want   string
	}{
		{"nope", nil, `no entry point "nope"`},
		{"main", map[string]float64{"scal": 1}, `"scal": the module has no override`},
		{"main", map[string]float64{"k": 1, "7": 2}, "override 'k' is also set as"},
		{"main", map[string]float64{"k": 1.5}, "1.5 is not an i32"},
		{"main", map[string]float64{"k": 3e9}, "is not an i32"},
		{"main", map[string]float64{"half": -1}, "-1 is not a u32"},
		{"main", map[string]float64{"scale": 1e39}, "is not a finite f32"},
		{"main", map[string]float64{"wg": 0}, "8:26: error: @workgroup_size values must be at least 1, got 0"},
		{"main", map[string]float64{"scale": 0.25}, "5:27: error: integer division by zero"},
		{"main", map[string]float64{"scale": 0.25, "half": 1}, "array element count must be positive, got 0"},
		{"main", map[string]float64{"scale": -2, "half": 1}, "array element count must be positive"},
	} {
		_, err := m.Specialize(c.entry, c.consts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v; want an error containing %q", c.entry, c.consts, err, c.want)
		}
	}
	// Sizes above what devices allow are the device's to refuse (package wgpu).
	if sp, err := m.Specialize("main", map[string]float64{"wg": 2000}); err != nil || sp.WorkgroupSize[0] != 2000 {
		t.Errorf("wg 2000: %v, %v", sp, err)
	}
	none, err := Compile("none.wgsl", "fn f() {}", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Specialize("main", nil); err == nil || !strings.Contains(err.Error(), "the module has no entry point") {
		t.Errorf("module without entry point: %v", err)
	}
}

func TestSpecializeF16Range(t *testing.T) {
	m := compileOK(t, "h.wgsl", "enable f16;\noverride h: f16 = 1.0h;\n@group(0) @binding(0) var<storage, read_write> o: array<f16>;\n@compute @workgroup_size(1) fn main() { o[0] = h; }")
	if _, err := m.Specialize("main", map[string]float64{"h": 65504}); err != nil {
		t.Errorf("f16 max: %v", err)
	}
	if _, err := m.Specialize("main", map[string]float64{"h": 70000}); err == nil || !strings.Contains(err.Error(), "not a finite f16") {
		t.Errorf("f16 out of range: %v", err)
	}
}

// entryPointNames lists the OpEntryPoint names of a SPIR-V module.
func entryPointNames(words []uint32) []string {
	var out []string
	for i := 5; i < len(words); {
		op, n := words[i]&0xffff, int(words[i]>>16)
		if n == 0 {
			break
		}
		if op == 15 && i+3 < len(words) { // OpEntryPoint model id name...
			var b []byte
			for _, w := range words[i+3 : i+n] {
				b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
			}
			name, _, _ := strings.Cut(string(b), "\x00")
			out = append(out, name)
		}
		i += n
	}
	return out
}

func TestEmitWithoutWholeModule(t *testing.T) {
	f, err := parse("two.wgsl", pipelinePrograms[3].src)
	if err != nil {
		t.Fatal(err)
	}
	c, err := checkDefault(f)
	if err != nil {
		t.Fatal(err)
	}
	var ie *InternalError
	if _, err := emitDefault(c); err == nil || errors.As(err, &ie) || !strings.Contains(err.Error(), "is not the only entry point") {
		t.Errorf("emitDefault: %v; want an error saying why", err)
	}
}

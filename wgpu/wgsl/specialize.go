package wgsl

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Specialized is one entry point of a module compiled for one pipeline:
// every override replaced by its value.
type Specialized struct {
	// SPIRV holds the entry point alone, overrides as plain constants.
	SPIRV []uint32
	// WorkgroupSize is the entry point's workgroup size with the overrides'
	// values.
	WorkgroupSize [3]uint32

	race         *raceInfo // Options.RaceCheck: the shadow's layout
	entry        string
	file, source string // the module's, for DecodeRace
}

// pipelineValue is what specializing knows of one override: its type and,
// when the pipeline sets it, its value.
type pipelineValue struct {
	typ string // the WGSL scalar type: bool, i32, u32, f32 or f16
	set bool
	v   float64
}

// Specialize compiles entry point entry for a pipeline, as WebGPU's
// pipeline creation does: every override takes its value from constants
// (keyed by the override's name or by its numeric ID in decimal) or else from
// its initializer, evaluated with the other overrides' values, and becomes a
// plain constant, so array counts and workgroup sizes are concrete. Only the
// entry point and what it uses are emitted.
//
// The errors are pipeline-creation errors: an unknown key, an override set
// twice (by name and by ID), a value its type cannot hold, an override the
// entry point uses with neither a value nor an initializer, and
// override-expressions that fail once evaluated (division by zero, an array
// count or workgroup size out of range, an overflow), reported at their
// position in the source.
func (m *Module) Specialize(entry string, constants map[string]float64) (*Specialized, error) {
	return m.specialize(entry, constants, true)
}

// specialize is Specialize; without emitSPIRV it only checks the entry point
// and computes its workgroup size.
func (m *Module) specialize(entry string, constants map[string]float64, emitSPIRV bool) (_ *Specialized, err error) {
	if m == nil || m.checked == nil {
		return nil, &InternalError{Msg: "Specialize needs a module from Compile"}
	}
	var fn *function
	for _, f := range m.checked.entries {
		if f.decl.Name == entry {
			fn = f
		}
	}
	if fn == nil {
		if len(m.checked.entries) == 0 {
			return nil, fmt.Errorf("%s: no entry point %q: the module has no entry point", m.file.Name, entry)
		}
		return nil, fmt.Errorf("%s: no entry point %q (entry points: %v)", m.file.Name, entry, m.checked.EntryPoints())
	}
	values, err := m.pipelineValues(constants)
	if err != nil {
		return nil, fmt.Errorf("%s: entry point %q: %w", m.file.Name, entry, err)
	}
	c, err := checkSpec(m.pruned(fn), m.opt, values)
	if err != nil {
		return nil, fmt.Errorf("entry point %q with these pipeline constants: %w", entry, err)
	}
	if len(c.entries) != 1 {
		return nil, &InternalError{File: m.file.Name, Msg: fmt.Sprintf("specializing %q left %d entry points", entry, len(c.entries))}
	}
	out := &Specialized{entry: entry, file: m.file.Name, source: m.file.Source}
	for i, d := range c.entries[0].wgSize {
		out.WorkgroupSize[i] = uint32(d.val)
	}
	if emitSPIRV {
		if out.SPIRV, out.race, err = emitInfo(c, m.opt); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pipelineValues checks the pipeline constants against the module's
// overrides and returns every override's type and value, by name.
func (m *Module) pipelineValues(constants map[string]float64) (map[string]pipelineValue, error) {
	values := map[string]pipelineValue{}
	byKey := map[string]Override{}
	for _, o := range m.Reflection.Overrides {
		values[o.Name] = pipelineValue{typ: o.Type}
		byKey[o.Name] = o
		if o.ID >= 0 {
			byKey[strconv.Itoa(o.ID)] = o
		}
	}
	keys := make([]string, 0, len(constants))
	for k := range constants {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same error for the same map, whatever its order
	setBy := map[string]string{}
	for _, k := range keys {
		o, ok := byKey[k]
		if !ok {
			return nil, fmt.Errorf("pipeline constant %q: the module has no override of that name or ID", k)
		}
		if other, dup := setBy[o.Name]; dup {
			return nil, fmt.Errorf("pipeline constant %q: override '%s' is also set as %q", k, o.Name, other)
		}
		setBy[o.Name] = k
		v := constants[k]
		if err := fits(o.Type, v); err != nil {
			return nil, fmt.Errorf("pipeline constant %q (override '%s'): %w", k, o.Name, err)
		}
		values[o.Name] = pipelineValue{typ: o.Type, set: true, v: v}
	}
	return values, nil
}

// fits reports whether v converts to a value of the WGSL scalar type typ, as
// WebGPU converts pipeline constants: integers must be integral and in range,
// floats finite in their type.
func fits(typ string, v float64) error {
	switch typ {
	case "bool":
		if math.IsNaN(v) {
			return fmt.Errorf("NaN is not a bool")
		}
	case "i32":
		if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
			return fmt.Errorf("%v is not an i32", v)
		}
	case "u32":
		if v != math.Trunc(v) || v < 0 || v > math.MaxUint32 {
			return fmt.Errorf("%v is not a u32", v)
		}
	case "f32":
		if math.IsNaN(v) || math.IsInf(float64(float32(v)), 0) {
			return fmt.Errorf("%v is not a finite f32", v)
		}
	case "f16":
		if math.IsNaN(v) || math.IsInf(f16Round(v), 0) {
			return fmt.Errorf("%v is not a finite f16", v)
		}
	default:
		return fmt.Errorf("overrides of type %s cannot be set", typ)
	}
	return nil
}

// pruned is the module's syntax tree with only what entry point fn can
// reach: its functions and the module-scope variables they use. Other entry
// points, and the overrides only they need, are no concern of its pipelines.
func (m *Module) pruned(fn *function) *file {
	keepFn := map[*fnDecl]bool{}
	for _, g := range reachable(fn) {
		keepFn[g.decl] = true
	}
	keepVar := map[*varDecl]bool{}
	for _, s := range usedVars(fn, spaceNone, m.checked.globals) {
		keepVar[s.decl] = true
	}
	f := *m.file
	f.Decls = nil
	for _, d := range m.file.Decls {
		switch d := d.(type) {
		case *fnDecl:
			if !keepFn[d] {
				continue
			}
		case *varDecl:
			if d.Kind == "var" && !keepVar[d] {
				continue
			}
		}
		f.Decls = append(f.Decls, d)
	}
	return &f
}

// specializeOverride makes override s a constant while specializing: its
// pipeline value, else its initializer evaluated with the other overrides'
// values. t is its declared type, if any.
func (c *checker) specializeOverride(s *symbol, d *varDecl, t *wgslType) {
	pv := c.spec[s.name]
	if t == nil {
		t = c.builtinTypes[pv.typ]
	}
	if t == nil {
		bugf("override '%s' has no type while specializing", s.name)
	}
	s.kind, s.typ = symConst, t
	switch {
	case pv.set:
		s.val = pipelineConst(t, pv.v)
	case d.Init != nil:
		saveIn, saveMissing := c.inOverrideInit, c.missingSeen
		c.inOverrideInit, c.missingSeen = true, ""
		x := c.rvalue(d.Init)
		missing := c.missingSeen
		c.inOverrideInit, c.missingSeen = saveIn, saveMissing
		if x == nil || !c.convertTo(d.Init, t) {
			s.typ = nil // reported; uses of s are not checked further
			return
		}
		if missing != "" {
			s.missing, s.val = missing, zeroValue(t)
			return
		}
		if x.val == nil {
			c.errorSpan(d.Init, "the initializer of override '%s' is not constant once the overrides are known", s.name)
			s.typ = nil
			return
		}
		s.val = x.val
	default:
		s.missing, s.val = s.name, zeroValue(t)
	}
}

// pipelineConst is pipeline value v as a constant of scalar type t (checked
// by fits).
func pipelineConst(t *wgslType, v float64) *value {
	switch t.Kind {
	case kBool:
		return &value{b: v != 0}
	case kF32:
		return &value{f: float64(float32(v))}
	case kF16:
		return &value{f: f16Round(v)}
	case kI32, kU32:
		return &value{i: int64(v)}
	}
	bugf("override of type '%s'", t)
	return nil
}

// defaultWorkgroupSizes fills the reflected workgroup sizes that only
// specializing can compute (override-expressions beyond integer arithmetic),
// with the overrides' default values; they stay 1 where that fails (an
// override without a default).
func (m *Module) defaultWorkgroupSizes() {
	for i, f := range m.checked.entries {
		unknown := false
		for _, d := range f.wgSize {
			unknown = unknown || d.override != nil && d.val == 0
		}
		if !unknown {
			continue
		}
		if sp, err := m.specialize(f.decl.Name, nil, false); err == nil {
			m.Reflection.EntryPoints[i].WorkgroupSize = sp.WorkgroupSize
		}
	}
}

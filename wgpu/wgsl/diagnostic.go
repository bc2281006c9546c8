package wgsl

import (
	"sort"
	"strings"
)

// Diagnostic filters and language features.
//
// A diagnostic filter sets the severity of a triggering rule for the module
// (a directive), a function or a statement (an attribute). The rules this
// compiler triggers are the uniformity rules: subgroup_uniformity (subgroup
// operations under non-uniform control flow) and derivative_uniformity
// (fragment shaders only, so never here). A severity other than error
// silences the rule: warnings are not reported. Unknown rule names are
// accepted, as the specification asks (it makes them a warning).

var severities = map[string]bool{"error": true, "warning": true, "info": true, "off": true}

// diagFilters maps rule names to severities.
type diagFilters map[string]string

// with is f overridden by g.
func (f diagFilters) with(g diagFilters) diagFilters {
	if len(g) == 0 {
		return f
	}
	out := diagFilters{}
	for k, v := range f {
		out[k] = v
	}
	for k, v := range g {
		out[k] = v
	}
	return out
}

// on reports whether rule is an error under f.
func (f diagFilters) on(rule string) bool { s := f[rule]; return s == "" || s == "error" }

// languageFeatures are the `requires` names this compiler implements. The
// texture features only widen what textures may do; textures themselves are
// rejected where they are used, with their own error.
var languageFeatures = map[string]bool{
	"packed_4x8_integer_dot_product": true, "pointer_composite_access": true,
	"unrestricted_pointer_parameters": true, "subgroup_id": true, "subgroup_uniformity": true,
	"immediate_address_space": true, "linear_indexing": true, "swizzle_assignment": true,
	"readonly_and_readwrite_storage_textures": true, "texture_and_sampler_let": true, "texture_formats_tier1": true,
}

// directives checks the requires and diagnostic directives.
func (c *checker) directives(f *file) {
	for _, r := range f.Requires {
		for i, n := range r.Names {
			if n == "uniform_buffer_standard_layout" {
				if !c.stdUniform {
					c.errorf(r.Poss[i], "language feature '%s' needs Options.UniformStandardLayout (a device with Vulkan's uniformBufferStandardLayout)", n)
				}
				continue
			}
			if !languageFeatures[n] {
				var have []string
				for k := range languageFeatures {
					have = append(have, k)
				}
				sort.Strings(have)
				c.errorf(r.Poss[i], "language feature '%s' is not supported (supported: %s)", n, strings.Join(have, ", "))
			}
		}
	}
	c.diag = c.filters(f.Diagnostics, "diagnostic directive")
}

// filters checks a set of filters on one item and collects them; two
// filters of one rule must agree.
func (c *checker) filters(ds []*diagnostic, what string) diagFilters {
	out := diagFilters{}
	for _, d := range ds {
		if !severities[d.Severity] {
			c.errorf(d.Pos, "unknown diagnostic severity '%s' (want error, warning, info or off)", d.Severity)
			continue
		}
		if old, ok := out[d.Rule]; ok && old != d.Severity {
			c.errorf(d.RulePos, "conflicting %s for '%s': '%s' and '%s'", what, d.Rule, old, d.Severity)
			continue
		}
		out[d.Rule] = d.Severity
	}
	return out
}

// attrFilters checks the @diagnostic attributes among as; others are left
// to the caller.
func (c *checker) attrFilters(as []*attr) diagFilters {
	var ds []*diagnostic
	for _, a := range as {
		if a.Name != "diagnostic" {
			continue
		}
		if d := c.diagAttr(a); d != nil {
			ds = append(ds, d)
		}
	}
	return c.filters(ds, "diagnostic attribute")
}

func (c *checker) diagAttr(a *attr) *diagnostic {
	if len(a.Args) != 2 {
		c.errorf(a.Pos, "@diagnostic takes a severity and a rule name")
		return nil
	}
	sev, ok := a.Args[0].(*ident)
	if !ok {
		c.errorSpan(a.Args[0], "@diagnostic needs a severity: error, warning, info or off")
		return nil
	}
	d := &diagnostic{Pos: a.Pos, Severity: sev.Name, RulePos: a.Args[1].exprPos()}
	switch r := a.Args[1].(type) {
	case *ident:
		d.Rule = r.Name
	case *memberExpr:
		ns, ok := r.X.(*ident)
		if !ok {
			c.errorSpan(a.Args[1], "@diagnostic needs a rule name")
			return nil
		}
		d.Rule = ns.Name + "." + r.Name
	default:
		c.errorSpan(a.Args[1], "@diagnostic needs a rule name")
		return nil
	}
	return d
}

// stmtFilters checks the statement attributes of the file.
func (c *checker) stmtFilters(f *file) {
	c.stmtDiag = map[stmt]diagFilters{}
	for s, as := range f.StmtAttrs {
		for _, a := range as {
			if a.Name != "diagnostic" {
				c.errorf(a.Pos, "attribute '@%s' is not valid on a statement", a.Name)
			}
		}
		c.stmtDiag[s] = c.attrFilters(as)
	}
}

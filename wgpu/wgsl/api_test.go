package wgsl

import (
	goast "go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// publicAPI is the package's whole exported surface: what wgpu, shaders,
// cmd/wgslc and exectest use. The syntax tree, the checked module and the
// stages stay unexported, so they can change without breaking a caller.
var publicAPI = []string{
	"Binding", "Compile", "CompileSPIRV", "EntryPoint", "Error", "ErrorList",
	"Expand", "ExpandReplacing", "Expanded", "IncludeDirective", // include lines (include.go)
	"InternalError", "MatrixConfig", // subgroup matrix multiplications (Reflection.MatrixConfigs)
	"MemberLayout", "Module", "Note", "Options", "Origin", "Override",
	"Race", "RaceBinding", "RaceCheck", // Options.RaceCheck (racecheck.go; RaceBinding a storage buffer's shadow)
	"RaceMaxWorkgroups", "RaceReportWords", // the storage check's limit, the report's size
	"Reflection", "Specialized",
	"WorkgroupInit", "WorkgroupPoison", "WorkgroupUninitialized", "WorkgroupZero", // Options.WorkgroupInit
}

// TestPublicAPI fails when a top-level exported name is added or removed,
// so that growing the public surface is a decision, not an accident.
func TestPublicAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(gotoken.NewFileSet(), path, nil, goparser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *goast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					got = append(got, d.Name.Name)
				}
			case *goast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *goast.TypeSpec:
						if s.Name.IsExported() {
							got = append(got, s.Name.Name)
						}
					case *goast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								got = append(got, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, publicAPI) {
		t.Errorf("exported names:\n got %v\nwant %v", got, publicAPI)
	}
}

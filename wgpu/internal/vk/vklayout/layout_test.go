//go:build cgo && vkheaders

package vklayout

import (
	"slices"
	"testing"
)

// TestLayoutMatchesC compares every generated struct's size, alignment and field offsets with the C compiler's
// from the installed <vulkan/vulkan.h> (CGO_CFLAGS=-I... picks other headers). Headers older than the registry may
// lack a struct (Debian 12's 1.3.239 has no VK_KHR_cooperative_matrix): those structs are listed and skipped; headers
// as new as the registry or newer must have every one.
func TestLayoutMatchesC(t *testing.T) {
	c, headerVersion := cLayout()
	if len(c) != len(goLayout) {
		t.Fatalf("C table has %d entries, Go table %d: regenerate with go generate", len(c), len(goLayout))
	}
	var absent []string
	checked := 0
	for i, e := range goLayout {
		switch {
		case c[i] == Absent:
			if len(absent) == 0 || absent[len(absent)-1] != e.Struct {
				absent = append(absent, e.Struct)
			}
		default:
			checked++
			if e.Value != c[i] {
				t.Errorf("%s.%s: Go %d, C %d", e.Struct, e.Field, e.Value, c[i])
			}
		}
	}
	absent = slices.Compact(absent)
	if len(absent) > 0 && headerVersion >= registryVersion {
		t.Errorf("headers VK_HEADER_VERSION %d (registry %d) lack %v", headerVersion, registryVersion, absent)
	}
	if len(absent) > 0 {
		t.Logf("headers VK_HEADER_VERSION %d are older than the registry (%d): not checked: %v", headerVersion, registryVersion, absent)
	}
	t.Logf("%d sizes, alignments and offsets checked against headers VK_HEADER_VERSION %d", checked, headerVersion)
}

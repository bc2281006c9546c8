//go:build cgo && vkheaders

package vklayout

import "testing"

func TestLayoutMatchesC(t *testing.T) {
	c := cLayout()
	if len(c) != len(goLayout) {
		t.Fatalf("C table has %d entries, Go table %d: regenerate with go generate", len(c), len(goLayout))
	}
	for i, e := range goLayout {
		if e.Value != c[i] {
			t.Errorf("%s.%s: Go %d, C %d", e.Struct, e.Field, e.Value, c[i])
		}
	}
	t.Logf("%d sizes, alignments and offsets checked", len(c))
}

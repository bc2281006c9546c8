package wgsl

import (
	"fmt"
	"testing"
)

// TestAddrSpaceNames checks the WGSL spellings of the address spaces and
// access modes both ways.
func TestAddrSpaceNames(t *testing.T) {
	spaces := map[addrSpace]string{spaceFunction: "function", spacePrivate: "private", spaceWorkgroup: "workgroup",
		spaceUniform: "uniform", spaceStorage: "storage", spacePushConstant: "push_constant", spaceNone: ""}
	for s, name := range spaces {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), name)
		}
		if got, ok := spaceNamed(name); !ok || got != s {
			t.Errorf("spaceNamed(%q) = %v, %v; want %v", name, got, ok, s)
		}
	}
	if got, ok := spaceNamed("immediate"); !ok || got != spacePushConstant {
		t.Errorf("spaceNamed(immediate) = %v, %v", got, ok)
	}
	for _, bad := range []string{"Storage", "handle", "read", "storage "} {
		if got, ok := spaceNamed(bad); ok {
			t.Errorf("spaceNamed(%q) = %v, want none", bad, got)
		}
	}
	if got := fmt.Sprintf("%q", spaceStorage); got != `"storage"` {
		t.Errorf("%%q of SpaceStorage = %s", got)
	}
	modes := map[access]string{accessRead: "read", accessWrite: "write", accessReadWrite: "read_write"}
	for a, name := range modes {
		if a.String() != name {
			t.Errorf("%d.String() = %q, want %q", a, a.String(), name)
		}
		if got, ok := accessNamed(name); !ok || got != a {
			t.Errorf("accessNamed(%q) = %v, %v; want %v", name, got, ok, a)
		}
	}
	for _, bad := range []string{"", "readwrite", "Read"} {
		if got, ok := accessNamed(bad); ok {
			t.Errorf("accessNamed(%q) = %v, want none", bad, got)
		}
	}
}

package wgsl

import (
	"fmt"
	"testing"
)

// TestAddrSpaceNames checks the WGSL spellings of the address spaces and
// access modes both ways.
func TestAddrSpaceNames(t *testing.T) {
	spaces := map[AddrSpace]string{SpaceFunction: "function", SpacePrivate: "private", SpaceWorkgroup: "workgroup",
		SpaceUniform: "uniform", SpaceStorage: "storage", SpacePushConstant: "push_constant", SpaceNone: ""}
	for s, name := range spaces {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), name)
		}
		if got, ok := spaceNamed(name); !ok || got != s {
			t.Errorf("spaceNamed(%q) = %v, %v; want %v", name, got, ok, s)
		}
	}
	if got, ok := spaceNamed("immediate"); !ok || got != SpacePushConstant {
		t.Errorf("spaceNamed(immediate) = %v, %v", got, ok)
	}
	for _, bad := range []string{"Storage", "handle", "read", "storage "} {
		if got, ok := spaceNamed(bad); ok {
			t.Errorf("spaceNamed(%q) = %v, want none", bad, got)
		}
	}
	if got := fmt.Sprintf("%q", SpaceStorage); got != `"storage"` {
		t.Errorf("%%q of SpaceStorage = %s", got)
	}
	modes := map[Access]string{AccessRead: "read", AccessWrite: "write", AccessReadWrite: "read_write"}
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

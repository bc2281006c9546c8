package wgpueval

import (
	"runtime/debug"
	"testing"
)

// TestVersionBuildCommit: where the toolchain recorded no commit (go test
// builds record none, as -buildvcs=false and git worktrees do), Version
// reports the one the linker set (buildCommit, -ldflags -X), which
// scripts/device-check.sh sets; before, such builds said "devel" with no
// commit, and so did the JSON of every figure they measured.
func TestVersionBuildCommit(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				t.Skipf("this test binary records commit %s", s.Value)
			}
		}
	}
	defer func(c string) { buildCommit = c }(buildCommit)
	buildCommit = ""
	if _, c := Version(); c != "" {
		t.Errorf("commit %q without one recorded or set", c)
	}
	buildCommit = "0123456789abcdef0123456789abcdef01234567+modified"
	if _, c := Version(); c != buildCommit {
		t.Errorf("commit %q, want the linker's %q", c, buildCommit)
	}
}

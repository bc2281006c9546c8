package model

import (
	"strings"
	"testing"
)

// CheckKernelsEnv accepts every kernel set's name on every architecture
// (amd64's and arm64's) and unset, and refuses any other value by name.
func TestCheckKernelsEnv(t *testing.T) {
	for _, v := range []string{"", "generic", "avx2", "avx512", "amx", "neon"} {
		t.Setenv(kernelsEnv, v)
		if err := CheckKernelsEnv(); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"sve", "NEON", "avx"} {
		t.Setenv(kernelsEnv, v)
		if err := CheckKernelsEnv(); err == nil || !strings.Contains(err.Error(), v) || !strings.Contains(err.Error(), "neon") {
			t.Errorf("%q: err = %v, want an error naming it and the sets", v, err)
		}
	}
}

package shaders

import (
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// The tests run the kernels with poisoned workgroup memory (unless
// $WGPU_EVAL_WORKGROUP_INIT says otherwise): a kernel that reads an element
// it has not written gets NaNs or all-ones integers, not the zeros that
// would hide it, nor the leftovers that production's uninitialized memory
// holds.
func init() { defaultWorkgroupInit = wgsl.WorkgroupPoison }

// TestWorkgroupInitEnv: each value of $WGPU_EVAL_WORKGROUP_INIT, the
// default without it, and a clear error for any other, from the kernel's
// compile.
func TestWorkgroupInitEnv(t *testing.T) {
	for v, want := range map[string]wgsl.WorkgroupInit{"": defaultWorkgroupInit, "none": wgsl.WorkgroupUninitialized,
		"zero": wgsl.WorkgroupZero, "poison": wgsl.WorkgroupPoison} {
		t.Setenv(WorkgroupInitEnv, v)
		if got, err := workgroupInit(); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	t.Setenv(WorkgroupInitEnv, "zeros")
	d := newTestDev(t)
	_, err := NewKernel(d.dev, "matmul_shared.wgsl", false)
	if err == nil || !strings.Contains(err.Error(), WorkgroupInitEnv) || !strings.Contains(err.Error(), `"zeros"`) {
		t.Errorf("bad value: %v", err)
	}
}

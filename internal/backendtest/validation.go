package backendtest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// Validate runs the test's GPUs under the Khronos validation layer, as a
// user does ($WGPU_EVAL_VALIDATION=1, for the test), where the layer is
// installed; where it is not, the test fails in CI (prereq.Validation) and
// runs without it elsewhere. It reports whether the layer is on: its
// messages then reach the warnings, each prefixed backend.ValidationPrefix.
func Validate(t *testing.T) bool {
	t.Helper()
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	enabled := inst.ValidationEnabled()
	inst.Close()
	prereq.Validation(t, enabled)
	if enabled {
		t.Setenv(backend.ValidationEnv, "1")
	}
	return enabled
}

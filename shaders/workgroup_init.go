package shaders

import (
	"fmt"
	"os"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// WorkgroupInitEnv is the environment variable that sets how the kernels'
// workgroup memory starts: "none" (the default: as it is), "zero" (WGSL's
// zero value) or "poison" (NaNs and all-ones integers, so that a kernel
// reading memory it never wrote gives visibly wrong results).
//
// The kernels write every element of workgroup memory they read before
// they read it, so zeroing it (up to 140 stores per invocation, in the
// attention kernels, and a barrier) is work for nothing; the tests run them
// with poison to hold them to that (zeros would hide a kernel that relies on
// them), and "zero" is there to rule it out when a device's results look
// wrong.
const WorkgroupInitEnv = "WGPU_EVAL_WORKGROUP_INIT"

// defaultWorkgroupInit is the start of workgroup memory without
// $WGPU_EVAL_WORKGROUP_INIT; this package's tests poison it.
var defaultWorkgroupInit = wgsl.WorkgroupUninitialized

// workgroupInit is how the kernels' workgroup memory starts:
// $WGPU_EVAL_WORKGROUP_INIT, else defaultWorkgroupInit. Any other value is
// an error, never ignored.
func workgroupInit() (wgsl.WorkgroupInit, error) {
	switch v := os.Getenv(WorkgroupInitEnv); v {
	case "":
		return defaultWorkgroupInit, nil
	case "none":
		return wgsl.WorkgroupUninitialized, nil
	case "zero":
		return wgsl.WorkgroupZero, nil
	case "poison":
		return wgsl.WorkgroupPoison, nil
	default:
		return 0, fmt.Errorf("$%s %q: want none, zero or poison", WorkgroupInitEnv, v)
	}
}

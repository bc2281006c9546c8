package exectest

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// TestSubgroupMatrixNativeValid emits the programs of
// TestSubgroupMatrixLowered as SPV_KHR_cooperative_matrix
// (Options.CooperativeMatrix) and validates them with Debian 13's spirv-val
// ($WGPU_TEST_SPIRV_VAL_NEW): no Vulkan implementation here offers
// cooperative matrices, so they are checked, not run.
func TestSubgroupMatrixNativeValid(t *testing.T) {
	val := prereq.SpirvValNew(t)
	for name, c := range sgmCases {
		t.Run(name, func(t *testing.T) {
			m, err := wgsl.Compile(name+".wgsl", c.source(), wgsl.Options{CooperativeMatrix: true})
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4*len(m.SPIRV))
			for i, w := range m.SPIRV {
				binary.LittleEndian.PutUint32(buf[4*i:], w)
			}
			file := filepath.Join(t.TempDir(), "m.spv")
			if err := os.WriteFile(file, buf, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(val, "--target-env", "vulkan1.1", file).CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s\n%s", val, err, out, c.source())
			}
		})
	}
}

package vklayout

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDefaultBuildNeedsNoVulkanHeaders: `go test ./...` on a machine with gcc but
// without libvulkan-dev must not compile the file that includes <vulkan/vulkan.h>;
// only -tags vkheaders (as .ci/run does) compares the layouts with C's.
func TestDefaultBuildNeedsNoVulkanHeaders(t *testing.T) {
	cmd := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}: {{.CgoFiles}}", ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasSuffix(line, ": []") {
			t.Errorf("the default build compiles cgo files (they need libvulkan-dev): %s", line)
		}
	}
}

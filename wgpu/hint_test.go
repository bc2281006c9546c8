package wgpu

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestInstallHint(t *testing.T) {
	loader := InstallHint(fmt.Errorf("open: %w", ErrNoLoader))
	if runtime.GOOS == "linux" && !strings.Contains(loader, "libvulkan1") {
		t.Errorf("no-loader hint names no package: %q", loader)
	}
	if d := InstallHint(ErrNoDriver); !strings.Contains(d, "mesa-vulkan-drivers") {
		t.Errorf("no-driver hint: %q", d)
	}
	if h := InstallHint(errors.New("other")); h != "" {
		t.Errorf("hint for an unrelated error: %q", h)
	}
}

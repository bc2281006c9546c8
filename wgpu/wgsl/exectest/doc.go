// Package exectest holds the WGSL compiler's execution tests: WGSL programs
// compiled by wgpu/wgsl run through wgpu on whatever Vulkan device is present
// (lavapipe in CI, WGPU_ADAPTER selects another), their outputs checked
// against values computed in Go. Without a Vulkan driver they skip.
//
// It is a test-only package that sits above both wgpu and wgpu/wgsl, so the
// compiler itself keeps importing nothing of this module. Nothing imports it.
package exectest

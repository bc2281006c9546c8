#!/bin/sh
# build_spirv.sh rebuilds the SPIR-V test fixtures from their GLSL sources (Debian: glslang-tools).
# Run from package wgpu's directory (go generate does).
set -e
for f in testdata/*.comp; do
	glslangValidator -V --target-env vulkan1.1 --quiet -o "${f%.comp}.spv" "$f"
done

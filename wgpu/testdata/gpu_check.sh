#!/bin/sh
# gpu_check.sh runs the wgpu tests and benchmarks on a lent GPU machine (NVIDIA's Vulkan driver), as one script.
#
# Prepare on the development machine, from the repository root (see the device tool's README):
#   echo /.gl/ >>.git/info/exclude; mkdir -p .gl /tmp/amd64/partial
#   o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update; (cd .gl && apt-get $o download libvulkan1 vulkan-validationlayers)
#   CGO_ENABLED=0 go test -c -o .gl/wgpu.test ./wgpu
# Then: run(command="sh wgpu/testdata/gpu_check.sh", carry=[".gl"], timeout_s=300).
set -e
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$nv" ]; then export VK_DRIVER_FILES="$nv"; fi
export WGPU_REQUIRE_VULKAN=1
cd wgpu
../.gl/wgpu.test -test.v -test.count=1 2>&1 | tee "${OUT:-/tmp}/wgpu-tests.txt" | grep -E '^(---|ok|FAIL|PASS)|compute_test|buffer_test'
WGPU_NO_VALIDATION=1 ../.gl/wgpu.test -test.run XXX -test.bench . -test.benchtime 2s 2>&1 | tee "${OUT:-/tmp}/wgpu-bench.txt"

#!/usr/bin/env bash
# vulkan-headers-trixie.sh DIR unpacks Debian 13 (trixie)'s libvulkan-dev into DIR without installing it, for a Debian 12
# machine (CI) whose own vk.xml and headers (1.3.239) predate VK_KHR_cooperative_matrix:
#
#   DIR/usr/share/vulkan/registry/vk.xml   the registry package vk is generated from ($WGPU_VK_XML: go generate in
#                                          wgpu/internal/vk, and gen's TestGeneratedUpToDate);
#   DIR/usr/include/vulkan/                the matching C headers, so the vklayout test can check the new structs
#                                          too (CGO_CFLAGS=-IDIR/usr/include go test -tags vkheaders ...).
#
# The .deb is fetched with apt-get download through a private apt state (a trixie sources list and lists of its own;
# the system's sources stay as they are) and unpacked with dpkg -x. Rerunning replaces DIR's contents.
#
# Usage: scripts/vulkan-headers-trixie.sh DIR && export WGPU_VK_XML=DIR/usr/share/vulkan/registry/vk.xml
set -euo pipefail

dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$dir/debs
rm -rf "$work" "${dir:?}/usr"
mkdir -p "$work/lists/partial"

mirror=$(sed -nE 's/^URIs: *(http[^ ]*debian\/?)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 || true)
echo "deb ${mirror:-http://deb.debian.org/debian} trixie main" >"$work/trixie.list"
apt_t=(-o "Dir::Etc::SourceList=$work/trixie.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists")
apt-get "${apt_t[@]}" update -qq >/dev/null
# The version is trixie's own (apt would otherwise prefer an installed bookworm one of the same name).
version=$(apt-cache "${apt_t[@]}" madison libvulkan-dev | awk -F'|' '$3 ~ /trixie/ {gsub(/ /, "", $2); print $2; exit}')
if [ -z "$version" ]; then
	echo "vulkan-headers-trixie: trixie has no libvulkan-dev in $work/trixie.list's mirror" >&2
	exit 1
fi
(cd "$work" && apt-get "${apt_t[@]}" download "libvulkan-dev=$version" >/dev/null 2>&1) || {
	echo "vulkan-headers-trixie: apt-get download libvulkan-dev=$version from trixie failed" >&2
	exit 1
}
dpkg -x "$work"/libvulkan-dev_*.deb "$dir"
rm -rf "$work"
xml=$dir/usr/share/vulkan/registry/vk.xml
if [ ! -f "$xml" ] || [ ! -f "$dir/usr/include/vulkan/vulkan_core.h" ]; then
	echo "vulkan-headers-trixie: libvulkan-dev $version has no vk.xml or vulkan_core.h" >&2
	exit 1
fi
header=$(sed -nE 's/^#define VK_HEADER_VERSION ([0-9]+)$/\1/p' "$dir/usr/include/vulkan/vulkan_core.h")
echo "vulkan-headers-trixie: libvulkan-dev $version (VK_HEADER_VERSION $header) in $dir; export WGPU_VK_XML=$xml"

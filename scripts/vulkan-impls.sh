#!/usr/bin/env bash
# vulkan-impls.sh DIR installs two more Vulkan implementations into DIR, beside the system's (Debian 12's lavapipe,
# Mesa 22.3), without installing any package, and writes DIR/impls.json for the tests ($WGPU_TEST_VULKAN_IMPLS):
#
#   swiftshader  Google's SwiftShader from Debian's chromium-common package (a Vulkan 1.3 "cpu" device: subgroup
#                size 4, 256 invocations, no shader-f16), with the much newer Khronos validation layer that package
#                carries (its own layer manifest, used only for SwiftShader);
#   lavapipe25   Mesa 25's lavapipe from bookworm-backports (Vulkan 1.4), with the newer libdrm it needs, loaded
#                from DIR through LD_LIBRARY_PATH only in the processes that test it;
#   lavapipe-16of32  the system's lavapipe (Debian 12's Mesa 22.3, where mesa-vulkan-drivers is installed) with
#                LP_NATIVE_VECTOR_WIDTH=1024: it reports subgroups of 32 (NVIDIA's size; the subgroup_size builtin
#                says 32 too) and runs 16 lanes of each, the rest inactive, as Intel's ANV and MoltenVK on AMD GPUs do
#                (shaders' TestPartialSubgroups checks that, from WGPU_TEST_PARTIAL_SUBGROUPS). Mesa 25's lavapipe
#                does the same but compiles far slower here: TestNormRows with the shader cache off took 184 s at the
#                default width and past 300 s at 1024, against 35 s and 44 s on Mesa 22.3, and the shaders suite at
#                1024 on it passed its rerun's 25-minute limit. The cooperative-matrix tests skip there: their
#                kernels need whole subgroups, which the product asks matrix-unit devices for, and lowered they pass
#                lavapipe's loop limit at 32.
#
# Debian packages are fetched with apt-get download (a private apt state for backports) and unpacked with dpkg -x.
# Run as any user with network access to a Debian mirror; rerunning replaces DIR's contents.
#
# It also unpacks the same Mesa's RADV, which with RADV_FORCE_FAMILY compiles pipelines for an AMD GPU it does not
# have (compile only: statistics, no runs), and lists it in DIR/compilers.json ($WGPU_TEST_VULKAN_COMPILERS).
#
# Usage: scripts/vulkan-impls.sh DIR && export WGPU_TEST_VULKAN_IMPLS=DIR/impls.json WGPU_TEST_VULKAN_COMPILERS=DIR/compilers.json
set -euo pipefail

dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$dir/debs
rm -rf "$work" "$dir/swiftshader" "$dir/lavapipe25" "$dir/radv25"
mkdir -p "$work/lists/partial" "$dir/swiftshader/layers" "$dir/lavapipe25" "$dir/radv25"

# SwiftShader: Debian's own chromium-common, from the machine's configured sources.
(cd "$work" && apt-get download chromium-common >/dev/null 2>&1) || {
	echo "vulkan-impls: apt-get download chromium-common failed (apt-get update first?)" >&2
	exit 1
}
dpkg -x "$work"/chromium-common_*.deb "$work/chromium"
chromium=$(dpkg-deb -f "$work"/chromium-common_*.deb Version)
ss=$dir/swiftshader
cp "$work/chromium/usr/lib/chromium/libvk_swiftshader.so" "$work/chromium/usr/lib/chromium/libVkLayer_khronos_validation.so" "$ss/"
cat >"$ss/icd.json" <<EOF
{"file_format_version": "1.0.0", "ICD": {"library_path": "$ss/libvk_swiftshader.so", "api_version": "1.0.5"}}
EOF
# The manifest lists the instance extensions the layer implements: the loader answers for the layer from it, and
# wgpu asks for synchronization validation only through an extension listed here (VK_EXT_layer_settings, else
# VK_EXT_validation_features; without them the layer ran without it).
cat >"$ss/layers/VkLayer_khronos_validation.json" <<EOF
{"file_format_version": "1.2.0", "layer": {"name": "VK_LAYER_KHRONOS_validation", "type": "GLOBAL",
 "library_path": "$ss/libVkLayer_khronos_validation.so", "api_version": "1.3.250", "implementation_version": "1",
 "description": "Khronos validation layer, as Debian's chromium-common package builds it",
 "instance_extensions": [{"name": "VK_EXT_debug_report", "spec_version": "9"}, {"name": "VK_EXT_debug_utils", "spec_version": "1"},
  {"name": "VK_EXT_validation_features", "spec_version": "2"}, {"name": "VK_EXT_layer_settings", "spec_version": "2"}]}}
EOF

# Mesa 25 lavapipe from bookworm-backports, through a private apt state (the system's sources stay as they are).
mirror=$(sed -nE 's/^URIs: *(http[^ ]*debian\/?)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 || true)
echo "deb ${mirror:-http://deb.debian.org/debian} bookworm-backports main" >"$work/backports.list"
apt_bp=(-o "Dir::Etc::SourceList=$work/backports.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists")
apt-get "${apt_bp[@]}" update -qq >/dev/null
(cd "$work" && apt-get "${apt_bp[@]}" download mesa-vulkan-drivers libdrm2 libdrm-amdgpu1 >/dev/null 2>&1) || {
	echo "vulkan-impls: apt-get download from bookworm-backports failed" >&2
	exit 1
}
for f in "$work"/mesa-vulkan-drivers_*.deb "$work"/libdrm2_*.deb "$work"/libdrm-amdgpu1_*.deb; do
	dpkg -x "$f" "$work/mesa"
done
lv=$dir/lavapipe25
cp -P "$work"/mesa/usr/lib/x86_64-linux-gnu/{libvulkan_lvp.so,libdrm.so.2*,libdrm_amdgpu.so.1*} "$lv/"
cat >"$lv/icd.json" <<EOF
{"file_format_version": "1.0.1", "ICD": {"library_path": "$lv/libvulkan_lvp.so", "api_version": "1.4.305"}}
EOF
mesa=$(dpkg-deb -f "$work"/mesa-vulkan-drivers_*.deb Version)

# The same Mesa's RADV, for compiling only: with RADV_FORCE_FAMILY it offers an AMD GPU on "null hardware"
# whose pipelines ACO (AMD's shader compiler) really compiles, with statistics (registers, spills), but which
# can run nothing. navi31 (RX 7900 XTX, RDNA3) has cooperative matrices; navi21 (RX 6900, RDNA2) has none;
# vega10 (RX Vega 64, GCN 5) and polaris10 (RX 480/580, GCN 4, no 16-bit floats) run subgroups of 64.
# Its shader cache is off (every pipeline compiled afresh, the user's cache untouched). It needs Debian 12's
# libLLVM-15 (mesa-vulkan-drivers' dependency) and the libdrm above.
rv=$dir/radv25
cp -P "$work"/mesa/usr/lib/x86_64-linux-gnu/{libvulkan_radeon.so,libdrm.so.2*,libdrm_amdgpu.so.1*} "$rv/"
cat >"$rv/icd.json" <<EOF
{"file_format_version": "1.0.1", "ICD": {"library_path": "$rv/libvulkan_radeon.so", "api_version": "1.4.305"}}
EOF

# The system's lavapipe, for lavapipe-16of32.
partial=
for f in /usr/share/vulkan/icd.d/lvp_icd.x86_64.json /usr/share/vulkan/icd.d/lvp_icd.json; do
	if [ -f "$f" ]; then
		partial=",
  {\"name\": \"lavapipe-16of32\", \"icd\": \"$f\", \"env\": {\"LP_NATIVE_VECTOR_WIDTH\": \"1024\", \"WGPU_TEST_PARTIAL_SUBGROUPS\": \"16\"}, \"expect\": \"1024 bits\"}"
		break
	fi
done
if [ -z "$partial" ]; then
	echo "vulkan-impls: no system lavapipe (Debian: mesa-vulkan-drivers): lavapipe-16of32 not listed" >&2
fi

cat >"$dir/impls.json" <<EOF
[
  {"name": "swiftshader", "icd": "$ss/icd.json", "layer_path": "$ss/layers", "expect": "SwiftShader"},
  {"name": "lavapipe25", "icd": "$lv/icd.json", "lib_path": "$lv", "expect": "Mesa 25"}$partial
]
EOF
cat >"$dir/compilers.json" <<EOF
[
  {"name": "radv25-navi31", "icd": "$rv/icd.json", "lib_path": "$rv", "env": {"RADV_FORCE_FAMILY": "navi31", "MESA_SHADER_CACHE_DISABLE": "true"}, "expect": "RADV NAVI31"},
  {"name": "radv25-navi21", "icd": "$rv/icd.json", "lib_path": "$rv", "env": {"RADV_FORCE_FAMILY": "navi21", "MESA_SHADER_CACHE_DISABLE": "true"}, "expect": "RADV NAVI21"},
  {"name": "radv25-vega10", "icd": "$rv/icd.json", "lib_path": "$rv", "env": {"RADV_FORCE_FAMILY": "vega10", "MESA_SHADER_CACHE_DISABLE": "true"}, "expect": "RADV VEGA10"},
  {"name": "radv25-polaris10", "icd": "$rv/icd.json", "lib_path": "$rv", "env": {"RADV_FORCE_FAMILY": "polaris10", "MESA_SHADER_CACHE_DISABLE": "true"}, "expect": "RADV POLARIS10"}
]
EOF
rm -rf "$work"
echo "vulkan-impls: SwiftShader and its validation layer (chromium-common $chromium) and Mesa $mesa lavapipe in $dir; export WGPU_TEST_VULKAN_IMPLS=$dir/impls.json; Mesa $mesa RADV (compile only): export WGPU_TEST_VULKAN_COMPILERS=$dir/compilers.json"

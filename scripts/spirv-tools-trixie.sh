#!/usr/bin/env bash
# spirv-tools-trixie.sh DIR unpacks Debian 13 (trixie)'s spirv-tools and spirv-headers into DIR, without installing
# any package, and writes DIR/spirv-val, a wrapper that runs trixie's spirv-val (SPIRV-Tools 2025.1, which knows
# SPV_KHR_cooperative_matrix; Debian 12's does not) on trixie's own libc6, libstdc++6 and libgcc-s1 through their
# dynamic loader. DIR/usr/include/spirv/unified1 then holds trixie's SPIR-V grammar.
#
# The packages are fetched with apt-get download through a private apt state (a trixie sources entry used only
# here; the system's sources stay as they are) and unpacked with dpkg -x. Run as any user with network access to a
# Debian mirror; rerunning replaces DIR's contents.
#
# Usage: scripts/spirv-tools-trixie.sh DIR && export WGPU_TEST_SPIRV_VAL_NEW=DIR/spirv-val
set -euo pipefail

dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$dir/debs
rm -rf "$work" "${dir:?}/usr" "${dir:?}/lib" "${dir:?}/lib64" "${dir:?}/etc" "${dir:?}/spirv-val"
mkdir -p "$work/lists/partial"

mirror=$(sed -nE 's/^URIs: *(http[^ ]*debian\/?)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 || true)
echo "deb ${mirror:-http://deb.debian.org/debian} trixie main" >"$work/trixie.list"
apt_trixie=(-o "Dir::Etc::SourceList=$work/trixie.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists")
apt-get "${apt_trixie[@]}" update -qq >/dev/null
pkgs=(spirv-tools spirv-headers libc6 libstdc++6 libgcc-s1)
(cd "$work" && apt-get "${apt_trixie[@]}" download "${pkgs[@]}" >/dev/null 2>&1) || {
	echo "spirv-tools-trixie: apt-get download ${pkgs[*]} from trixie failed" >&2
	exit 1
}
for p in "${pkgs[@]}"; do
	dpkg -x "$work/${p}"_*.deb "$dir"
done
version=$(dpkg-deb -f "$work"/spirv-tools_*.deb Version)

cat >"$dir/spirv-val" <<EOF
#!/bin/sh
# Debian 13's spirv-val ($version) on Debian 13's C libraries, unpacked by scripts/spirv-tools-trixie.sh.
exec "$dir/usr/lib64/ld-linux-x86-64.so.2" --library-path "$dir/usr/lib/x86_64-linux-gnu" "$dir/usr/bin/spirv-val" "\$@"
EOF
chmod +x "$dir/spirv-val"
rm -rf "$work"
"$dir/spirv-val" --version >/dev/null || {
	echo "spirv-tools-trixie: $dir/spirv-val does not run" >&2
	exit 1
}
echo "spirv-tools-trixie: spirv-tools $version in $dir; export WGPU_TEST_SPIRV_VAL_NEW=$dir/spirv-val"

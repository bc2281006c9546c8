#!/usr/bin/env bash
# device-check.sh checks wgpu-eval on a machine with a real GPU and its Vulkan driver (an NVIDIA card, say), in
# under 5 minutes all told: it lists the Vulkan adapters, runs the tests that compare the GPU with the CPU
# (pipeline's TestGPUConformance: every evaluation method; shaders: every kernel against its reference), then
# `wgpu-eval bench` on the GPT-2 124M shape with f16 and f32 weights. Everything goes into one folder: $OUT, or
# ./device-check-<date> when OUT is unset, with summary.txt first to read. It makes at most 8 files there (the
# device tool brings back no more).
#
# Usage:
#   scripts/device-check.sh [ADAPTER]     run the checks
#   scripts/device-check.sh --build DIR   only build the binaries into DIR (CGO_ENABLED=0), for a machine without Go
#
# ADAPTER picks the Vulkan adapter: a number N as `wgpu-eval devices` lists it ([N]), or part of its name
# (case-insensitive). The default is the first adapter that is not a CPU implementation (lavapipe, SwiftShader);
# where there is none, adapter 0 with a warning. The tests get it as WGPU_ADAPTER=N: wgpu's
# Instance.RequestAdapter reads a decimal value as an index into EnumerateAdapters' order (best first: discrete,
# integrated, virtual, other, cpu), any other value as a case-insensitive part of the name, and "" as the best
# adapter; bench gets --device gpu:N, counted the same way.
#
# Environment (all optional):
#   BIN_DIR     prebuilt wgpu-eval, pipeline.test and shaders.test (from --build); default: build them with go
#   MODEL       bench's --model (default 124M; "tiny" for lavapipe, which is far too slow for 124M)
#   CTX         bench's --ctx (default 1024; 0 is the model's positions)
#   BATCHES     bench's --batch (default 1,2,4,8,16,32,64)
#   RUNS        bench's --runs (default 3)
#   PRECISIONS  weight types to bench (default "f16 f32"; f16 is skipped where the adapter lacks shader-f16)
#   BUDGET_S    seconds the whole script may take (default 290); each step is also capped on its own
#   GL_DEBS     a folder of .deb files (libvulkan1, ...) unpacked into / when no Vulkan loader is installed (default .gl)
#
# On the device tool's machine, which has no Go: build here, carry the binaries and the loader, run there:
#   scripts/device-check.sh --build .gl/bin
#   run(command="BIN_DIR=.gl/bin bash scripts/device-check.sh", carry=[".gl"], timeout_s=330)
# On lavapipe, to prove the script end to end: MODEL=tiny CTX=64 BATCHES=1,2 RUNS=1 scripts/device-check.sh
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

build() { # build DIR: the CLI and the two test binaries, static
	mkdir -p "$1"
	CGO_ENABLED=0 go build -o "$1/wgpu-eval" ./cmd/wgpu-eval
	CGO_ENABLED=0 go test -c -o "$1/pipeline.test" ./pipeline
	CGO_ENABLED=0 go test -c -o "$1/shaders.test" ./shaders
}

if [[ ${1:-} == --build ]]; then
	[[ -n ${2:-} ]] || { echo "usage: $0 --build DIR" >&2; exit 2; }
	build "$2"
	exit 0
fi

out_dir=${OUT:-$root/device-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out_dir"
summary=$out_dir/summary.txt
: >"$summary"
deadline=$((SECONDS + ${BUDGET_S:-290}))
model=${MODEL:-124M}
ctx=${CTX:-1024}
batches=${BATCHES:-1,2,4,8,16,32,64}
runs=${RUNS:-3}
precisions=${PRECISIONS:-f16 f32}
failed=0

note() { echo "$*" | tee -a "$summary"; }

# step NAME LIMIT_S LOG CMD...: runs CMD with a timeout of LIMIT_S seconds or what is left of the budget, whichever
# is less, appending its output to LOG, and notes how it went. A failed step does not stop the script.
step() {
	local name=$1 limit=$2 log=$3 left rc start
	shift 3
	left=$((deadline - SECONDS))
	if ((left < 10)); then
		note "SKIP  $name (no time left of the budget)"
		failed=1
		return 0
	fi
	((limit < left)) || limit=$left
	echo "=== $name (timeout ${limit}s): $*" >>"$log"
	start=$SECONDS
	if timeout --kill-after=5 "$limit" "$@" >>"$log" 2>&1; then rc=0; else rc=$?; fi
	if ((rc == 0)); then
		note "ok    $name ($((SECONDS - start)) s)"
	elif ((rc == 124 || rc == 137)); then
		note "TIME  $name (killed after ${limit} s; see $(basename "$log"))"
		failed=1
	else
		note "FAIL  $name (exit $rc after $((SECONDS - start)) s; see $(basename "$log"))"
		failed=1
	fi
	return 0
}

note "device-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on ${HOSTNAME:-?}, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# The Vulkan loader and NVIDIA's driver manifest, where the machine needs help finding them.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
	shopt -s nullglob
	debs=("${GL_DEBS:-.gl}"/*.deb)
	shopt -u nullglob
	if ((${#debs[@]} > 0)) && [[ $(id -u) == 0 ]]; then
		for f in "${debs[@]}"; do dpkg -x "$f" /; done
		ldconfig
		note "unpacked ${#debs[@]} packages from ${GL_DEBS:-.gl} (no Vulkan loader was installed)"
	else
		note "warning: no libvulkan.so.1 in ldconfig's cache"
	fi
fi
nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [[ -z ${VK_DRIVER_FILES:-} && -f $nv_icd ]]; then
	export VK_DRIVER_FILES=$nv_icd
	note "VK_DRIVER_FILES=$nv_icd"
fi

# The binaries.
bin=${BIN_DIR:-}
if [[ -z $bin ]]; then
	bin=$(mktemp -d)
	trap 'rm -rf "$bin"' EXIT
	step "build" 120 "$out_dir/build.txt" "$root/scripts/device-check.sh" --build "$bin"
fi
bin=$(cd "$bin" && pwd)
if [[ ! -x $bin/wgpu-eval ]]; then
	note "FAIL  no $bin/wgpu-eval: nothing more to check"
	exit 1
fi
"$bin/wgpu-eval" version | tee -a "$summary"

# The adapters, and which one to check.
step "devices" 30 "$out_dir/devices.txt" "$bin/wgpu-eval" devices
want=${1:-}
index=
if [[ $want =~ ^[0-9]+$ ]]; then
	index=$want
elif [[ -n $want ]]; then
	index=$(grep -iF -- "$want" "$out_dir/devices.txt" | sed -nE 's/^\[([0-9]+)\] .*/\1/p' | head -n1 || true)
else
	index=$(sed -nE 's/^\[([0-9]+)\] .*, (discrete-gpu|integrated-gpu|virtual-gpu|other)\)$/\1/p' "$out_dir/devices.txt" | head -n1 || true)
	if [[ -z $index ]]; then
		index=0
		note "warning: every adapter is a CPU implementation: checking adapter 0, whose speed says nothing about a GPU"
	fi
fi
if [[ -z $index ]]; then
	note "FAIL  no adapter named like \"$want\" (see devices.txt)"
	exit 1
fi
adapter=$(sed -nE "s/^\[$index\] (.*)$/\1/p" "$out_dir/devices.txt")
note "adapter [$index] ${adapter:-(not listed)}"
export WGPU_ADAPTER=$index

# The GPU against the CPU: every method (pipeline), every kernel (shaders). Test binaries run in their package's
# folder, as go test runs them, for their testdata.
tests=$out_dir/tests.txt
export CI=true WGPU_REQUIRE_VULKAN=1
step "pipeline GPUConformance" 100 "$tests" \
	env -C pipeline "$bin/pipeline.test" -test.run GPUConformance -test.count=1 -test.v -test.timeout 95s
step "shaders tests" 90 "$tests" \
	env -C shaders "$bin/shaders.test" -test.count=1 -test.timeout 85s
grep -E '^(--- |FAIL|ok|PASS)' "$tests" >>"$summary" || true

# Speed: one bench per weight type. The human tables go to bench.txt (and the summary), the figures to JSON.
f16=0
awk -v head="[$index] " 'index($0, head) == 1 { on = 1; next } /^\[[0-9]+\] / { on = 0 } on' "$out_dir/devices.txt" |
	grep -qE '^ +features .*\bf16\b' && f16=1
for p in $precisions; do
	if [[ $p == f16 && $f16 == 0 ]]; then
		note "SKIP  bench $p (the adapter lacks shader-f16)"
		continue
	fi
	json=$out_dir/bench-$model-$p.json
	txt=$out_dir/bench.txt
	mark=0
	if [[ -f $txt ]]; then mark=$(wc -l <"$txt"); fi
	step "bench $model $p" 100 "$txt" "$bin/wgpu-eval" bench --quiet --model "$model" --ctx "$ctx" --batch "$batches" \
		--device "gpu:$index" --precision "$p" --runs "$runs" --json "$json"
	tail -n +"$((mark + 1))" "$txt" >>"$summary"
done

# TinyShakespeare: bench scores random windows and cannot time a corpus, and no weights can be written here
# without Go; a whole-corpus timing is left to `wgpu-eval eval --data tinyshakespeare` with a real model.

note "done in $SECONDS s: $( ((failed == 0)) && echo "all steps ok" || echo "some steps FAILED") ($out_dir)"
exit "$failed"

#!/usr/bin/env bash
# device-check.sh checks wgpu-eval on a machine with a real GPU and its Vulkan driver (an NVIDIA card, say), in
# about 5 minutes all told. In order, each step capped in time and a failed step not stopping the rest:
#   0. builds the binaries with go (about a minute; not with BIN_DIR);
#   1. lists the Vulkan adapters and stops at once when none is a hardware GPU (ALLOW_SOFTWARE=1 goes on with a
#      CPU implementation such as lavapipe, to rehearse the script);
#   2. correctness before any timing: pipeline/backend's TestGPUConformance (every evaluation method against the CPU and
#      the float64 goldens, with the Khronos validation layer where installed: any message fails it), the shaders
#      package's kernel tests (with workgroup memory poisoned, as those tests always run), and TestGPUMatchesCPUShape:
#      every method on two windows of a peaked model of the GPT-2 124M shape, GPU against CPU (f32 within 1e-5, f16
#      within 3e-4); then the smoke check (SMOKE below: a small model, GPU against CPU, under the validation layer,
#      also with TESTS=none); with EVAL=1 then the whole command a user runs, timed twice (see EVAL below);
#   3. speed: `wgpu-eval bench` on the 124M shape with f16 and f32 weights over batches of 1 to 256 windows, the
#      JSON rewritten after every batch size so that a step cut short keeps what it measured;
#   4. the GPU's clocks, power and temperature (nvidia-smi, where there is one) before and after each bench;
#   5. the autotuner's choices: each bench tunes (or reads the tuning file) at its own batch sizes, as eval does,
#      so the tiles, coop tilings and attention kernels it picks, with every candidate's time, are in its JSON,
#      with the driver's statistics (registers) of every pipeline compiled, candidates included, where it has them.
# The matrix units (tensor cores, VK_KHR_cooperative_matrix) are checked on and off: the shaders package's
# matrix-unit kernel tests and the conformance suite with WGPU_EVAL_MATRIX_UNITS=on (native where the device offers
# them, else they fail saying why), and the f16 benches once per --matrix-units value of MATRIX_UNITS.
# Everything goes into one folder: $OUT, or ./device-check-<date> when OUT is unset, with summary.txt first to
# read. With the defaults it makes at most 12 files there (smoke.txt, smoke-cpu.json and smoke-gpu.json among them),
# ablation.txt more with ABLATE=1 and eval.txt, eval-1.json and
# eval-2.json with EVAL=1 (16 in all); each extra model, MATRIX_UNITS value and WORKGROUP_INIT value adds bench JSONs.
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
#   BIN_DIR     prebuilt wgpu-eval, backend.test, shaders.test and wgpu.test (from --build); default: build them with go
#   MODEL       bench's --model, or several separated by spaces, each benched in turn (default 124M; "tiny" for
#               lavapipe, which is far too slow for 124M; "124M qwen2.5-0.5b" adds the Llama family's kernels)
#   CTX         bench's --ctx (default 1024; 0 is the model's positions)
#   BATCHES     bench's --batch (default 1,4,16,64,256)
#   RUNS        bench's --runs (default 3)
#   PRECISIONS  weight types to bench (default "f16 f32"; f16 is skipped where the adapter lacks shader-f16; set and
#               empty: no benches, as for a lease that only runs EVAL=1)
#   MATRIX_UNITS  --matrix-units values the f16 benches run with (default "off auto")
#   WORKGROUP_INIT  $WGPU_EVAL_WORKGROUP_INIT values each bench runs with (default "none", what users run; "none zero"
#               measures what zeroing workgroup memory costs; each value has its own tuning, since the kernels'
#               SPIR-V differs, and its own JSON: bench-MODEL-P-mu-MU[-wi-VALUE].json)
#   ABLATE      1: after the benches, time the coop matmul, LM head and attention with one part of their work taken
#               out at a time (global loads, the rounding of activations or keys and values to f16, staging,
#               multiply-adds, the LM head's fold, attention's softmax and step barriers: where their time goes) and
#               with the activations or the KV cache read as f16 (what storing them so would give; ablation.txt);
#               default 0
#   PIPELINE_STATS  1 (default): the benches ask the driver for every pipeline's statistics (bench --pipeline-stats:
#               NVIDIA's register counts of every kernel and tuner candidate, in the JSON's "pipelines"); 0: not
#   BUDGET_S    seconds the whole script may take (default 290); each step is also capped on its own
#   BENCH_S     the cap of each bench (default 360): the first one on a machine tunes with a cold driver cache,
#               compiling every candidate pipeline
#   SHAPE       the shape of the GPU-against-CPU check (default 124M; "" skips it)
#   TESTS       which correctness steps run before the benches: all (default); coop (only the matrix units' feature
#               and kernel tests: for a short lease whose point is the benches; the benches' self-check still guards
#               the matrix units); none
#   EVAL        1: before the benches, the whole command a user runs, twice, timed from start to end: a GPT-2 124M
#               model with synthetic weights (synthmodel, stored F32 as Hugging Face's gpt2; written outside $OUT)
#               scored on all of TinyShakespeare at ctx CTX (`wgpu-eval --model DIR --data FILE --ctx CTX`: loading,
#               the token cache, autotuning on the first run, scoring), the matrix-units issue's end-to-end target
#               (under 6 s on an RTX 2080 Ti-class GPU); results in eval.txt and eval-1.json, eval-2.json; default 0
#   SMOKE       1 (default): after the tests (TESTS=none too), a small peaked model scored on all of the first 16384
#               tokens of the corpus on the CPU and on the GPU (under the validation layer where it is installed),
#               the mean NLLs compared and any message of the layer a failure (smoke.txt); 0: not
#   EVAL_DATA   the corpus for EVAL=1 and SMOKE (default: the tinyshakespeare.txt that --build copies beside the binaries)
#   EVAL_S      the cap of each of the two EVAL runs (default 240)
#   ALLOW_SOFTWARE=1  go on when every adapter is a CPU implementation (lavapipe, SwiftShader)
#   GL_DEBS     a folder of .deb files (libvulkan1, ...) unpacked into / when no Vulkan loader is installed (default .gl)
#
# On a machine without Go, build elsewhere (same architecture) and copy the folder with the binaries over:
#   scripts/device-check.sh --build bin && BIN_DIR=bin bash scripts/device-check.sh
# On lavapipe, to prove the script end to end:
#   ALLOW_SOFTWARE=1 MODEL=tiny CTX=64 BATCHES=1,2 RUNS=1 SHAPE= scripts/device-check.sh
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

build() { # build DIR: the CLI, the three test binaries and synthmodel, without cgo and stripped (small enough to copy around; they need only glibc), and TinyShakespeare for EVAL=1 where this machine has it
	mkdir -p "$1"
	# The commit, for `wgpu-eval version` and the JSON's "commit": go build records none with -buildvcs=false or in a
	# git worktree, so it is set here (wgpueval.buildCommit), "+modified" where tracked files have changes.
	local rev ldflags='-s -w'
	if rev=$(git -C "$root" rev-parse HEAD 2>/dev/null); then
		[[ -z $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]] || rev+=+modified
		ldflags+=" -X github.com/wgpu-eval/wgpu-eval.buildCommit=$rev"
	fi
	CGO_ENABLED=0 go build -ldflags="$ldflags" -o "$1/wgpu-eval" ./cmd/wgpu-eval
	CGO_ENABLED=0 go test -c -ldflags="$ldflags" -o "$1/backend.test" ./pipeline/backend
	CGO_ENABLED=0 go test -c -ldflags="$ldflags" -o "$1/shaders.test" ./shaders
	CGO_ENABLED=0 go test -c -ldflags="$ldflags" -o "$1/wgpu.test" ./wgpu
	CGO_ENABLED=0 go build -ldflags="$ldflags" -o "$1/synthmodel" ./internal/cmd/synthmodel
	local ts=${WGPU_EVAL_TINYSHAKESPEARE:-$root/../shared/data/tinyshakespeare.txt}
	if [[ -f $ts ]]; then
		cp "$ts" "$1/tinyshakespeare.txt"
	else
		echo "note: no TinyShakespeare at $ts (WGPU_EVAL_TINYSHAKESPEARE): EVAL=1 will need EVAL_DATA on the GPU machine" >&2
	fi
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
models=${MODEL:-124M}
ctx=${CTX:-1024}
batches=${BATCHES:-1,4,16,64,256}
shape=${SHAPE-124M}
runs=${RUNS:-3}
precisions=${PRECISIONS-f16 f32} # set and empty: no benches
matrix_units=${MATRIX_UNITS:-off auto}
workgroup_inits=${WORKGROUP_INIT:-none}
stats_flag=--pipeline-stats
[[ ${PIPELINE_STATS:-1} == 0 ]] && stats_flag=--pipeline-stats=false
for wi in $workgroup_inits; do
	case $wi in none | zero | poison) ;; *)
		echo "WORKGROUP_INIT=$wi: want none, zero or poison" >&2
		exit 2
		;;
	esac
done
tests_sel=${TESTS:-all}
case $tests_sel in all | coop | none) ;; *)
	echo "TESTS=$tests_sel: want all, coop or none" >&2
	exit 2
	;;
esac
failed=0
cleanup=() # temporary folders, removed at exit
trap 'rm -rf ${cleanup[@]+"${cleanup[@]}"}' EXIT

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
	cleanup+=("$bin")
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
		if [[ ${ALLOW_SOFTWARE:-} != 1 ]]; then
			note "FAIL  no hardware GPU among the Vulkan adapters (devices.txt): is the GPU's Vulkan driver installed (its ICD json under /usr/share/vulkan/icd.d, or VK_DRIVER_FILES)? ALLOW_SOFTWARE=1 checks a CPU implementation instead"
			exit 1
		fi
		index=0
		note "warning: every adapter is a CPU implementation: checking adapter 0 (ALLOW_SOFTWARE=1), whose speed says nothing about a GPU"
	fi
fi
if [[ -z $index ]]; then
	note "FAIL  no adapter named like \"$want\" (see devices.txt)"
	exit 1
fi
adapter=$(sed -nE "s/^\[$index\] (.*)$/\1/p" "$out_dir/devices.txt")
note "adapter [$index] ${adapter:-(not listed)}"
export WGPU_ADAPTER=$index

# adapter_block prints the checked adapter's lines of devices.txt (after its "[N] name" line).
adapter_block() {
	awk -v head="[$index] " 'index($0, head) == 1 { on = 1; next } /^\[[0-9]+\] / { on = 0 } on' "$out_dir/devices.txt"
}

# The GPU against the CPU before any timing: every method (pipeline/backend), every kernel (shaders), the real model's
# sizes. Test binaries run in their package's folder, as go test runs them, for their testdata. Vulkan is
# required (a missing loader fails instead of skipping); tools this machine may lack (spirv-dis, the shared
# TinyShakespeare copy) are not, so their tests skip.
tests=$out_dir/tests.txt
export WGPU_REQUIRE_VULKAN=1
if compgen -G "/usr/share/vulkan/explicit_layer.d/*validation*.json" >/dev/null || [[ -n ${VK_LAYER_PATH:-}${VK_ADD_LAYER_PATH:-} ]]; then
	note "validation layer: installed (the conformance suite fails on any message)"
else
	note "validation layer: not installed (vulkan-validationlayers): the conformance suite runs without it"
fi
if [[ $tests_sel == all ]]; then
	step "backend GPUConformance" 100 "$tests" \
		env -C pipeline/backend "$bin/backend.test" -test.run 'TestGPUConformance$' -test.count=1 -test.v -test.timeout 95s
	step "shaders tests" 90 "$tests" \
		env -C shaders WGPU_NO_VALIDATION=1 "$bin/shaders.test" -test.skip 'Coop|MatrixUnits' -test.count=1 -test.timeout 85s
fi
# The matrix units: the device feature (a device with VK_KHR_cooperative_matrix enabled runs a WGSL kernel; and the
# driver's pipeline statistics, which the benches ask for), their
# kernels' tests (native where the adapter lists matrix units, lowered elsewhere), and the conformance suite's f16
# runs with them required, where the adapter lists them: without the validation layer, since wgpu does not use the
# extension under a layer older than it (Debian 12's 1.3.239 reports its structures as errors).
if [[ $tests_sel != none ]]; then
	step "wgpu cooperative-matrix feature, pipeline statistics" 30 "$tests" \
		env -C wgpu WGPU_NO_VALIDATION=1 "$bin/wgpu.test" -test.run 'CooperativeMatrix|PipelineStatistics' -test.count=1 -test.v -test.timeout 25s
	# Many kernels' pipelines (every tiling the autotuner may pick, three attention tilings) compiled with a cold
	# driver cache: the longest step (an H200, 2026-12-04: over 285 s, NVIDIA's compiler taking seconds a pipeline).
	step "shaders matrix-unit kernels" 300 "$tests" \
		env -C shaders WGPU_NO_VALIDATION=1 "$bin/shaders.test" -test.run 'Coop|MatrixUnits|ToF16' -test.count=1 -test.v -test.timeout 295s
fi
if [[ $tests_sel == all ]]; then
	if adapter_block | grep -qE 'f16\*f16\+f32->f32 subgroup$'; then
		step "backend GPUConformance f16, matrix units on" 100 "$tests" \
			env -C pipeline/backend WGPU_NO_VALIDATION=1 WGPU_EVAL_MATRIX_UNITS=on "$bin/backend.test" -test.run 'TestGPUConformance$/hardware/f16' -test.count=1 -test.v -test.timeout 95s
	else
		note "SKIP  backend GPUConformance f16, matrix units on (the adapter lists no matrix units)"
	fi
	if [[ -n $shape ]]; then
		step "GPU vs CPU on the $shape shape" 120 "$tests" \
			env -C pipeline/backend WGPU_NO_VALIDATION=1 WGPU_CHECK_SHAPE="$shape" "$bin/backend.test" -test.run 'TestGPUMatchesCPUShape$' -test.count=1 -test.v -test.timeout 115s
	fi
fi
[[ -f $tests ]] && { grep -E '^(--- |FAIL|ok|PASS)|\|diff\|' "$tests" >>"$summary" || true; }

# The smoke check (SMOKE=1, the default; TESTS=none keeps it): a small peaked model scored on the CPU and on the GPU
# as a user runs it, the GPU under the Khronos validation layer where it is installed (WGPU_EVAL_VALIDATION=1: each
# message a "vulkan: " line, which fails the step), with the mean NLLs compared. It takes the discrete GPU's staged
# uploads and readbacks and its driver's compiles, which no CPU driver does, in seconds: the correctness guard of a
# lease too short for the test suites (the benches use random weights and check nothing but the matrix units).
smoke_nll() { sed -nE 's/^  "mean_nll": ([-+0-9.eE]+),?$/\1/p' "$1"; }
if [[ ${SMOKE:-1} == 1 ]]; then
	corpus=${EVAL_DATA:-$bin/tinyshakespeare.txt}
	smoke=$out_dir/smoke.txt
	if [[ ! -f $corpus ]]; then
		note "SKIP  smoke (no corpus at $corpus: --build copies TinyShakespeare beside the binaries where it finds it; else EVAL_DATA)"
		failed=1
	else
		smoke_dir=$(mktemp -d)
		cleanup+=("$smoke_dir")
		validate=0
		if compgen -G "/usr/share/vulkan/explicit_layer.d/*validation*.json" >/dev/null || [[ -n ${VK_LAYER_PATH:-}${VK_ADD_LAYER_PATH:-} ]]; then
			validate=1
		fi
		step "write a small peaked model" 60 "$smoke" "$bin/synthmodel" -shape tiny -dtype F32 "$smoke_dir/model"
		smoke_args=(--model "$smoke_dir/model" --data "$corpus" --ctx 64 --max-tokens 16384 --quiet)
		step "smoke: the small model on the cpu" 60 "$smoke" "$bin/wgpu-eval" "${smoke_args[@]}" --device cpu --json "$out_dir/smoke-cpu.json"
		step "smoke: the small model on gpu:$index, validation layer $( ((validate)) && echo on || echo "not installed")" 180 "$smoke" \
			env WGPU_EVAL_VALIDATION=$validate "$bin/wgpu-eval" "${smoke_args[@]}" --device "gpu:$index" --json "$out_dir/smoke-gpu.json"
		cpu_nll=$(smoke_nll "$out_dir/smoke-cpu.json" 2>/dev/null || true)
		gpu_nll=$(smoke_nll "$out_dir/smoke-gpu.json" 2>/dev/null || true)
		messages=$(grep -c '^vulkan: ' "$smoke" || true)
		# f16 weights on the GPU (auto), maybe on the matrix units, which round activations to f16 too: within 1e-3 (lavapipe: 1.5e-4).
		if [[ -n $cpu_nll && -n $gpu_nll ]] && awk -v a="$cpu_nll" -v b="$gpu_nll" 'BEGIN { d = a - b; exit !(d < 1e-3 && d > -1e-3) }' && ((messages == 0)); then
			note "ok    smoke: mean NLL cpu $cpu_nll, gpu $gpu_nll, no message of the validation layer"
		else
			note "FAIL  smoke: mean NLL cpu ${cpu_nll:-?}, gpu ${gpu_nll:-?} (want within 1e-3), $messages messages of the validation layer (smoke.txt)"
			failed=1
		fi
	fi
fi

# clocks LABEL: the GPU's clocks, power and temperature now, where nvidia-smi exists.
clocks() {
	command -v nvidia-smi >/dev/null || return 0
	{
		echo "# $1 $(date -u +%H:%M:%S)"
		nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit,temperature.gpu,utilization.gpu --format=csv 2>&1
	} >>"$out_dir/clocks.txt"
}

# The whole command on a corpus (EVAL=1), before the benches so that a short lease measures it: the first run tunes
# the kernels at its own batch sizes and fills the token cache, the second finds both; the wall time of each, from
# the command's start (what a user waits), is its step's.
if [[ ${EVAL:-0} == 1 ]]; then
	corpus=${EVAL_DATA:-$bin/tinyshakespeare.txt}
	if [[ ! -f $corpus ]]; then
		note "SKIP  eval (no corpus at $corpus: --build copies TinyShakespeare beside the binaries where it finds it; else EVAL_DATA)"
		failed=1
	else
		model_dir=$(mktemp -d)
		cleanup+=("$model_dir")
		step "write a GPT-2 124M model with synthetic weights" 120 "$out_dir/eval.txt" "$bin/synthmodel" -shape 124M -dtype F32 "$model_dir"
		for run in 1 2; do
			step "eval $(basename "$corpus") ctx $ctx, run $run" "${EVAL_S:-240}" "$out_dir/eval.txt" "$bin/wgpu-eval" --model "$model_dir" \
				--data "$corpus" --ctx "$ctx" --device "gpu:$index" --json "$out_dir/eval-$run.json"
		done
		# The result lines, and the note of a run whose first-use work (pipelines, tuning, self-check) took long;
		# eval-N.json's "timings" split each run.
		grep -E ' \((stream|strided|documents), ctx |^note: .* of the run went to work done once' "$out_dir/eval.txt" >>"$summary" || true
	fi
fi

# Speed: one bench per weight type. The human tables go to bench.txt (and the summary), the figures to JSON.
# Each bench tunes at its batch sizes first (untimed, as eval does on a GPU; printed with its choices, every
# candidate's time in the JSON: "tuning", "attention_tuning"), hence the longer cap: with the matrix units and a
# cold driver cache, compiling some 60 pipelines for the tuner took over 180 s on an H200 (45 s warm).
f16=0
adapter_block | grep -qE '^ +features .*\bf16\b' && f16=1
for model in $models; do for p in $precisions; do
	if [[ $p == f16 && $f16 == 0 ]]; then
		note "SKIP  bench $p (the adapter lacks shader-f16)"
		continue
	fi
	mus=off
	[[ $p == f16 ]] && mus=$matrix_units # the matrix units multiply f16 only
	for mu in $mus; do
		for wi in $workgroup_inits; do
			json=$out_dir/bench-$model-$p-mu-$mu.json
			what="$p matrix units $mu"
			if [[ $workgroup_inits != none ]]; then
				json=$out_dir/bench-$model-$p-mu-$mu-wi-$wi.json
				what="$what workgroup memory $wi"
			fi
			txt=$out_dir/bench.txt
			mark=0
			if [[ -f $txt ]]; then mark=$(wc -l <"$txt"); fi
			clocks "before bench $what"
			step "bench $model $what" "${BENCH_S:-360}" "$txt" env WGPU_EVAL_WORKGROUP_INIT="$wi" "$bin/wgpu-eval" bench --quiet --model "$model" \
				--ctx "$ctx" --batch "$batches" --device "gpu:$index" --precision "$p" --matrix-units "$mu" --runs "$runs" "$stats_flag" --json "$json"
			clocks "after bench $what"
			tail -n +"$((mark + 1))" "$txt" >>"$summary"
		done
	done
done; done
# Where the coop kernels' time goes (ABLATE=1): each timed with one part of its work taken out (shaders'
# BenchmarkCoopAblation; results wrong by design), after the benches, which come first in a short lease.
if [[ ${ABLATE:-0} == 1 ]]; then
	step "coop ablation" 240 "$out_dir/ablation.txt" \
		env -C shaders WGPU_NO_VALIDATION=1 "$bin/shaders.test" -test.run '^$' -test.bench CoopAblation -test.benchtime 5x -test.timeout 235s
	grep -E '^Benchmark|^(ok|FAIL|PASS)' "$out_dir/ablation.txt" >>"$summary" || true
fi
[[ -f $out_dir/clocks.txt ]] && cat "$out_dir/clocks.txt" >>"$summary"

note "done in $SECONDS s: $( ((failed == 0)) && echo "all steps ok" || echo "some steps FAILED") ($out_dir)"
exit "$failed"

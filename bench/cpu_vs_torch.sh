#!/usr/bin/env bash
# BENCHMARKS.md "CPU path vs PyTorch": one 1024-token window of a GPT-2 124M
# or Qwen2.5-0.5B-shaped model (random weights), all positions' logits and
# NLL. Alternates A B A B in one run so both see the same machine state. Needs
# Debian's python3-torch, libopenblas0-openmp and libtcmalloc-minimal4 (see
# bench/torch_gpt2.py).
#
#   bash bench/cpu_vs_torch.sh [rounds] [fp32|bf16] [gpt2-124m|qwen2.5-0.5b]
#
# Defaults: 2 rounds, fp32, gpt2-124m (BenchmarkCPULoss124M against
# bench/torch_gpt2.py). qwen2.5-0.5b runs BenchmarkCPULossQwen05B against
# bench/torch_llama.py (about 2 GB of weights in fp32 on each side, one side
# at a time; a window takes tens of seconds on 2 cores). bf16 compares
# `--precision bf16` (the *BF16 benchmarks, which skip on a CPU without
# AVX512_BF16) with PyTorch's bf16.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
dtype=${2:-fp32}
model=${3:-gpt2-124m}
case $model in
gpt2-124m) bench=CPULoss124M peer=bench/torch_gpt2.py ;;
qwen2.5-0.5b) bench=CPULossQwen05B peer=bench/torch_llama.py ;;
*) echo "cpu_vs_torch.sh: model $model: want gpt2-124m or qwen2.5-0.5b" >&2; exit 2 ;;
esac
case $dtype in
fp32) bench="$bench\$" ;;
bf16) bench="${bench}BF16\$" ;;
*) echo "cpu_vs_torch.sh: dtype $dtype: want fp32 or bf16" >&2; exit 2 ;;
esac
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
go test -c -o /tmp/model.bench.test ./model/ >/dev/null
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%F), model $model, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	echo "--- round $r: wgpu-eval CPU $dtype (Go + generated amd64 assembly, GOMAXPROCS=$(nproc))"
	/tmp/model.bench.test -test.run '^$' -test.bench "$bench" -test.benchtime 2x -test.v | grep -E 'Benchmark|tokens/s|kernels:|SKIP|AVX512_BF16'
	echo "--- round $r: PyTorch $dtype (2 threads, tcmalloc)"
	LD_PRELOAD=$tcmalloc /usr/bin/python3 "$peer" --dtype "$dtype" --threads 2 --warmup 1 --iters 2
done

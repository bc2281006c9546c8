#!/usr/bin/env bash
# BENCHMARKS.md "CPU path vs PyTorch": GPT-2 124M shape (random weights), one
# 1024-token window, all positions' logits and NLL. Alternates A B A B in one run
# so both see the same machine state. Needs Debian's python3-torch,
# libopenblas0-openmp and libtcmalloc-minimal4 (see bench/torch_gpt2.py).
#
#   bash bench/cpu_vs_torch.sh [rounds] [fp32|bf16]   # default 2 rounds, fp32
#
# bf16 compares `--precision bf16` (BenchmarkCPULoss124MBF16, which skips on a
# CPU without AVX512_BF16) with PyTorch's bf16.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
dtype=${2:-fp32}
case $dtype in
fp32) bench='CPULoss124M$' ;;
bf16) bench='CPULoss124MBF16$' ;;
*) echo "cpu_vs_torch.sh: dtype $dtype: want fp32 or bf16" >&2; exit 2 ;;
esac
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
go test -c -o /tmp/model.bench.test ./model/ >/dev/null
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%F)"
for r in $(seq "$rounds"); do
	echo "--- round $r: wgpu-eval CPU $dtype (Go + generated amd64 assembly, GOMAXPROCS=$(nproc))"
	/tmp/model.bench.test -test.run '^$' -test.bench "$bench" -test.benchtime 2x -test.v | grep -E 'Benchmark|tokens/s|kernels:|SKIP|AVX512_BF16'
	echo "--- round $r: PyTorch $dtype (2 threads, tcmalloc)"
	LD_PRELOAD=$tcmalloc /usr/bin/python3 bench/torch_gpt2.py --dtype "$dtype" --threads 2 --warmup 1 --iters 2
done

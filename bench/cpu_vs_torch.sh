#!/usr/bin/env bash
# BENCHMARKS.md "CPU path vs PyTorch": GPT-2 124M shape (random weights), one
# 1024-token window, all positions' logits and NLL. Alternates A B A B in one run
# so both see the same machine state. Needs Debian's python3-torch,
# libopenblas0-openmp and libtcmalloc-minimal4 (see bench/torch_gpt2.py).
#
#   bash bench/cpu_vs_torch.sh [rounds]      # default 2 rounds
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
go test -c -o /tmp/model.bench.test ./model/ >/dev/null
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(date -u +%F)"
for r in $(seq "$rounds"); do
	echo "--- round $r: wgpu-eval CPU (Go + generated amd64 assembly, GOMAXPROCS=$(nproc))"
	/tmp/model.bench.test -test.run '^$' -test.bench 'CPULoss124M$' -test.benchtime 2x | grep -E 'Benchmark|tokens/s'
	echo "--- round $r: PyTorch fp32 (2 threads, OpenBLAS, tcmalloc)"
	LD_PRELOAD=$tcmalloc /usr/bin/python3 bench/torch_gpt2.py --dtype fp32 --threads 2 --warmup 1 --iters 2
done

#!/usr/bin/env bash
# A Slurm job array that evaluates GPT-2 on TinyShakespeare in 4 shards, one
# GPU each, then merges them. Submit with:  sbatch docs/slurm.sh
# wgpu-eval reads the shard from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT
# (minus SLURM_ARRAY_TASK_MIN), so the command needs no --shard flag. A task
# that is requeued continues from its --checkpoint.
#SBATCH --job-name=wgpu-eval
#SBATCH --array=0-3
#SBATCH --gres=gpu:1
#SBATCH --time=00:30:00
#SBATCH --output=wgpu-eval-%A_%a.log
set -euo pipefail

out="${RESULTS:-$PWD/results}"
mkdir -p "$out"
task="${SLURM_ARRAY_TASK_ID:?run this script with sbatch}"

srun wgpu-eval --model gpt2 --data tinyshakespeare --device auto --quiet \
	--checkpoint "$out/shard-$task.ckpt" --json "$out/shard-$task.json"

# The last task to finish merges (the others find shards missing and leave it).
shards=("$out"/shard-*.json)
if [ "${#shards[@]}" -eq "${SLURM_ARRAY_TASK_COUNT:-4}" ]; then
	wgpu-eval merge --json "$out/all.json" "${shards[@]}" || true
fi

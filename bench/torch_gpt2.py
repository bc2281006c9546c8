#!/usr/bin/python3
"""PyTorch CPU peer figure for BENCHMARKS.md: GPT-2 124M shape, random weights, ctx 1024.

Dev script: CI does not run it. It times the same work as `wgpu-eval` on the CPU: a forward pass over a
window of ctx tokens that computes every position's logits over the full vocabulary and the mean NLL of
tokens 2..ctx (cross entropy in float32). It prints one JSON line per dtype with tokens/s (scored
predictions per second would be ctx-1 per window; tokens/s here counts the ctx input tokens, and the
JSON gives both).

Debian's python3-torch (1.13) uses the reference BLAS unless OpenBLAS is installed, and is then ~30x slow.
For a fair figure (DESIGN.md, "Measuring against peers"):

    apt-get install python3-torch libopenblas0-openmp libtcmalloc-minimal4
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 /usr/bin/python3 bench/torch_gpt2.py

Options: --dtype fp32,bf16 --threads 2 --ctx 1024 --warmup 2 --iters 3 --config (print torch's build
configuration, which names the BLAS). It takes one to two minutes on a 2-core machine. Run it in the same
session as `wgpu-eval`'s own benchmark, alternating the two, and state the BLAS, allocator, threads and dtype
it reports next to the figure.
"""

import argparse
import json
import math
import os
import platform
import sys
import time

import torch
import torch.nn.functional as F

N_LAYER, N_HEAD, N_EMBD, N_POSITIONS, VOCAB = 12, 12, 768, 1024, 50257


class Block(torch.nn.Module):
    """A GPT-2 block as Hugging Face's GPT2Block computes it (pre-LN, fused qkv, gelu_new)."""

    def __init__(self):
        super().__init__()
        C = N_EMBD
        self.ln_1 = torch.nn.LayerNorm(C, eps=1e-5)
        self.c_attn = torch.nn.Linear(C, 3 * C)
        self.c_proj = torch.nn.Linear(C, C)
        self.ln_2 = torch.nn.LayerNorm(C, eps=1e-5)
        self.c_fc = torch.nn.Linear(C, 4 * C)
        self.mlp_proj = torch.nn.Linear(4 * C, C)

    def forward(self, x, mask):
        B, T, C = x.shape
        hd = C // N_HEAD
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=-1)
        q, k, v = (a.view(B, T, N_HEAD, hd).transpose(1, 2) for a in (q, k, v))
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(mask[:T, :T], torch.finfo(att.dtype).min)
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, N_EMBD)
        self.wpe = torch.nn.Embedding(N_POSITIONS, N_EMBD)
        self.h = torch.nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = torch.nn.LayerNorm(N_EMBD, eps=1e-5)
        for p in self.parameters():  # GPT-2's init scale; the figure does not depend on it
            if p.dim() > 1:
                torch.nn.init.normal_(p, std=0.02)
        self.register_buffer("mask", ~torch.tril(torch.ones(N_POSITIONS, N_POSITIONS, dtype=torch.bool)))

    def forward(self, ids):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T))
        for b in self.h:
            x = b(x, self.mask)
        logits = self.ln_f(x) @ self.wte.weight.T  # (B, T, V): every position, tied lm_head
        return F.cross_entropy(logits[:, :-1].float().flatten(0, 1), ids[:, 1:].flatten())


def blas():
    cfg = torch.__config__.show()
    info = [s.strip() for s in cfg.replace(",", "\n").splitlines() if "BLAS_INFO" in s]
    libs = []
    try:
        with open(f"/proc/{os.getpid()}/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "blas" in line.lower() or "tcmalloc" in line.lower()})
    except OSError:
        pass
    return info, libs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="fp32,bf16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=1024)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--config", action="store_true", help="print torch.__config__.show() to stderr")
    args = ap.parse_args()
    if args.config:
        print(torch.__config__.show(), file=sys.stderr)

    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    base = GPT2().eval()
    ids = torch.randint(0, VOCAB, (1, args.ctx))
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    for name in args.dtype.split(","):
        m = base.to(dtypes[name])
        times = []
        with torch.inference_mode():
            for i in range(args.warmup + args.iters):
                t0 = time.perf_counter()
                loss = m(ids)
                dt = time.perf_counter() - t0
                if i >= args.warmup:
                    times.append(dt)
        sec = sorted(times)[len(times) // 2]  # median window
        info, libs = blas()
        print(
            json.dumps(
                {
                    "peer": "pytorch",
                    "torch": torch.__version__,
                    "dtype": name,
                    "threads": torch.get_num_threads(),
                    "ctx": args.ctx,
                    "tokens_per_second": round(args.ctx / sec, 1),
                    "predictions_per_second": round((args.ctx - 1) / sec, 1),
                    "seconds_per_window": [round(t, 4) for t in times],
                    "mean_nll": round(float(loss), 5),
                    "blas": info,
                    "libs": libs,
                    "ld_preload": os.environ.get("LD_PRELOAD", ""),
                    "cpu": platform.processor() or platform.machine(),
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""PyTorch CPU peer figure for BENCHMARKS.md: Qwen2.5-0.5B shape, random weights, ctx 1024.

Dev script: CI does not run it. It times the same work as `wgpu-eval` on the CPU
(BenchmarkCPULossQwen05B, BenchmarkCPULossQwen05BBF16): a forward pass over a window of ctx tokens
that computes every position's logits over the full vocabulary and the mean NLL of tokens 2..ctx
(cross entropy in float32). The model is written out in plain PyTorch (no transformers), computing
what transformers' Qwen2ForCausalLM computes on its eager attention path: RMSNorm in float32 (eps
1e-6), q/k/v projections with biases, rotary embedding (rope_theta 1e6, rotate-half form), grouped
key/value heads repeated to the query heads (repeat_kv), scores by matmul scaled by 1/sqrt(head_dim)
plus an additive causal mask, softmax in float32 cast back to the model's dtype, o_proj, SwiGLU MLP
(down(silu(gate(x)) * up(x))), the final RMSNorm and a tied lm_head. In bf16 the whole model is
bf16 and the logits are upcast to float32 for the loss, as transformers does. Weights are random
(N(0, 1/in) matrices, unit-scale embeddings, as model/synth draws them; the figure does not depend
on them). It prints one JSON line per dtype with tokens/s of the median timed window (scored
predictions per second would be ctx-1 per window; tokens/s here counts the ctx input tokens, and the
JSON gives both), every timed window's seconds, and the process's
CPU seconds per window (all threads; OpenMP threads that spin while waiting count too), as the Go
benchmarks report cpu-s/window: on a machine shared with other work the CPU time moves less than the wall
time.

Debian's python3-torch (1.13) uses the reference BLAS unless OpenBLAS is installed, and is then ~30x slow.
For a fair figure (DESIGN.md, "Measuring against peers"):

    apt-get install python3-torch libopenblas0-openmp libtcmalloc-minimal4
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 /usr/bin/python3 bench/torch_llama.py

Options: --dtype fp32,bf16 --threads 2 --ctx 1024 --warmup 1 --iters 3 --config (print torch's build
configuration, which names the BLAS). The model takes about 2 GB in fp32 (then converted in place to
bf16) and a window about 2 GB more (the logits); a window takes several seconds (bf16) to tens of
seconds (fp32 on OpenBLAS) on a 2-core machine.
Run it in the same session as `wgpu-eval`'s own benchmark, alternating the two
(`bash bench/cpu_vs_torch.sh 2 fp32 qwen2.5-0.5b`), and state the BLAS, allocator, threads and dtype
it reports next to the figure.
"""

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

# Qwen/Qwen2.5-0.5B's config.json (synth.LlamaShape("qwen2.5-0.5b")).
N_LAYER, HIDDEN, N_HEAD, N_KV_HEAD, HEAD_DIM = 24, 896, 14, 2, 64
INTERMEDIATE, VOCAB, RMS_EPS, ROPE_THETA = 4864, 151936, 1e-6, 1e6


class RMSNorm(torch.nn.Module):
    """transformers' Qwen2RMSNorm: the mean square in float32, the weight applied in the input's dtype."""

    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n))

    def forward(self, x):
        dtype = x.dtype
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + RMS_EPS)
        return self.weight * h.to(dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Block(torch.nn.Module):
    """A Qwen2 decoder layer as transformers' Qwen2DecoderLayer computes it with eager attention."""

    def __init__(self):
        super().__init__()
        C, Q, KV, I = HIDDEN, N_HEAD * HEAD_DIM, N_KV_HEAD * HEAD_DIM, INTERMEDIATE
        self.input_layernorm = RMSNorm(C)
        self.q_proj = torch.nn.Linear(C, Q, bias=True)
        self.k_proj = torch.nn.Linear(C, KV, bias=True)
        self.v_proj = torch.nn.Linear(C, KV, bias=True)
        self.o_proj = torch.nn.Linear(Q, C, bias=False)
        self.post_attention_layernorm = RMSNorm(C)
        self.gate_proj = torch.nn.Linear(C, I, bias=False)
        self.up_proj = torch.nn.Linear(C, I, bias=False)
        self.down_proj = torch.nn.Linear(I, C, bias=False)

    def attention(self, x, cos, sin, mask):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, N_HEAD, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(B, T, N_KV_HEAD, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(B, T, N_KV_HEAD, HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = N_HEAD // N_KV_HEAD  # repeat_kv: each key/value head serves rep query heads
        k = k[:, :, None].expand(B, N_KV_HEAD, rep, T, HEAD_DIM).reshape(B, N_HEAD, T, HEAD_DIM)
        v = v[:, :, None].expand(B, N_KV_HEAD, rep, T, HEAD_DIM).reshape(B, N_HEAD, T, HEAD_DIM)
        att = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(HEAD_DIM))
        att = att + mask[:T, :T]
        att = att.softmax(dim=-1, dtype=torch.float32).to(q.dtype)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, N_HEAD * HEAD_DIM)
        return self.o_proj(y)

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.input_layernorm(x), cos, sin, mask)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Qwen2(torch.nn.Module):
    def __init__(self, ctx):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(VOCAB, HIDDEN)
        self.layers = torch.nn.ModuleList(Block() for _ in range(N_LAYER))
        self.norm = RMSNorm(HIDDEN)
        with torch.no_grad():  # synth's scales: the figure does not depend on them
            for name, p in self.named_parameters():
                if name.endswith("layernorm.weight") or name == "norm.weight":
                    p.normal_(1, 0.1)
                elif name.endswith("bias"):
                    p.normal_(0, 0.1)
                elif name == "embed_tokens.weight":
                    p.normal_(0, 1)
                else:
                    p.normal_(0, 1 / math.sqrt(p.shape[1]))
        inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.int64).float() / HEAD_DIM))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.ctx = ctx
        self.register_buffer("mask", self.causal_mask(torch.float32), persistent=False)

    def causal_mask(self, dtype):
        """The additive mask of transformers' eager path: 0 on and below the diagonal, the dtype's min above."""
        m = torch.full((self.ctx, self.ctx), torch.finfo(dtype).min, dtype=dtype)
        return torch.triu(m, diagonal=1)

    def to_dtype(self, dtype):
        """Converts the parameters in place (one copy of the weights) and remakes the mask in dtype."""
        self.to(dtype)
        self.inv_freq = self.inv_freq.float()  # transformers keeps inv_freq in float32
        self.mask = self.causal_mask(dtype)
        return self

    def rotary(self, T, dtype):
        """cos and sin (1, 1, T, HEAD_DIM) as Qwen2RotaryEmbedding gives them: angles in float32, cast to dtype."""
        freqs = torch.arange(T, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype)[None, None], emb.sin().to(dtype)[None, None]

    def forward(self, ids):
        T = ids.shape[1]
        x = self.embed_tokens(ids)
        cos, sin = self.rotary(T, x.dtype)
        for b in self.layers:
            x = b(x, cos, sin, self.mask)
        logits = self.norm(x) @ self.embed_tokens.weight.T  # (B, T, V): every position, tied lm_head
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
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--config", action="store_true", help="print torch.__config__.show() to stderr")
    args = ap.parse_args()
    if args.config:
        print(torch.__config__.show(), file=sys.stderr)
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    names = args.dtype.split(",")
    for name in names:
        if name not in dtypes:
            ap.error(f"--dtype {name}: want fp32 or bf16")
    if args.ctx < 2 or args.iters < 1 or args.warmup < 0:
        ap.error("want --ctx >= 2, --iters >= 1, --warmup >= 0")

    torch.set_num_threads(args.threads)
    torch.manual_seed(1234)
    base = Qwen2(args.ctx).eval()
    ids = torch.randint(0, VOCAB, (1, args.ctx))
    for name in names:
        m = base.to_dtype(dtypes[name])
        times, cpu = [], []
        with torch.inference_mode():
            for i in range(args.warmup + args.iters):
                t0, c0 = time.perf_counter(), time.process_time()
                loss = m(ids)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                if i >= args.warmup:
                    times.append(dt)
                    cpu.append(dc)
        sec = statistics.median(times)  # of an even count, the mean of the middle two
        info, libs = blas()
        print(
            json.dumps(
                {
                    "peer": "pytorch",
                    "model": "qwen2.5-0.5b shape",
                    "torch": torch.__version__,
                    "dtype": name,
                    "threads": torch.get_num_threads(),
                    "ctx": args.ctx,
                    "tokens_per_second": round(args.ctx / sec, 1),
                    "predictions_per_second": round((args.ctx - 1) / sec, 1),
                    "seconds_per_window": [round(t, 4) for t in times],
                    "cpu_seconds_per_window": [round(c, 3) for c in cpu],
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

#!/usr/bin/python3
"""Generate the golden NLL values the Go tests check (pipeline/golden_test.go).

Dev script: CI does not run it and does not need PyTorch. Its outputs are committed:

    testdata/golden/tiny/config.json        Hugging Face GPT-2 config of a tiny GPT-2 trained on TinyShakespeare
    testdata/golden/tiny/model.safetensors  its weights, F16, keys as GPT2LMHeadModel saves them
    testdata/golden/golden.json             token ids, documents and the reference NLL of every case

Run it from the repository root with Debian's PyTorch (apt-get install python3-torch python3-numpy;
no pip packages, no transformers) and Go:

    /usr/bin/python3 testdata/golden/gen_golden.py [path/to/tinyshakespeare.txt]

then testdata/golden/gen_text_golden.py, whose goldens are of this model too. The text defaults to
../shared/data/tinyshakespeare.txt (its sha256 is checked).

The model has GPT-2's full vocabulary (50257) and is tiny: 2 layers, 2 heads, n_embd 16, 64 positions
(1.6 MB in F16, nearly all of it wte). It is trained here, in float32 torch with the same forward as the
reference, AdamW, STEPS = 400 steps of BATCH = 16 windows of 64 tokens (half <|endoftext|> + a paragraph, as
documents mode feeds them), on the GPT-2 ids of TinyShakespeare's train split (bytes [0, 1003854), nanoGPT's
split), so that its predictions are peaked: a near-uniform or worse-than-chance model hides bugs that only
show when a few logits dominate the softmax. The golden tokens and documents are held-out ids of the val split.
Mean NLL of the cases, as this script printed it (ln 50257 = 10.82 for a uniform guess; the unigram
frequencies of the train split give 6.50 on val):

    case                          mean NLL    case                          mean NLL
    stream_ctx64                  5.4293      strided_ctx64_stride64        5.4293
    stream_ctx64_last_window_1    5.4690      strided_ctx16_stride1         5.3190
    stream_ctx37                  5.4141      documents_ctx64_stride32      5.2773
    strided_ctx64_stride24        5.4206

(training's last 20 steps averaged 4.91; gen_text_golden.py's whole val split at ctx 64: 5.573). golden.json
keeps them in each case's "mean_nll"; the script asserts every one is at least 3 nats below ln V, and so does
pipeline/golden_test.go.

The train ids come from the command's own tokenizer (`go run ./cmd/wgpu-eval tokenize`) and the val ids from
the committed testdata/golden/shakespeare_val.tokens; both are checked against the sha256 that
../shared/data/README.md publishes (three independent GPT-2 tokenizers agree on them), so the goldens do not
depend on the tokenizer under test.

It runs on one thread (torch.set_num_threads(1)): about 5 minutes, 4 of them training. It is
deterministic (torch and numpy seeds SEED): running it again with the same PyTorch build and BLAS rewrites
the same files. Another build orders its float32 reductions differently, so training takes another path and
writes other weights (and other goldens for them, just as valid).

The trained weights are rounded to float16 (to nearest even), written as safetensors by hand, and the
reference reads back exactly those float16 values, upcast to float64. The reference forward is written
plainly from Hugging Face's GPT2LMHeadModel (learned positions, pre-LayerNorm with eps 1e-5, fused c_attn
split into q, k, v, scale 1/sqrt(head_dim), causal mask, gelu_new (tanh form), ln_f, lm_head tied to wte)
and runs in float64. Each window's loss is computed the way GPT2LMHeadModel computes it from labels
(shift by one, -100 ignored), and the evaluation loops are the Hugging Face definitions (see DESIGN.md,
"Evaluation methods"); we sum exact per-token NLLs rather than loss * (count - 1), which undercounts by one
for every window after the first.

A second, independent implementation (numpy, one position and one head at a time) checks the torch
forward on a few windows before anything is written.
"""

import ctypes
import hashlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

SEED = 20261204
EOT = 50256
NEWLINE = 198  # "\n": a paragraph starts after two of them

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
TINY = os.path.join(HERE, "tiny")
TEXT = os.path.join(ROOT, "..", "shared", "data", "tinyshakespeare.txt")
TEXT_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
# ../shared/data/README.md: sha256 over the ids as little-endian uint32, and their number.
TRAIN_IDS = ("5c9a86038d435ea2c0132c609e356fdc8251c5858a6d4eb98a702a4fe8706607", 301966)
VAL_IDS = ("7a0f95164147aed251e312b0af08991176d34ee1767785208c2bdc124880d6d5", 36059)
VAL_TOKENS = os.path.join(HERE, "shakespeare_val.tokens")

# Training (float32): STEPS batches of BATCH windows of n_positions tokens, learning rate LR on a cosine to a
# tenth of it.
STEPS, BATCH, LR = 400, 16, 1e-2

CONFIG = {
    "activation_function": "gelu_new",
    "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1,
    "bos_token_id": EOT,
    "embd_pdrop": 0.1,
    "eos_token_id": EOT,
    "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05,
    "model_type": "gpt2",
    "n_ctx": 64,
    "n_embd": 16,
    "n_head": 2,
    "n_inner": None,
    "n_layer": 2,
    "n_positions": 64,
    "reorder_and_upcast_attn": False,
    "resid_pdrop": 0.1,
    "scale_attn_by_inverse_layer_idx": False,
    "scale_attn_weights": True,
    "summary_activation": None,
    "summary_first_dropout": 0.1,
    "summary_proj_to_labels": True,
    "summary_type": "cls_index",
    "summary_use_proj": True,
    "torch_dtype": "float16",
    "vocab_size": 50257,
}


# ---------------------------------------------------------------------------------------------
# The data: GPT-2 ids of TinyShakespeare, checked against the published sha256.


def ids_sha256(ids):
    """sha256 over the ids as little-endian uint32, as ../shared/data/README.md gives it."""
    return hashlib.sha256(np.asarray(ids, dtype="<u4").tobytes()).hexdigest()


def read_tokens(path):
    """The ids of an llm.c token file: 256 int32 header (magic 20240520, version 1, count), then uint16 ids."""
    with open(path, "rb") as f:
        data = f.read()
    magic, version, n = struct.unpack("<3i", data[:12])
    assert magic == 20240520 and version == 1, (magic, version)
    assert len(data) == 1024 + 2 * n, (len(data), n)
    return list(struct.unpack(f"<{n}H", data[1024:]))


def train_ids(text_path):
    """The GPT-2 ids of the train split, from the command's tokenizer (an empty model folder means GPT-2's)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "train.u32")
        cmd = ["go", "run", "./cmd/wgpu-eval", "tokenize", "--model", tmp, "--data", os.path.abspath(text_path),
               "--split", "train", "--output", out, "--offline", "--no-token-cache", "--quiet"]
        subprocess.run(cmd, cwd=ROOT, check=True)
        ids = np.fromfile(out, dtype="<u4").astype(np.int64)
    assert (ids_sha256(ids), len(ids)) == TRAIN_IDS, "the train ids are not the README's"
    return ids


def paragraph_starts(ids):
    """Offsets of the ids that follow two newlines."""
    ids = np.asarray(ids)
    return np.nonzero((ids[:-2] == NEWLINE) & (ids[1:-1] == NEWLINE))[0] + 2


# ---------------------------------------------------------------------------------------------
# The tiny model's tensors, under Hugging Face's names.


def tensor_shapes():
    """Every parameter GPT2LMHeadModel saves (without lm_head, tied to wte), name -> shape (Conv1D as [in, out])."""
    C, V, P = CONFIG["n_embd"], CONFIG["vocab_size"], CONFIG["n_positions"]
    s = {"transformer.wte.weight": (V, C), "transformer.wpe.weight": (P, C)}
    for i in range(CONFIG["n_layer"]):
        p = f"transformer.h.{i}."
        s[p + "ln_1.weight"] = s[p + "ln_1.bias"] = (C,)
        s[p + "attn.c_attn.weight"] = (C, 3 * C)
        s[p + "attn.c_attn.bias"] = (3 * C,)
        s[p + "attn.c_proj.weight"] = (C, C)
        s[p + "attn.c_proj.bias"] = (C,)
        s[p + "ln_2.weight"] = s[p + "ln_2.bias"] = (C,)
        s[p + "mlp.c_fc.weight"] = (C, 4 * C)
        s[p + "mlp.c_fc.bias"] = (4 * C,)
        s[p + "mlp.c_proj.weight"] = (4 * C, C)
        s[p + "mlp.c_proj.bias"] = (C,)
    s["transformer.ln_f.weight"] = s["transformer.ln_f.bias"] = (C,)
    return s


def stored_weights(params):
    """The trained parameters as float16 numpy arrays, plus the causal attn.bias buffer real files carry."""
    P = CONFIG["n_positions"]
    w = {name: t.detach().to(torch.float16).numpy() for name, t in params.items()}
    causal = np.tril(np.ones((P, P), dtype=np.float32)).reshape(1, 1, P, P)
    for i in range(CONFIG["n_layer"]):
        w[f"transformer.h.{i}.attn.bias"] = causal  # loaders ignore it
    return w


def write_safetensors(path, tensors):
    """Write tensors (name -> numpy array) as safetensors: u64 LE header length, JSON header, data."""
    dtypes = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32"}
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        raw = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {
            "dtype": dtypes[a.dtype],
            "shape": list(a.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    hdr = json.dumps(header, separators=(",", ":")).encode()
    hdr += b" " * (-len(hdr) % 8)  # align the data to 8 bytes, as the Rust writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)))
        f.write(hdr)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Read back what write_safetensors wrote, so the reference uses the file's own values."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    dtypes = {"F16": "<f2", "F32": "<f4"}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        lo, hi = t["data_offsets"]
        out[name] = np.frombuffer(data[base + lo : base + hi], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    return out




# ---------------------------------------------------------------------------------------------
# The forward: GPT2LMHeadModel's, batched (float64 for the reference, float32 for training).


def forward(t, ids):
    """ids (B, T) long, T <= n_positions -> logits (B, T, V) in the dtype of t (names without "transformer.")."""
    C, nh, eps = CONFIG["n_embd"], CONFIG["n_head"], CONFIG["layer_norm_epsilon"]
    hd = C // nh
    B, T = ids.shape

    def ln(x, name):
        return torch.nn.functional.layer_norm(x, (C,), t[name + ".weight"], t[name + ".bias"], eps)

    x = t["wte.weight"][ids] + t["wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    masked = torch.tensor(torch.finfo(x.dtype).min, dtype=x.dtype)
    for i in range(CONFIG["n_layer"]):
        p = f"h.{i}."
        h = ln(x, p + "ln_1")
        qkv = h @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]  # Conv1D: x W + b
        q, k, v = (a.view(B, T, nh, hd).transpose(1, 2) for a in qkv.split(C, dim=-1))  # (B, nh, T, hd)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        att = torch.softmax(torch.where(causal, att, masked), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + (y @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"])
        h = gelu_new(ln(x, p + "ln_2") @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"])
        x = x + (h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"])
    return ln(x, "ln_f") @ t["wte.weight"].T  # lm_head tied to wte, no bias


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Reference:
    """GPT2LMHeadModel's forward in float64, one window (batch 1) at a time, on the stored weights."""

    def __init__(self, tensors):
        self.t = {k.removeprefix("transformer."): torch.from_numpy(v.astype(np.float64)) for k, v in tensors.items()}

    def logits(self, ids):
        """ids: 1-D list of token ids (length T <= n_positions) -> logits (T, V), float64."""
        return forward(self.t, torch.tensor([ids], dtype=torch.long))[0]

    def loss_terms(self, ids, labels):
        """Per-token NLLs as GPT2LMHeadModel's loss sees them: logits[:-1] predict labels[1:], -100 ignored.

        Returns the float64 NLL of every counted label, in order.
        """
        logits = self.logits(ids)
        shift_logits = logits[:-1]
        shift_labels = torch.tensor(labels[1:], dtype=torch.long)
        nll = torch.nn.functional.cross_entropy(shift_logits, shift_labels, ignore_index=-100, reduction="none")
        return nll[shift_labels != -100]


# ---------------------------------------------------------------------------------------------
# Training (float32).


def init_params(gen):
    """GPT-2's initialization: normal(0, 0.02), the residual projections scaled by 1/sqrt(2 n_layer)."""
    std = CONFIG["initializer_range"]
    p = {}
    for name, shape in tensor_shapes().items():
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
            t = torch.ones(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        elif name.endswith("c_proj.weight"):
            t = torch.randn(shape, generator=gen) * std / math.sqrt(2 * CONFIG["n_layer"])
        else:
            t = torch.randn(shape, generator=gen) * std
        p[name] = torch.nn.Parameter(t)
    return p


def train(data, para_starts, seed):
    """AdamW on random windows of the train ids; half of them are <|endoftext|> and the start of a paragraph."""
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    T, V = CONFIG["n_positions"], CONFIG["vocab_size"]
    p = init_params(gen)
    decay = [t for n, t in p.items() if n.endswith("weight") and len(t.shape) == 2]  # matrices and embeddings
    rest = [t for t in p.values() if all(t is not d for d in decay)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.95))
    t = {k.removeprefix("transformer."): v for k, v in p.items()}

    def batch():
        rows = []
        for _ in range(BATCH):
            if rng.random() < 0.5:
                s = min(int(para_starts[rng.integers(len(para_starts))]), len(data) - T)
                rows.append(np.concatenate([[EOT], data[s : s + T - 1]]))
            else:
                s = int(rng.integers(0, len(data) - T))
                rows.append(data[s : s + T])
        return torch.from_numpy(np.stack(rows).astype(np.int64))

    losses = []
    for step in range(STEPS):
        lr = LR * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / STEPS)))  # cosine to a tenth
        for g in opt.param_groups:
            g["lr"] = lr
        ids = batch()
        logits = forward(t, ids)
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == STEPS - 1:
            print(f"  step {step:4d}  loss {np.mean(losses[-20:]):.4f}", flush=True)
    return p, float(np.mean(losses[-20:]))


def keep_freed_memory():
    """Let glibc's malloc keep freed memory instead of unmapping it: every training step allocates and frees
    logits of BATCH x 64 x 50257 floats, and faulting those pages in anew made each step three times slower."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-4, 0)  # M_MMAP_MAX: no mmap'd chunks
    libc.mallopt(-1, 2**31 - 1)  # M_TRIM_THRESHOLD: never give the heap's top back


def numpy_logits(tensors, ids):
    """An independent, naive float64 forward (loops over heads and positions) to check Reference."""
    t = {k.removeprefix("transformer."): v.astype(np.float64) for k, v in tensors.items()}
    C, nh, eps = CONFIG["n_embd"], CONFIG["n_head"], CONFIG["layer_norm_epsilon"]
    hd = C // nh
    T = len(ids)

    def ln(x, name):
        out = np.empty_like(x)
        for r in range(x.shape[0]):
            mu = x[r].mean()
            var = ((x[r] - mu) ** 2).mean()
            out[r] = (x[r] - mu) / math.sqrt(var + eps) * t[name + ".weight"] + t[name + ".bias"]
        return out

    x = np.stack([t["wte.weight"][i] + t["wpe.weight"][p] for p, i in enumerate(ids)])
    for i in range(CONFIG["n_layer"]):
        p = f"h.{i}."
        qkv = ln(x, p + "ln_1") @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        y = np.zeros((T, C))
        for h in range(nh):
            q = qkv[:, h * hd : (h + 1) * hd]
            k = qkv[:, C + h * hd : C + (h + 1) * hd]
            v = qkv[:, 2 * C + h * hd : 2 * C + (h + 1) * hd]
            for s in range(T):
                scores = np.array([q[s] @ k[u] / math.sqrt(hd) for u in range(s + 1)])
                w = np.exp(scores - scores.max())
                w /= w.sum()
                y[s, h * hd : (h + 1) * hd] = w @ v[: s + 1]
        x = x + y @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        a = ln(x, p + "ln_2") @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"]
        a = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
        x = x + a @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    return ln(x, "ln_f") @ t["wte.weight"].T


# ---------------------------------------------------------------------------------------------
# The evaluation methods, as Hugging Face defines them.


def hf_strided(ref, ids, max_length, stride):
    """Hugging Face's "Perplexity of fixed-length models" loop, literally, summing exact per-token NLLs.

    Returns (nll_sum, count, windows) with one {begin, end, scored, nll_sum} per model call.
    """
    seq_len = len(ids)
    nll_sum, n_tokens, windows = 0.0, 0, []
    prev_end_loc = 0
    for begin_loc in range(0, seq_len, stride):
        end_loc = min(begin_loc + max_length, seq_len)
        trg_len = end_loc - prev_end_loc  # may be different from stride on last loop
        input_ids = list(ids[begin_loc:end_loc])
        target_ids = list(input_ids)
        for j in range(max(len(target_ids) - trg_len, 0)):  # target_ids[:, :-trg_len] = -100
            target_ids[j] = -100
        nll = ref.loss_terms(input_ids, target_ids)
        s = float(nll.sum())
        windows.append({"begin": begin_loc, "end": end_loc, "scored": int(nll.numel()), "nll_sum": s})
        nll_sum += s
        n_tokens += int(nll.numel())
        prev_end_loc = end_loc
        if end_loc == seq_len:
            break
    return nll_sum, n_tokens, windows


def stream(ref, ids, ctx):
    """Non-overlapping windows of ctx; each scores its tokens 2..L; the last partial window counts."""
    nll_sum, n_tokens, windows = 0.0, 0, []
    for begin in range(0, len(ids), ctx):
        w = list(ids[begin : begin + ctx])
        nll = ref.loss_terms(w, w)  # every label counted; the shift drops the first
        s = float(nll.sum())
        windows.append({"begin": begin, "end": begin + len(w), "scored": int(nll.numel()), "nll_sum": s})
        nll_sum += s
        n_tokens += int(nll.numel())
    return nll_sum, n_tokens, windows


def documents(ref, docs, ctx, stride):
    """Each document alone, <|endoftext|> prepended as context; longer than ctx -> strided."""
    nll_sum, n_tokens, windows = 0.0, 0, []
    for d, doc in enumerate(docs):
        seq = [EOT] + list(doc)
        s, n, ws = hf_strided(ref, seq, ctx, stride)  # a single window when len(seq) <= ctx
        assert n == len(doc), (d, n, len(doc))
        for w in ws:
            w["doc"] = d
        nll_sum += s
        n_tokens += n
        windows += ws
    return nll_sum, n_tokens, windows


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------


def main():
    torch.set_num_threads(1)
    keep_freed_memory()
    text_path = sys.argv[1] if len(sys.argv) > 1 else TEXT
    with open(text_path, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == TEXT_SHA256, f"{text_path} is not TinyShakespeare"
    data = train_ids(text_path)
    val = read_tokens(VAL_TOKENS)
    assert (ids_sha256(val), len(val)) == VAL_IDS, "shakespeare_val.tokens is not the README's val split"
    V = CONFIG["vocab_size"]

    t0 = time.time()
    params, final_loss = train(data, paragraph_starts(data), SEED)
    train_s = time.time() - t0

    os.makedirs(TINY, exist_ok=True)
    weights = stored_weights(params)
    st_path = os.path.join(TINY, "model.safetensors")
    write_safetensors(st_path, weights)
    with open(os.path.join(TINY, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")

    tensors = read_safetensors(st_path)
    for k, v in weights.items():
        assert np.array_equal(tensors[k], v), k
    ref = Reference(tensors)

    # The held-out corpus: <|endoftext|> then val ids from its first paragraph on (the ends of the id range
    # are exercised: 50256 here, and 0 ("!") occurs in the text); the documents are the next val paragraphs,
    # each cut to a length around the window sizes and taken from the first paragraph after the one before.
    paras = [int(s) for s in paragraph_starts(val)]
    tokens = [EOT] + val[paras[0] : paras[0] + 699]
    assert 0 in tokens and EOT not in tokens[1:]
    docs, end = [], paras[0] + 699
    for n in [1, 2, 7, 30, 63, 64, 100, 150]:
        s = next(s for s in paras if s >= end)
        docs.append(val[s : s + n])
        end = s + n
    assert EOT not in sum(docs, [])

    # The torch forward against the naive numpy one, on windows of several lengths.
    for ids in (tokens[:64], tokens[100:101], tokens[200:237], [EOT] + docs[2]):
        a = ref.logits(ids).numpy()
        b = numpy_logits(tensors, ids)
        err = np.abs(a - b).max()
        assert err < 1e-9, f"torch and numpy forwards differ by {err}"

    cases = []

    def add(name, mode, ctx, stride, n_tokens, result):
        s, n, ws = result
        cases.append(
            {
                "name": name,
                "mode": mode,
                "ctx": ctx,
                "stride": stride,
                "n_tokens": n_tokens,
                "nll_sum": s,
                "count": n,
                "mean_nll": s / n,
                "windows": ws,
            }
        )

    add("stream_ctx64", "stream", 64, 0, 700, stream(ref, tokens, 64))
    add("stream_ctx64_last_window_1", "stream", 64, 0, 641, stream(ref, tokens[:641], 64))
    add("stream_ctx37", "stream", 37, 0, 700, stream(ref, tokens, 37))
    add("strided_ctx64_stride24", "strided", 64, 24, 700, hf_strided(ref, tokens, 64, 24))
    add("strided_ctx64_stride64", "strided", 64, 64, 700, hf_strided(ref, tokens, 64, 64))
    add("strided_ctx16_stride1", "strided", 16, 1, 200, hf_strided(ref, tokens[:200], 16, 1))
    add("documents_ctx64_stride32", "documents", 64, 32, 0, documents(ref, docs, 64, 32))

    # Stride == ctx is stream; and the count of strided is every token but the first.
    by = {c["name"]: c for c in cases}
    assert abs(by["stream_ctx64"]["nll_sum"] - by["strided_ctx64_stride64"]["nll_sum"]) < 1e-9
    assert by["strided_ctx64_stride24"]["count"] == 699
    assert by["strided_ctx16_stride1"]["count"] == 199

    out = {
        "about": "Reference NLLs (nats, float64 PyTorch) of testdata/golden/tiny; written by gen_golden.py.",
        "model": "tiny",
        "seed": SEED,
        "torch": torch.__version__,
        "eot": EOT,
        "tokens": tokens,
        "documents": docs,
        "cases": cases,
    }
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        f.write(dump(out))

    for c in cases:
        print(f'{c["name"]:28s} count {c["count"]:4d}  mean_nll {c["mean_nll"]:.9f}  windows {len(c["windows"])}')
    size = os.path.getsize(st_path)
    print(f"trained {STEPS} steps in {train_s:.0f} s, final loss {final_loss:.4f}; model.safetensors {size} bytes; "
          f"ln V = {math.log(V):.4f}")
    # A model that predicts well, or the goldens hide what only peaked softmaxes show.
    assert all(c["mean_nll"] < math.log(V) - 3 for c in cases), [c["mean_nll"] for c in cases]
    return 0


def dump(out):
    """JSON with one case field or window per line, so diffs of regenerated goldens stay readable."""
    lines = ["{"]
    for k in ("about", "model", "seed", "torch", "eot"):
        lines.append(f"  {json.dumps(k)}: {json.dumps(out[k])},")
    lines.append(f'  "tokens": {json.dumps(out["tokens"])},')
    lines.append('  "documents": [')
    lines.append(",\n".join("    " + json.dumps(d) for d in out["documents"]))
    lines.append("  ],")
    lines.append('  "cases": [')
    cs = []
    for c in out["cases"]:
        head = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in c.items() if k != "windows")
        ws = ",\n".join("      " + json.dumps(w) for w in c["windows"])
        cs.append("    {" + head + ', "windows": [\n' + ws + "\n    ]}")
    lines.append(",\n".join(cs))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

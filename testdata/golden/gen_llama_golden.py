#!/usr/bin/python3
"""Generate the Llama-family goldens the Go tests check (pipeline/golden_llama_test.go).

Dev script: CI does not run it and does not need PyTorch. Its outputs are committed, one folder per variant:

    testdata/golden/llama/<variant>/config.json     the config as transformers writes it for that class
    testdata/golden/llama/<variant>/*.safetensors   the trained weights, keys as the class saves them
    testdata/golden/llama/<variant>/golden.json     token ids, documents and the reference NLL of every case

    variant   class               attention                      rope                              lm_head  dtype
    llama2    LlamaForCausalLM    MHA, 4 heads of 16             theta 1e4                         untied   F32
    llama3    LlamaForCausalLM    GQA 4/2, head_dim 16           theta 5e5, rope_scaling llama3    tied     BF16, 2 shards + index
    mistral   MistralForCausalLM  GQA 4/2, head_dim 16           theta 1e6, sliding_window null    untied   F16
    qwen2     Qwen2ForCausalLM    GQA 4/2, q/k/v biases          theta 1e6                         tied     BF16
    qwen3     Qwen3ForCausalLM    GQA 4/2, head_dim 32 (> 64/4), theta 1e6                         tied     F32
                                  q_norm and k_norm

All have hidden 64, 2 layers, intermediate 176 (not a multiple of 64, on purpose), vocabulary 320: one byte is
one id (0..255), BOS = 256, EOS = 257, and the ids 258..319 are never used but stay in the softmax, as Hugging
Face computes it over the whole vocab_size. max_position_embeddings is 2048.

Run it from the repository root with Debian's PyTorch (apt-get install python3-torch python3-numpy; no pip
packages, no transformers):

    /usr/bin/python3 testdata/golden/gen_llama_golden.py [path/to/tinyshakespeare.txt]

The text defaults to ../shared/data/tinyshakespeare.txt (its sha256 is checked). It runs on one thread
(torch.set_num_threads(1)): about 13 minutes of CPU, of which training is about a minute per variant, the rest the
float64 reference, the numpy check and the float32 check. It is deterministic (torch and numpy seeds SEED +
variant index): running it again with the same PyTorch build and BLAS rewrites the same files. Another build
orders its float32 reductions differently, so training takes another path and writes other weights (and other
goldens for them, just as valid).

Each model is trained here, in float32 torch with the same forward as the reference, AdamW, 500 steps of 16
windows of 128 bytes then 40 windows of 1024, half of them BOS + a paragraph, on TinyShakespeare's train split
(bytes [0, 1003854), nanoGPT's split), so that its predictions are peaked. Mean NLL of the held-out val split
(nats; ln 320 = 5.77 for a uniform guess), as this script printed it:

    variant  stream ctx 64  stream ctx 2048  strided ctx 128/32  documents ctx 64/32
    llama2   1.946          2.413            1.900               1.942
    llama3   2.090          2.528            2.054               2.055
    mistral  2.078          2.533            2.060               2.061
    qwen2    2.037          2.494            2.003               2.026
    qwen3    2.053          2.222            2.005               2.028

(the ctx-2048 windows reach distances the models never trained on, hence their higher NLL). golden.json records
the first two as "mean_nll_vs_uniform". The weights are then rounded to the variant's dtype (to nearest even)
and written as safetensors by hand; the reference reads back exactly those stored values, upcast to float64.

The reference forward is written from transformers' definitions of LlamaForCausalLM, MistralForCausalLM,
Qwen2ForCausalLM and Qwen3ForCausalLM and runs in float64: embed_tokens (no position embeddings); per layer
h = x + o_proj(attention(input_layernorm(x))), x = h + down_proj(silu(gate_proj(n)) * up_proj(n)) with
n = post_attention_layernorm(h); model.norm; lm_head (embed_tokens when tied). RMSNorm is
x * rsqrt(mean(x^2) + rms_norm_eps) * weight. Attention: q heads of head_dim (config.head_dim, else
hidden / heads), k and v in num_key_value_heads heads (query head h reads kv head h // (heads / kv_heads)),
Qwen2's q/k/v biases, Qwen3's q_norm/k_norm (RMSNorm over head_dim, per head, before the rotary embedding),
scale 1/sqrt(head_dim), causal softmax. The rotary embedding is Hugging Face's rotate-half layout with
inv_freq[i] = rope_theta^(-2i/head_dim) (rope_scaling "llama3" adjusts it as transformers'
_compute_llama3_parameters does) and its angles pos * inv_freq computed in float64: transformers computes them
in float32, which at position 2000 is off by up to 1e-4 rad; the Go side computes them in float64 and rounds
cos and sin once to float32, so the goldens use the exact angles. (On these models transformers' float32 angles
move a ctx-2048 case's mean NLL by at most 3e-7, far inside the Go tests' 1e-5: the goldens cannot tell the two
apart, and need not.) Positions restart at 0 in every window.

Each window's loss is computed the way the models compute it from labels (shift by one, -100 ignored), summing
exact per-token NLLs in float64, and the evaluation loops are gen_golden.py's (imported from it: stream, and
Hugging Face's strided loop, literally); documents mode prepends BOS (the "eot" of golden.json), as the
pipeline prepends its document separator.

Before anything is written, a second, independent implementation (numpy float64, one position and one head at a
time, the rotation written on (i, i + head_dim/2) pairs, the llama3 scaling as per-frequency branches) checks
the torch forward's logits to 1e-9 on windows of every variant, and the script asserts that the llama3 scaling
changed some frequencies through each of its three branches. It also runs a float32 forward of the same stored
weights (cos and sin rounded once to float32, as the Go side does) over every window of every case and records
the largest per-token, per-window and per-case differences from the float64 reference in golden.json
("f32_check"), which is what the Go test's tolerances are judged against.
"""

import hashlib
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden  # noqa: E402  (the evaluation loops: stream and Hugging Face's strided loop)

SEED = 20261219
BOS, EOS = 256, 257
VOCAB = 320
OUT = os.path.join(HERE, "llama")
TEXT = os.path.join(HERE, "..", "..", "..", "shared", "data", "tinyshakespeare.txt")
TEXT_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
SPLIT = 1003854  # int(0.9 * 1115394): train is [0, SPLIT), the held-out val split [SPLIT, end)
N_TOKENS = 5000  # held-out bytes in golden.json's "tokens" (a ctx-2048 stream case needs at least 4096)
N_DOCS = 40  # held-out paragraphs in "documents", plus the longest held-out paragraph

# Training (float32): STEPS batches of BATCH windows of TRAIN_T bytes, then LONG_STEPS single windows of LONG_T
# bytes, so that the model has seen long distances and the ctx-2048 cases stay peaked too.
STEPS, BATCH, TRAIN_T = 500, 16, 128
LONG_STEPS, LONG_BATCH, LONG_T = 40, 1, 1024
LR = 3e-3

# ---------------------------------------------------------------------------------------------
# The variants' configs, as transformers (4.4x-4.5x) writes them for each class with save_pretrained:
# sorted keys, every field of the class, the PretrainedConfig fields that differ from their defaults.


def common(dtype, tied, kv):
    return {
        "attention_dropout": 0.0,
        "bos_token_id": BOS,
        "eos_token_id": EOS,
        "hidden_act": "silu",
        "hidden_size": 64,
        "initializer_range": 0.02,
        "intermediate_size": 176,
        "max_position_embeddings": 2048,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "num_key_value_heads": kv,
        "tie_word_embeddings": tied,
        "torch_dtype": dtype,
        "use_cache": True,
        "vocab_size": VOCAB,
    }


def llama(dtype, tied, kv, theta, scaling, head_dim=None):
    c = common(dtype, tied, kv)
    c.update(
        {
            "architectures": ["LlamaForCausalLM"],
            "attention_bias": False,
            "mlp_bias": False,
            "model_type": "llama",
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": scaling,
            "rope_theta": theta,
        }
    )
    if head_dim is not None:  # written by transformers >= 4.45; Llama 2's own configs have none
        c["head_dim"] = head_dim
    return c


def mistral(dtype, tied, kv):
    c = common(dtype, tied, kv)
    c.update(
        {
            "architectures": ["MistralForCausalLM"],
            "head_dim": 16,
            "model_type": "mistral",
            "rms_norm_eps": 1e-05,
            "rope_theta": 1000000.0,
            "sliding_window": None,
        }
    )
    return c


def qwen2(dtype, tied, kv):
    c = common(dtype, tied, kv)
    c.update(
        {
            "architectures": ["Qwen2ForCausalLM"],
            "max_window_layers": 28,
            "model_type": "qwen2",
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": 4096,  # unused: use_sliding_window is false (as in Qwen2.5's configs)
            "use_sliding_window": False,
        }
    )
    return c


def qwen3(dtype, tied, kv):
    c = common(dtype, tied, kv)
    c.update(
        {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "head_dim": 32,
            "max_window_layers": 28,
            "model_type": "qwen3",
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 1000000.0,
            "sliding_window": None,
            "use_sliding_window": False,
        }
    )
    return c


LLAMA3_SCALING = {
    "factor": 8.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 256,
    "rope_type": "llama3",
}

# name -> (config, stored dtype, shards)
VARIANTS = {
    "llama2": (llama("float32", False, 4, 10000.0, None), "F32", 1),
    "llama3": (llama("bfloat16", True, 2, 500000.0, LLAMA3_SCALING, head_dim=16), "BF16", 2),
    "mistral": (mistral("float16", False, 2), "F16", 1),
    "qwen2": (qwen2("bfloat16", True, 2), "BF16", 1),
    "qwen3": (qwen3("float32", True, 2), "F32", 1),
}


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def attention_bias(cfg):
    """(q/k/v biases, o_proj bias): Qwen2 always has q/k/v biases; Llama and Qwen3 all four when attention_bias."""
    if cfg["model_type"] == "qwen2":
        return True, False
    b = bool(cfg.get("attention_bias", False))
    return b, b


def tensor_shapes(cfg):
    """Every parameter the class saves, name -> shape (nn.Linear as [out, in])."""
    C, F, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, KV, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)
    qkv_bias, o_bias = attention_bias(cfg)
    mlp_bias = bool(cfg.get("mlp_bias", False))
    s = {"model.embed_tokens.weight": (V, C)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        s[p + "input_layernorm.weight"] = (C,)
        for name, out, inp in (("q_proj", H * D, C), ("k_proj", KV * D, C), ("v_proj", KV * D, C)):
            s[p + f"self_attn.{name}.weight"] = (out, inp)
            if qkv_bias:
                s[p + f"self_attn.{name}.bias"] = (out,)
        s[p + "self_attn.o_proj.weight"] = (C, H * D)
        if o_bias:
            s[p + "self_attn.o_proj.bias"] = (C,)
        if cfg["model_type"] == "qwen3":
            s[p + "self_attn.q_norm.weight"] = (D,)
            s[p + "self_attn.k_norm.weight"] = (D,)
        s[p + "post_attention_layernorm.weight"] = (C,)
        for name, out, inp in (("gate_proj", F, C), ("up_proj", F, C), ("down_proj", C, F)):
            s[p + f"mlp.{name}.weight"] = (out, inp)
            if mlp_bias:
                s[p + f"mlp.{name}.bias"] = (out,)
    s["model.norm.weight"] = (C,)
    if not cfg["tie_word_embeddings"]:
        s["lm_head.weight"] = (V, C)
    return s


# ---------------------------------------------------------------------------------------------
# The forward (torch; float64 for the reference, float32 for training and the float32 check).


def inv_freq(cfg):
    """The rotary frequencies, float64, with transformers' rope_scaling "llama3" adjustment when configured."""
    D = head_dim(cfg)
    inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    sc = cfg.get("rope_scaling")
    if sc is None:
        return inv
    assert sc["rope_type"] == "llama3", sc
    factor, low, high = sc["factor"], sc["low_freq_factor"], sc["high_freq_factor"]
    orig = sc["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    scaled = torch.where(wavelen > orig / low, inv / factor, inv)
    smooth = (orig / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= orig / high) & (wavelen <= orig / low)
    return torch.where(medium, smoothed, scaled)


def rope_tables(cfg, T, dtype):
    """cos and sin (T, head_dim) of the angles pos * inv_freq, computed in float64, rounded once to dtype."""
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq(cfg)[None, :]
    ang = torch.cat([ang, ang], dim=-1)
    return torch.cos(ang).to(dtype), torch.sin(ang).to(dtype)


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    d = x.shape[-1] // 2
    return torch.cat([-x[..., d:], x[..., :d]], dim=-1)


def linear(x, p, name):
    y = x @ p[name + ".weight"].T
    b = p.get(name + ".bias")
    return y if b is None else y + b


def forward(cfg, p, ids, tables=None):
    """ids (B, T) long -> logits (B, T, vocab_size) in the dtype of the parameters p (name -> tensor)."""
    B, T = ids.shape
    H, KV, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)
    eps = cfg["rms_norm_eps"]
    emb = p["model.embed_tokens.weight"]
    cos, sin = tables if tables is not None else rope_tables(cfg, T, emb.dtype)
    cos, sin = cos[:T], sin[:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    masked = torch.tensor(torch.finfo(emb.dtype).min, dtype=emb.dtype)
    x = emb[ids]
    for i in range(cfg["num_hidden_layers"]):
        pre = f"model.layers.{i}."
        n = rms_norm(x, p[pre + "input_layernorm.weight"], eps)
        q = linear(n, p, pre + "self_attn.q_proj").view(B, T, H, D)
        k = linear(n, p, pre + "self_attn.k_proj").view(B, T, KV, D)
        v = linear(n, p, pre + "self_attn.v_proj").view(B, T, KV, D)
        if cfg["model_type"] == "qwen3":  # per-head RMSNorm over head_dim, before the rotary embedding
            q = rms_norm(q, p[pre + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, p[pre + "self_attn.k_norm.weight"], eps)
        q, k, v = (a.transpose(1, 2) for a in (q, k, v))  # (B, heads, T, D)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // KV, dim=1)  # transformers' repeat_kv: query head h reads kv head h // rep
        v = v.repeat_interleave(H // KV, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        att = torch.softmax(torch.where(causal, att, masked), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, H * D)
        h = x + linear(y, p, pre + "self_attn.o_proj")
        n = rms_norm(h, p[pre + "post_attention_layernorm.weight"], eps)
        mlp = torch.nn.functional.silu(linear(n, p, pre + "mlp.gate_proj")) * linear(n, p, pre + "mlp.up_proj")
        x = h + linear(mlp, p, pre + "mlp.down_proj")
    x = rms_norm(x, p["model.norm.weight"], eps)
    return x @ p.get("lm_head.weight", emb).T


class Reference:
    """The forward over the stored weights, one window (batch 1) at a time; loss_terms as gen_golden's Reference."""

    def __init__(self, cfg, tensors, dtype=torch.float64):
        self.cfg = cfg
        self.p = {k: torch.from_numpy(v).to(dtype) for k, v in tensors.items()}
        self.tables = rope_tables(cfg, cfg["max_position_embeddings"], dtype)

    def logits(self, ids):
        return forward(self.cfg, self.p, torch.tensor([list(ids)], dtype=torch.long), self.tables)[0]

    def loss_terms(self, ids, labels):
        """Per-token NLLs as the CausalLM's loss sees them: logits[:-1] predict labels[1:], -100 ignored."""
        logits = self.logits(ids)
        shift_labels = torch.tensor(labels[1:], dtype=torch.long)
        nll = torch.nn.functional.cross_entropy(logits[:-1], shift_labels, ignore_index=-100, reduction="none")
        return nll[shift_labels != -100].to(torch.float64)


# ---------------------------------------------------------------------------------------------
# The independent check: numpy float64, one position and one head at a time.


def numpy_inv_freq(cfg):
    """The frequencies one by one; for llama3 scaling also how many took each branch (kept, divided, smoothed)."""
    D = head_dim(cfg)
    out, branches = [], {"kept": 0, "divided": 0, "smoothed": 0}
    sc = cfg.get("rope_scaling")
    for i in range(D // 2):
        f = math.pow(cfg["rope_theta"], -2.0 * i / D)
        if sc is not None:
            orig = sc["original_max_position_embeddings"]
            wl = 2 * math.pi / f
            if wl < orig / sc["high_freq_factor"]:
                branches["kept"] += 1
            elif wl > orig / sc["low_freq_factor"]:
                f = f / sc["factor"]
                branches["divided"] += 1
            else:
                s = (orig / wl - sc["low_freq_factor"]) / (sc["high_freq_factor"] - sc["low_freq_factor"])
                f = (1 - s) * f / sc["factor"] + s * f
                branches["smoothed"] += 1
        out.append(f)
    return np.array(out), branches


def numpy_logits(cfg, tensors, ids):
    t = {k: v.astype(np.float64) for k, v in tensors.items()}
    H, KV, D = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)
    eps, half, T = cfg["rms_norm_eps"], D // 2, len(ids)
    freqs, _ = numpy_inv_freq(cfg)

    def norm_rows(x, w):
        out = np.empty_like(x)
        for r in range(x.shape[0]):
            out[r] = x[r] / math.sqrt(float(np.dot(x[r], x[r])) / x.shape[1] + eps) * w
        return out

    def lin(x, name):
        y = x @ t[name + ".weight"].T
        return y + t[name + ".bias"] if name + ".bias" in t else y

    def rotate(row, pos):
        a, b = row[:half], row[half:]
        c, s = np.cos(pos * freqs), np.sin(pos * freqs)
        return np.concatenate([a * c - b * s, b * c + a * s])

    x = np.stack([t["model.embed_tokens.weight"][i] for i in ids])
    for layer in range(cfg["num_hidden_layers"]):
        pre = f"model.layers.{layer}."
        n = norm_rows(x, t[pre + "input_layernorm.weight"])
        q, k, v = (lin(n, pre + f"self_attn.{m}_proj") for m in "qkv")
        y = np.zeros((T, H * D))
        for h in range(H):
            g = h // (H // KV)
            qh, kh, vh = q[:, h * D : (h + 1) * D], k[:, g * D : (g + 1) * D], v[:, g * D : (g + 1) * D]
            if cfg["model_type"] == "qwen3":
                qh = norm_rows(qh, t[pre + "self_attn.q_norm.weight"])
                kh = norm_rows(kh, t[pre + "self_attn.k_norm.weight"])
            qr = np.stack([rotate(qh[s], s) for s in range(T)])
            kr = np.stack([rotate(kh[s], s) for s in range(T)])
            for s in range(T):
                scores = kr[: s + 1] @ qr[s] / math.sqrt(D)
                w = np.exp(scores - scores.max())
                y[s, h * D : (h + 1) * D] = (w / w.sum()) @ vh[: s + 1]
        x = x + lin(y, pre + "self_attn.o_proj")
        n = norm_rows(x, t[pre + "post_attention_layernorm.weight"])
        g = lin(n, pre + "mlp.gate_proj")
        x = x + lin(g / (1 + np.exp(-g)) * lin(n, pre + "mlp.up_proj"), pre + "mlp.down_proj")
    x = norm_rows(x, t["model.norm.weight"])
    head = t["lm_head.weight"] if "lm_head.weight" in t else t["model.embed_tokens.weight"]
    return x @ head.T


# ---------------------------------------------------------------------------------------------
# safetensors, written and read by hand.

ST_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def raw_bytes(t, dtype):
    """The little-endian bytes of the float32 tensor t rounded (to nearest even) to dtype."""
    assert sys.byteorder == "little"
    r = t.detach().to(ST_DTYPES[dtype]).contiguous()
    if dtype == "F32":
        return r.numpy().tobytes()
    return r.view(torch.int16).numpy().tobytes()


def write_safetensors(path, tensors):
    """tensors: name -> (dtype, shape, raw bytes). u64 LE header length, JSON header, data in name order."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    names = sorted(tensors)
    for name in names:
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    hdr = json.dumps(header, separators=(",", ":")).encode()
    hdr += b" " * (-len(hdr) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)))
        f.write(hdr)
        for name in names:
            f.write(tensors[name][2])


def read_safetensors(path):
    """name -> numpy float64 array of the stored values."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        lo, hi = t["data_offsets"]
        raw = data[base + lo : base + hi]
        if t["dtype"] == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            a = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2"}[t["dtype"]])
        out[name] = a.astype(np.float64).reshape(t["shape"])
    return out


def save_model(folder, cfg, dtype, shards, params):
    """Write config.json and the weights (one file, or shards with model.safetensors.index.json); read them back."""
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        if f.endswith(".safetensors") or f.endswith(".index.json"):
            os.remove(os.path.join(folder, f))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    order = list(tensor_shapes(cfg))  # the state_dict order, in which save_pretrained fills its shards
    assert sorted(order) == sorted(params), (sorted(order), sorted(params))
    stored = {name: (dtype, tuple(params[name].shape), raw_bytes(params[name], dtype)) for name in order}
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), stored)
        files = ["model.safetensors"]
    else:
        # Two shards: the embeddings and the first half of the layers, then the rest.
        cut = next(i for i, n in enumerate(order) if n.startswith(f"model.layers.{cfg['num_hidden_layers'] // 2}."))
        parts = [order[:cut], order[cut:]]
        files = [f"model-{i + 1:05d}-of-{shards:05d}.safetensors" for i in range(shards)]
        weight_map = {}
        for fname, names in zip(files, parts):
            write_safetensors(os.path.join(folder, fname), {n: stored[n] for n in names})
            weight_map.update({n: fname for n in names})
        index = {"metadata": {"total_size": sum(len(s[2]) for s in stored.values())}, "weight_map": weight_map}
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=2, sort_keys=True)
            f.write("\n")
    tensors = {}
    for fname in files:
        tensors.update(read_safetensors(os.path.join(folder, fname)))
    for name in order:  # what was read back is exactly the rounded parameter
        want = params[name].detach().to(ST_DTYPES[dtype]).to(torch.float64).numpy()
        assert np.array_equal(tensors[name], want), name
    return tensors


# ---------------------------------------------------------------------------------------------
# Training (float32).


def init_params(cfg, gen):
    std = cfg["initializer_range"]
    p = {}
    for name, shape in tensor_shapes(cfg).items():
        if name.endswith("norm.weight"):
            t = torch.ones(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            t = torch.randn(shape, generator=gen) * std
        p[name] = torch.nn.Parameter(t)
    return p


def train(cfg, data, para_starts, seed):
    """AdamW on random windows of the train bytes; half of them start with BOS and a paragraph."""
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    p = init_params(cfg, gen)
    decay = [t for n, t in p.items() if n.endswith("proj.weight") or n.endswith("embed_tokens.weight") or n == "lm_head.weight"]
    rest = [t for t in p.values() if all(t is not d for d in decay)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.95))
    total = STEPS + LONG_STEPS
    tables = rope_tables(cfg, LONG_T, torch.float32)

    def batch(n, T):
        rows = []
        for _ in range(n):
            if rng.random() < 0.5:
                s = int(para_starts[rng.integers(len(para_starts))])
                s = min(s, len(data) - T)
                rows.append([BOS] + list(data[s : s + T - 1]))
            else:
                s = int(rng.integers(0, len(data) - T))
                rows.append(list(data[s : s + T]))
        return torch.tensor(rows, dtype=torch.long)

    losses = []
    for step in range(total):
        lr = LR * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / total)))  # cosine to a tenth
        for g in opt.param_groups:
            g["lr"] = lr
        ids = batch(BATCH, TRAIN_T) if step < STEPS else batch(LONG_BATCH, LONG_T)
        logits = forward(cfg, p, ids, tables)
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 100 == 0 or step == total - 1:
            print(f"  step {step:4d}  loss {np.mean(losses[-20:]):.4f}", flush=True)
    return {k: v.detach() for k, v in p.items()}


# ---------------------------------------------------------------------------------------------
# The evaluation methods.


def documents(ref, docs, ctx, stride):
    """gen_golden.documents with BOS as the separator: each document alone, BOS prepended; longer -> strided."""
    nll_sum, n_tokens, windows = 0.0, 0, []
    for d, doc in enumerate(docs):
        seq = [BOS] + list(doc)
        s, n, ws = gen_golden.hf_strided(ref, seq, ctx, stride)  # a single window when len(seq) <= ctx
        assert n == len(doc), (d, n, len(doc))
        for w in ws:
            w["doc"] = d
        nll_sum += s
        n_tokens += n
        windows += ws
    return nll_sum, n_tokens, windows


CASES = [  # (name, mode, ctx, stride, n_tokens)
    ("stream_ctx64", "stream", 64, 0, N_TOKENS),
    ("stream_ctx2048", "stream", 2048, 0, N_TOKENS),
    ("strided_ctx128_stride32", "strided", 128, 32, N_TOKENS),
    ("strided_ctx2048_stride512", "strided", 2048, 512, N_TOKENS),
    ("documents_ctx64_stride32", "documents", 64, 32, 0),
    ("documents_ctx1024_stride256", "documents", 1024, 256, 0),
    ("documents_ctx2048_stride512", "documents", 2048, 512, 0),
]


def run_cases(ref, tokens, docs):
    cases = []
    for name, mode, ctx, stride, n in CASES:
        if mode == "stream":
            s, cnt, ws = gen_golden.stream(ref, tokens[:n], ctx)
        elif mode == "strided":
            s, cnt, ws = gen_golden.hf_strided(ref, tokens[:n], ctx, stride)
        else:
            s, cnt, ws = documents(ref, docs, ctx, stride)
        cases.append({"name": name, "mode": mode, "ctx": ctx, "stride": stride, "n_tokens": n,
                      "nll_sum": s, "count": cnt, "mean_nll": s / cnt, "windows": ws})
    return cases


def window_ids(tokens, docs, w):
    if "doc" in w:
        return ([BOS] + list(docs[w["doc"]]))[w["begin"] : w["end"]]
    return tokens[w["begin"] : w["end"]]


def f32_check(cfg, tensors, ref64, tokens, docs, cases):
    """A float32 forward of the stored weights against the float64 goldens: the largest differences."""
    ref32 = Reference(cfg, tensors, torch.float32)
    tok_max, win_max, win_rel, case_max = 0.0, 0.0, 0.0, 0.0
    for c in cases:
        s32 = 0.0
        for w in c["windows"]:
            if w["scored"] == 0:
                continue
            ids = window_ids(tokens, docs, w)
            labels = list(ids)
            first = len(ids) - w["scored"]  # the targets the window scores are its last `scored` tokens
            for j in range(first):
                labels[j] = -100
            nll32 = ref32.loss_terms(ids, labels)
            nll64 = ref64.loss_terms(ids, labels)
            tok_max = max(tok_max, float((nll32 - nll64).abs().max()))
            d = abs(float(nll32.sum()) - w["nll_sum"])
            win_max = max(win_max, d)
            win_rel = max(win_rel, d / w["scored"])
            s32 += float(nll32.sum())
        case_max = max(case_max, abs(s32 / c["count"] - c["mean_nll"]))
    return {"max_token": tok_max, "max_window_sum": win_max, "max_window_sum_per_target": win_rel,
            "max_case_mean": case_max}


# ---------------------------------------------------------------------------------------------


def paragraphs(text, start):
    """(offset, bytes) of every complete paragraph (text between blank lines) after start."""
    out, pos = [], text.index(b"\n\n", start) + 2
    while True:
        end = text.find(b"\n\n", pos)
        if end < 0:
            break
        if end > pos:
            out.append((pos, text[pos:end]))
        pos = end + 2
    return out


def main():
    torch.set_num_threads(1)
    path = sys.argv[1] if len(sys.argv) > 1 else TEXT
    with open(path, "rb") as f:
        text = f.read()
    assert hashlib.sha256(text).hexdigest() == TEXT_SHA256, f"{path} is not TinyShakespeare"
    train_data = np.frombuffer(text[:SPLIT], dtype=np.uint8)
    train_starts = np.array([o for o, _ in paragraphs(text[:SPLIT], 0)])

    # The held-out corpus: val bytes from its first paragraph on, and val paragraphs as documents.
    val_paras = paragraphs(text, SPLIT)
    begin = val_paras[0][0]
    tokens = list(text[begin : begin + N_TOKENS])
    longest = max(val_paras[N_DOCS:], key=lambda p: len(p[1]))
    docs = [list(b) for _, b in val_paras[:N_DOCS]] + [list(longest[1])]
    assert len(docs[-1]) + 1 > 1024, len(docs[-1])  # one document strided over at ctx 1024

    lnV = math.log(VOCAB)
    summary = []
    for vi, (name, (cfg, dtype, shards)) in enumerate(VARIANTS.items()):
        print(f"== {name}: {cfg['architectures'][0]}, {dtype}, {shards} file(s)", flush=True)
        folder = os.path.join(OUT, name)
        t0 = time.time()
        params = train(cfg, train_data, train_starts, SEED + vi)
        train_s = time.time() - t0
        tensors = save_model(folder, cfg, dtype, shards, params)
        ref = Reference(cfg, tensors)

        # The rope scaling path, checked and counted.
        plain = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, head_dim(cfg), 2, dtype=torch.float64) / head_dim(cfg)))
        freqs, branches = numpy_inv_freq(cfg)
        changed = int((inv_freq(cfg) != plain).sum())
        assert np.allclose(freqs, inv_freq(cfg).numpy(), rtol=1e-14, atol=0)
        if cfg.get("rope_scaling"):
            print(f"  llama3 rope scaling changes {changed} of {len(freqs)} inv_freq entries; branches {branches}")
            assert changed > 0 and all(v > 0 for v in branches.values()), branches
        else:
            assert changed == 0

        # The torch forward against the naive numpy one.
        for ids in (tokens[:64], tokens[100:101], tokens[200:437], [BOS] + docs[3], tokens[:2048]):
            a = ref.logits(ids).numpy()
            b = numpy_logits(cfg, tensors, ids)
            err = np.abs(a - b).max()
            assert err < 1e-9, f"{name}: torch and numpy forwards differ by {err}"

        cases = run_cases(ref, tokens, docs)
        by = {c["name"]: c for c in cases}
        assert by["strided_ctx128_stride32"]["count"] == N_TOKENS - 1
        assert by["strided_ctx2048_stride512"]["count"] == N_TOKENS - 1
        assert by["documents_ctx64_stride32"]["count"] == sum(len(d) for d in docs)
        assert max(len(c["windows"]) for c in cases if c["mode"] == "documents") > len(docs)
        check = f32_check(cfg, tensors, ref, tokens, docs, cases)

        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f != "golden.json")
        mean = by["stream_ctx64"]["mean_nll"]
        out = {
            "about": f"Reference NLLs (nats, float64 PyTorch) of testdata/golden/llama/{name}; written by gen_llama_golden.py.",
            "model": name,
            "seed": SEED + vi,
            "torch": torch.__version__,
            "mean_nll_vs_uniform": {"stream_ctx64": mean, "stream_ctx2048": by["stream_ctx2048"]["mean_nll"], "ln_vocab": lnV},
            "f32_check": check,
            "eot": BOS,
            "tokens": tokens,
            "documents": docs,
            "cases": cases,
        }
        with open(os.path.join(folder, "golden.json"), "w") as f:
            f.write(dump(out))
        gsize = os.path.getsize(os.path.join(folder, "golden.json"))
        for c in cases:
            print(f'  {c["name"]:28s} count {c["count"]:5d}  mean_nll {c["mean_nll"]:.9f}  windows {len(c["windows"])}')
        print(f"  float32 forward vs float64: {json.dumps(check)}")
        print(f"  trained in {train_s:.0f} s; weights+config {size} bytes, golden.json {gsize} bytes; "
              f"mean NLL {mean:.4f} (stream ctx 64) vs ln {VOCAB} = {lnV:.4f}", flush=True)
        assert mean < 2.6, mean
        summary.append((name, dtype, size + gsize, mean, by["stream_ctx2048"]["mean_nll"], train_s))

    print("\nvariant  dtype  bytes    NLL ctx64  NLL ctx2048  train s")
    for s in summary:
        print(f"{s[0]:8s} {s[1]:5s} {s[2]:7d}  {s[3]:.4f}     {s[4]:.4f}       {s[5]:.0f}")
    return 0


def dump(out):
    """gen_golden.dump's layout, with this script's extra top-level fields (which the Go struct ignores)."""
    lines = ["{"]
    for k in ("about", "model", "seed", "torch", "mean_nll_vs_uniform", "f32_check", "eot"):
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

#!/usr/bin/python3
"""Generate the golden NLL values the Go tests check (pipeline/golden_test.go).

Dev script: CI does not run it and does not need PyTorch. Its outputs are committed:

    testdata/golden/tiny/config.json        Hugging Face GPT-2 config of a tiny random model
    testdata/golden/tiny/model.safetensors  its weights, F16, keys as GPT2LMHeadModel saves them
    testdata/golden/golden.json             token ids, documents and the reference NLL of every case

Run it from the repository root with Debian's PyTorch (apt-get install python3-torch python3-numpy;
no pip packages, no transformers):

    /usr/bin/python3 testdata/golden/gen_golden.py

It is deterministic (numpy seed SEED): running it again rewrites the same files, up to the last bits
of the float64 sums where a different PyTorch build orders its reductions differently.

The model is built here with numpy, rounded to float16, written as safetensors by hand, and the
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

import json
import math
import os
import struct
import sys

import numpy as np
import torch

SEED = 20261202
EOT = 50256

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

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "tiny")


# ---------------------------------------------------------------------------------------------
# The tiny model: numpy float16 tensors under Hugging Face's names.


def make_weights(rng):
    """Random GPT-2 weights, float16, keyed as GPT2LMHeadModel.state_dict() without lm_head.

    Scales are chosen so the model is far from uniform: attention is peaked, LayerNorm weights
    are 1 plus noise, every bias is non-zero, and logits vary by a few nats across the vocabulary.
    """
    C = CONFIG["n_embd"]
    V = CONFIG["vocab_size"]
    P = CONFIG["n_positions"]

    def normal(std, *shape):
        return (rng.standard_normal(shape) * std).astype(np.float16)

    def ln_weight(n):
        return (1.0 + rng.standard_normal(n) * 0.2).astype(np.float16)

    w = {}
    w["transformer.wte.weight"] = normal(0.5, V, C)
    w["transformer.wpe.weight"] = normal(0.3, P, C)
    causal = np.tril(np.ones((P, P), dtype=np.float32)).reshape(1, 1, P, P)
    for i in range(CONFIG["n_layer"]):
        p = f"transformer.h.{i}."
        w[p + "ln_1.weight"] = ln_weight(C)
        w[p + "ln_1.bias"] = normal(0.1, C)
        w[p + "attn.bias"] = causal  # the buffer real files carry; loaders ignore it
        w[p + "attn.c_attn.weight"] = normal(0.3, C, 3 * C)
        w[p + "attn.c_attn.bias"] = normal(0.1, 3 * C)
        w[p + "attn.c_proj.weight"] = normal(0.2, C, C)
        w[p + "attn.c_proj.bias"] = normal(0.1, C)
        w[p + "ln_2.weight"] = ln_weight(C)
        w[p + "ln_2.bias"] = normal(0.1, C)
        w[p + "mlp.c_fc.weight"] = normal(0.25, C, 4 * C)
        w[p + "mlp.c_fc.bias"] = normal(0.1, 4 * C)
        w[p + "mlp.c_proj.weight"] = normal(0.15, 4 * C, C)
        w[p + "mlp.c_proj.bias"] = normal(0.1, C)
    w["transformer.ln_f.weight"] = ln_weight(C)
    w["transformer.ln_f.bias"] = normal(0.1, C)
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
# The reference: GPT2LMHeadModel's forward in float64, one window (batch 1) at a time.


class Reference:
    def __init__(self, tensors):
        self.t = {k.removeprefix("transformer."): torch.from_numpy(v.astype(np.float64)) for k, v in tensors.items()}
        self.C = CONFIG["n_embd"]
        self.nh = CONFIG["n_head"]
        self.eps = CONFIG["layer_norm_epsilon"]

    def ln(self, x, name):
        return torch.nn.functional.layer_norm(x, (self.C,), self.t[name + ".weight"], self.t[name + ".bias"], self.eps)

    @staticmethod
    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    def logits(self, ids):
        """ids: 1-D list of token ids (length T <= n_positions) -> logits (T, V), float64."""
        t, C, nh = self.t, self.C, self.nh
        hd = C // nh
        T = len(ids)
        x = t["wte.weight"][torch.tensor(ids)] + t["wpe.weight"][:T]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
        for i in range(CONFIG["n_layer"]):
            p = f"h.{i}."
            h = self.ln(x, p + "ln_1")
            qkv = h @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]  # Conv1D: x W + b
            q, k, v = qkv.split(C, dim=-1)
            q, k, v = (a.view(T, nh, hd).transpose(0, 1) for a in (q, k, v))  # (nh, T, hd)
            att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            att = torch.where(causal, att, torch.tensor(torch.finfo(att.dtype).min, dtype=att.dtype))
            att = torch.softmax(att, dim=-1)
            y = (att @ v).transpose(0, 1).reshape(T, C)
            x = x + (y @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"])
            h = self.ln(x, p + "ln_2")
            h = self.gelu_new(h @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"])
            x = x + (h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"])
        x = self.ln(x, "ln_f")
        return x @ t["wte.weight"].T  # lm_head tied to wte, no bias

    def loss_terms(self, ids, labels):
        """Per-token NLLs as GPT2LMHeadModel's loss sees them: logits[:-1] predict labels[1:], -100 ignored.

        Returns the float64 NLL of every counted label, in order.
        """
        logits = self.logits(ids)
        shift_logits = logits[:-1]
        shift_labels = torch.tensor(labels[1:], dtype=torch.long)
        nll = torch.nn.functional.cross_entropy(shift_logits, shift_labels, ignore_index=-100, reduction="none")
        return nll[shift_labels != -100]


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


def main():
    torch.set_num_threads(1)
    rng = np.random.default_rng(SEED)
    os.makedirs(TINY, exist_ok=True)

    weights = make_weights(rng)
    st_path = os.path.join(TINY, "model.safetensors")
    write_safetensors(st_path, weights)
    with open(os.path.join(TINY, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")

    tensors = read_safetensors(st_path)
    for k, v in weights.items():
        assert np.array_equal(tensors[k], v), k
    ref = Reference(tensors)

    V = CONFIG["vocab_size"]
    tokens = [int(x) for x in rng.integers(0, V, size=700)]
    tokens[0] = EOT  # the ends of the id range are exercised too
    tokens[1] = 0
    doc_lengths = [1, 2, 7, 30, 63, 64, 100, 150]
    docs = [[int(x) for x in rng.integers(0, EOT, size=n)] for n in doc_lengths]

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
    print("ln V =", math.log(V))
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

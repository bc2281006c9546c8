#!/usr/bin/env python3
"""Write rope_golden.json, the rotary frequencies model/rope_golden_test.go checks ParseConfig and ropeInvFreq against.

Dev script, pure Python (no PyTorch, no transformers): run from model/testdata with any Python 3,

    python3 gen_rope_golden.py > rope_golden.json

For each case it holds a Llama-family config.json and what transformers 5 computes from it: the rotary base, the
inverse frequencies and the attention factor that multiplies cos and sin. It follows transformers 5's
RotaryEmbeddingConfigMixin (convert_rope_params_to_dict and standardize_rope_params: rope_scaling before
rope_parameters, their rope_theta before the top-level one, a top-level original_max_position_embeddings before
theirs) and the functions of modeling_rope_utils.py (_compute_default_rope_parameters, _compute_linear_scaling_...,
_compute_dynamic_ntk_parameters at init, _compute_llama3_parameters, _compute_yarn_parameters), re-expressed here in
float64 Python: transformers evaluates the same formulas in float32 tensors, which differs in the last float32 bits.
"""
import json
import math

BASE = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1, "num_attention_heads": 4,
        "num_key_value_heads": 4, "vocab_size": 1000, "rms_norm_eps": 1e-6}

CASES = [
    ("qwen2.5-yarn", "qwen2", {"head_dim": 64, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
                               "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}),
    ("qwen3-v5-yarn", "qwen3", {"head_dim": 128, "max_position_embeddings": 131072,
                                "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1000000,
                                                    "original_max_position_embeddings": 32768}}),
    ("yarn-mscale", "llama", {"head_dim": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
                              "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                                               "mscale": 0.707, "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1}}),
    ("yarn-no-truncate", "llama", {"head_dim": 64, "max_position_embeddings": 131072, "rope_theta": 150000,
                                   "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                                    "original_max_position_embeddings": 4096, "truncate": False}}),
    ("yarn-implicit-factor", "mistral", {"head_dim": 32, "max_position_embeddings": 131072,
                                         "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0,
                                                             "original_max_position_embeddings": 32768}}),
    ("yarn-attention-factor", "qwen2", {"head_dim": 64, "max_position_embeddings": 65536, "rope_theta": 1000000.0,
                                        "original_max_position_embeddings": 16384,
                                        "rope_scaling": {"type": "yarn", "factor": 2.0, "attention_factor": 1.0,
                                                         "beta_fast": 8, "original_max_position_embeddings": 32768}}),
    ("llama3.2-v5", "llama", {"head_dim": 64, "max_position_embeddings": 131072,
                              "rope_parameters": {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 32.0,
                                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                  "original_max_position_embeddings": 8192}}),
    ("linear", "llama", {"max_position_embeddings": 16384, "rope_theta": 10000.0,
                         "rope_scaling": {"type": "linear", "factor": 4.0}}),
    ("dynamic", "llama", {"max_position_embeddings": 4096, "rope_theta": 10000.0,
                          "rope_scaling": {"type": "dynamic", "factor": 2.0}}),
    ("v5-default-theta-null", "qwen3", {"head_dim": 128, "max_position_embeddings": 40960, "rope_theta": None,
                                        "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}}),
    ("v5-theta-inside-wins", "qwen2", {"max_position_embeddings": 32768, "rope_theta": 10000.0,
                                       "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}}),
    ("rope-scaling-wins", "llama", {"max_position_embeddings": 8192, "rope_theta": 500000.0,
                                    "rope_scaling": {"type": "linear", "factor": 2.0},
                                    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}),
    ("per-layer-type", "qwen3", {"head_dim": 128, "max_position_embeddings": 40960,
                                 "layer_types": ["full_attention", "full_attention"],
                                 "rope_parameters": {"full_attention": {"rope_theta": 1000000.0, "rope_type": "default"}}}),
]


def rope_params(cfg):
    """transformers 5's standardized rope_parameters of a config.json dict."""
    params = dict(cfg.get("rope_scaling") or cfg.get("rope_parameters") or {})
    layer_types = cfg.get("layer_types")
    if layer_types and params and set(params) <= set(layer_types):
        entries = list(params.values())
        assert all(e == entries[0] for e in entries)
        params = dict(entries[0])
    params.setdefault("rope_theta", cfg.get("rope_theta", 10000.0))
    params.setdefault("rope_type", params.get("type", "default"))
    if params["rope_type"] in ("llama3", "yarn"):
        if "original_max_position_embeddings" in cfg:
            params["original_max_position_embeddings"] = cfg["original_max_position_embeddings"]
        else:
            params.setdefault("original_max_position_embeddings", cfg["max_position_embeddings"])
    return params


def frequencies(cfg):
    p = rope_params(cfg)
    base = float(p["rope_theta"])
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    default = [1.0 / base ** (i / dim) for i in range(0, dim, 2)]
    kind = p["rope_type"]
    if kind in ("default", "dynamic"):  # dynamic: base * (factor * L / L - (factor - 1)) ** (...) = base at init
        return base, default, 1.0
    if kind == "linear":
        return base, [f / p["factor"] for f in default], 1.0
    if kind == "llama3":
        factor, low, high = p["factor"], p["low_freq_factor"], p["high_freq_factor"]
        old = p["original_max_position_embeddings"]
        out = []
        for f in default:
            wavelen = 2 * math.pi / f
            g = f / factor if wavelen > old / low else f
            if not wavelen < old / high and not wavelen > old / low:
                smooth = (old / wavelen - low) / (high - low)
                g = (1 - smooth) * g / factor + smooth * g
            out.append(g)
        return base, out, 1.0
    assert kind == "yarn"
    orig = p["original_max_position_embeddings"]
    factor = p.get("factor")
    if factor is None:
        factor = cfg["max_position_embeddings"] / orig

    def get_mscale(scale, m=1):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    attention = p.get("attention_factor")
    if attention is None:
        if p.get("mscale") and p.get("mscale_all_dim"):
            attention = get_mscale(factor, p["mscale"]) / get_mscale(factor, p["mscale_all_dim"])
        else:
            attention = get_mscale(factor)
    beta_fast, beta_slow = p.get("beta_fast") or 32, p.get("beta_slow") or 1

    def correction_dim(rotations):
        return (dim * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(dim // 2):
        pos = base ** (2 * i / dim)
        extrapolation, interpolation = 1.0 / pos, 1.0 / (factor * pos)
        e = 1 - min(max((i - low) / (high - low), 0.0), 1.0)
        out.append(interpolation * (1 - e) + extrapolation * e)
    return base, out, attention


def main():
    cases = []
    for name, model_type, extra in CASES:
        cfg = dict(BASE, model_type=model_type, **extra)
        theta, inv, attention = frequencies(cfg)
        cases.append({"name": name, "config": cfg, "rope_theta": theta, "inv_freq": inv, "attention_factor": attention})
    print(json.dumps({"generator": "gen_rope_golden.py", "cases": cases}, indent=1))


if __name__ == "__main__":
    main()

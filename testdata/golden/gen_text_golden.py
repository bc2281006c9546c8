#!/usr/bin/python3
"""Generate the TinyShakespeare goldens of the end-to-end CLI test (cmd/wgpu-eval/golden_test.go).

Dev script: CI does not run it and does not need PyTorch. It reads

    testdata/golden/tiny/                     the tiny F16 GPT-2 gen_golden.py trained on the train split
    testdata/golden/shakespeare_val.tokens    the GPT-2 ids of TinyShakespeare's val split, as an llm.c token file

and writes testdata/golden/shakespeare_val.json: the float64 NLL of the whole val split in stream and strided
mode, computed by gen_golden.py's PyTorch reference of GPT2LMHeadModel and its Hugging Face evaluation loops.

The ids are checked here against the sha256 that ../shared/data/README.md publishes for them (sha256 over the ids
as little-endian uint32), so they do not depend on the tokenizer under test; the Go test checks them again, and
that the command's own tokenization of the text gives exactly these ids.

Run it from the repository root with Debian's PyTorch (apt-get install python3-torch python3-numpy):

    /usr/bin/python3 testdata/golden/gen_text_golden.py
"""

import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_golden  # noqa: E402  (the reference and the token file reader live there)

IDS_SHA256, N_IDS = gen_golden.VAL_IDS  # ../shared/data/README.md

CASES = [  # (name, mode, ctx, stride); the other methods have goldens in golden.json
    ("stream_ctx64", "stream", 64, 0),
]


def main():
    torch.set_num_threads(2)
    ids = gen_golden.read_tokens(gen_golden.VAL_TOKENS)
    digest = gen_golden.ids_sha256(ids)
    assert len(ids) == N_IDS and digest == IDS_SHA256, (len(ids), digest)

    ref = gen_golden.Reference(gen_golden.read_safetensors(os.path.join(gen_golden.TINY, "model.safetensors")))
    cases = []
    for name, mode, ctx, stride in CASES:
        if mode == "stream":
            s, n, _ = gen_golden.stream(ref, ids, ctx)
        else:
            s, n, _ = gen_golden.hf_strided(ref, ids, ctx, stride)
        cases.append({"name": name, "mode": mode, "ctx": ctx, "stride": stride, "nll_sum": s, "count": n, "mean_nll": s / n})
        print(f"{name:24s} count {n:6d}  mean_nll {s / n:.9f}")

    out = {
        "about": "Reference NLLs (nats, float64 PyTorch) of testdata/golden/tiny on TinyShakespeare's val split; "
        "written by gen_text_golden.py.",
        "torch": torch.__version__,
        "data": "tinyshakespeare:val",
        "ids_sha256": IDS_SHA256,
        "n_ids": N_IDS,
        "cases": cases,
    }
    with open(os.path.join(HERE, "shakespeare_val.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

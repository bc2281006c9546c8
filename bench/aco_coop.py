#!/usr/bin/env python3
"""Counts the workgroup-memory loads and stores of matmul_coop.wgsl's main loop in RADV's disassembly.

Reads the output of TestCoopDriverStats run with RADV_DEBUG=shaders (stdout and stderr together, as go test
prints them): per pipeline ("=== pipeline TILING"), the driver's statistics line and, in ACO's disassembly
("disasm:"), the smallest loop (a label and a later branch back to it) that holds every v_wmma: K's loop,
one step, its inner loop over BK/SK unrolled. Prints one line per pipeline: VGPRs, spilled VGPRs, LDS bytes,
subgroups per SIMD, and the loop's count of each of the ds_ and matrix instructions below (static counts:
a step runs each once, but those under a branch, such as the first step's global loads and stores, only
when taken).
"""
import re
import sys

OPS = ["ds_load_u16", "ds_load_b128", "ds_load_b64", "ds_store_b16", "ds_store_b64", "v_wmma", "s_barrier", "scratch_"]
STATS = {"VGPRs": "VGPRs", "Spilled VGPRs": "spill", "LDS size": "LDS", "Subgroups per SIMD": "waves", "Instructions": "instr"}


def main(path):
    text = open(path).read().split("\n")
    stats, sections, cur = {}, [], None
    for ln in text:
        if ln.startswith("=== pipeline "):
            cur = (ln[len("=== pipeline "):], [])
            sections.append(cur)
        elif cur is not None and ln.startswith(cur[0] + ":"):
            stats[cur[0]] = dict(kv.strip().split("=", 1) for kv in ln[len(cur[0]) + 1:].split(";") if "=" in kv)
        elif cur is not None:
            cur[1].append(ln)
    for name, body in sections:
        if "disasm:" not in body:
            print(name, "| no disassembly (RADV_DEBUG=shaders?)")
            continue
        dis = body[body.index("disasm:"):]
        labels, loops = {}, []
        for i, ln in enumerate(dis):
            m = re.match(r"^(BB\d+):", ln)
            if m:
                labels[m.group(1)] = i
            m = re.search(r"\ts_c?branch\w*\s+(BB\d+)", ln)
            if m and m.group(1) in labels:
                loops.append((labels[m.group(1)], i))
        wmma = [i for i, ln in enumerate(dis) if "\tv_wmma" in ln]
        around = [(a, b) for a, b in loops if wmma and a <= wmma[0] and b >= wmma[-1]]
        if not around:
            print(name, "| no loop around the matrix instructions")
            continue
        a, b = min(around, key=lambda ab: ab[1] - ab[0])
        counts = {op: sum(1 for ln in dis[a:b + 1] if "\t" + op in ln) for op in OPS}
        st = stats.get(name, {})
        print(name, "|", " ".join(f"{short}={st.get(k, '?')}" for k, short in STATS.items()), "| loop:",
              " ".join(f"{op}={n}" for op, n in counts.items()))


if __name__ == "__main__":
    main(sys.argv[1])

"""NumPy engine vs numpy float64 matmul, same process: the Phase-A floor and overhead.

For m = n = k = size and phi = 0.5 matrices, times ``ozfft.matmul`` with the default
FP64 moduli count N and ``N`` numpy float64 matmuls of the same size (the floor the
issue sets: at most 2x), plus a per-stage breakdown. Writes JSON and a markdown table.

    python bench/numpy_gemm.py --size 1024 --out bench/results/cpu
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

import ozfft
from ozfft.engines import NumpyEngine
from ozfft.ozaki.moduli import moduli_set
from ozfft.scheme.gemm import compute_shifts
from ozfft.reference import phi_matrix


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def stage_times(a, b, num_moduli: int, mode: str, repeats: int) -> dict[str, float]:
    eng = NumpyEngine()
    mods = moduli_set(num_moduli)
    bt = b.T
    t = {"scaling": best_of(lambda: compute_shifts(eng, a, bt, num_moduli, mode), repeats)}
    sa, sb = compute_shifts(eng, a, bt, num_moduli, mode)
    t["residues"] = best_of(
        lambda: (eng.residues(a, sa, mods), eng.residues(bt, sb, mods)), repeats
    )
    ra, rb = eng.residues(a, sa, mods), eng.residues(bt, sb, mods)
    t["phase_a"] = best_of(lambda: eng.modular_products(ra, rb, mods), repeats)
    u = eng.modular_products(ra, rb, mods)
    t["phase_b"] = best_of(lambda: eng.reconstruct(u, sa, sb, mods, a.dtype), repeats)
    return {k: v * 1e3 for k, v in t.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs="+", default=[1024])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    records = []
    for size in args.size:
        for mode in ("fast", "accurate"):
            a = phi_matrix(rng, (size, size), 0.5)
            b = phi_matrix(rng, (size, size), 0.5)
            n = ozfft.GemmOptions(mode=mode).num_moduli
            a @ b
            native = best_of(lambda a=a, b=b, n=n: [a @ b for _ in range(n)], args.repeats)
            ours = best_of(lambda a=a, b=b, m=mode: ozfft.matmul(a, b, mode=m), args.repeats)
            rec = {
                "op": "dgemm",
                "m": size,
                "n": size,
                "k": size,
                "moduli": n,
                "mode": mode,
                "ozfft_ms": ours * 1e3,
                "n_native_ms": native * 1e3,
                "ratio_to_n_native": ours / native,
                "phases_ms": stage_times(a, b, n, mode, args.repeats),
                "cpu": platform.processor() or platform.machine(),
                "numpy": np.__version__,
            }
            records.append(rec)
            print(
                f"{size}^3 {mode:8} N={n}: ozfft {ours * 1e3:8.1f} ms, {n} x numpy dgemm "
                f"{native * 1e3:8.1f} ms, ratio {ours / native:.2f}  phases {rec['phases_ms']}"
            )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "numpy_gemm.json").write_text(json.dumps(records, indent=1))
        lines = [
            "| size | mode | N | ozfft ms | N x dgemm ms | ratio | scaling | residues | "
            "phase A | phase B |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in records:
            p = r["phases_ms"]
            lines.append(
                f"| {r['m']} | {r['mode']} | {r['moduli']} | {r['ozfft_ms']:.1f} | "
                f"{r['n_native_ms']:.1f} | {r['ratio_to_n_native']:.2f} | {p['scaling']:.1f} | "
                f"{p['residues']:.1f} | {p['phase_a']:.1f} | {p['phase_b']:.1f} |"
            )
        (args.out / "numpy_gemm.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

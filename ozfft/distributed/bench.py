"""Scaling of the distributed FFT against the same decomposition with the engine's own
FFT library: ``ozfft bench distributed`` (or ``python -m ozfft.distributed.bench``), run
under MPI with one GPU per rank (``--engine cuda``) or one process per core (``numpy``)::

    mpiexec -n 4 ozfft bench distributed --weak 512 --strong 1024 --largest 2048

The first ``g`` ranks of ``MPI.COMM_WORLD`` measure together, for each ``g`` of
``--ranks`` (default 1, 2, 4, ... and the world size), while the others wait:

- ``weak``: a ``(n·g, n, n)`` array, ``n = --weak`` (``n³`` elements per rank);
- ``weak-balanced`` (with ``--balanced``): ``n³·g`` elements again, the shortest axis
  multiplied by each prime factor of ``g`` in turn (``(2n, 2n, n)`` on 4 ranks), so that
  no axis grows past ``2n``;
- ``strong``: ``(N, N, N)`` for each ``N`` of ``--strong``;
- ``largest``: ``(M, M, M)`` for each ``M`` of ``--largest``, on all the ranks only.

Each case is the slab-decomposed forward transform of complex128 data (random, seeded
per rank): the time of :meth:`~ozfft.distributed.Plan.forward` (``ozfft``); of the same
slab transform with the engine's library as the local transforms (``native``: cuFFT
through ``cupy.fft``, or pocketfft through ``numpy.fft``; the two whole axes, the same
:func:`~ozfft.distributed.exchange.redistribute`, then the first axis); and of the
``redistribute`` alone (``exchange``); and, except for ``largest``, of the local transforms
alone (``ozfft_local``, ``native_local``: the two whole axes of the input block, then
the first axis of a block of the output layout; no exchange, no checks, no fixed point
carried across); with ``--chunks k ...``, of ``Plan(..., chunks=k).forward`` too
(``ozfft`` is the default plan: the exchange overlapped in 8 chunks with cupy arrays).
Wall time between barriers of the group, the
median of ``--reps`` after one warm-up call. On one rank the single-device
``ozfft.fftn`` and native ``fftn`` of the whole array are timed too, and the plan's
result is compared with ``ozfft.fftn``'s bit for bit. ``relative_difference`` is
``‖ozfft − native‖₂ / ‖native‖₂`` over every 17th element along the last axis of each
rank's output block;
``exchange_bytes`` the most bytes one rank sends the others (the model: every element
but the rank's own piece, 16 bytes each, values or fixed-point parts alike; the line
exponents of a carried run add 8 bytes per line). With cupy, ``pool_gib`` is the most
any rank's memory pool held after the measurement (it keeps freed blocks: about the
peak). A measurement that fails (out of memory) on any rank is recorded as skipped on
every rank, with the reason; a ``largest`` case is skipped without trying when its
memory, predicted from the ``strong`` case of the same ranks, exceeds the device's.

Rank 0 prints the records and rewrites ``distributed.json`` and ``distributed.md`` in
``--out`` after every case (so a cut-off run keeps what it measured).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DeviceUnavailableError

__all__ = ["add_arguments", "balanced_shape", "efficiencies", "exchange_bytes", "main", "markdown"]

#: the elements of each rank's output block that relative_difference compares
_SAMPLE = 17
_PROG = "ozfft bench distributed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ozfft bench distributed``."""
    parser.add_argument(
        "--engine",
        choices=("cuda", "numpy"),
        default="cuda",
        help="cupy arrays through NCCL, one GPU per rank; or numpy arrays through MPI",
    )
    parser.add_argument(
        "--weak", type=int, default=512, help="weak scaling: n³ elements per rank (0: none)"
    )
    parser.add_argument(
        "--balanced",
        action="store_true",
        help="also weak scaling with the axes multiplied in turn: (2n, n, n), (2n, 2n, n), ...",
    )
    parser.add_argument(
        "--strong", type=int, nargs="*", default=[1024], help="strong scaling: N³ arrays"
    )
    parser.add_argument(
        "--largest", type=int, nargs="*", default=[], help="M³ arrays on all the ranks only"
    )
    parser.add_argument(
        "--ranks",
        type=int,
        nargs="*",
        default=None,
        help="group sizes (default: 1, 2, 4, ... and the world size)",
    )
    parser.add_argument("--reps", type=int, default=5, help="timed calls per measurement")
    parser.add_argument(
        "--chunks",
        type=int,
        nargs="*",
        default=[],
        help="also time Plan(..., chunks=k).forward for each k (ozfft_chunks<k>_ms; 1: the "
        "exchange not overlapped)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for distributed.json and distributed.md "
        "(default bench/results/<device>-x<ranks>)",
    )


class _Backend:
    """The engine's array module, its FFT library, a transport factory and a sync. The
    CUDA engine takes GPU ``rank mod count`` (before anything touches a GPU) or raises
    :class:`~ozfft.errors.DeviceUnavailableError` saying why it cannot run."""

    def __init__(self, engine: str, rank: int) -> None:
        self.engine = engine
        if engine == "cuda":
            from ..engines.select import cuda_engine

            try:
                import cupy

                count = cupy.cuda.runtime.getDeviceCount()
            except Exception:  # no cupy, no driver: cuda_engine() says which
                count = 0
            if count:
                cupy.cuda.Device(rank % count).use()
            cuda_engine()
            self.xp = cupy
            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            name = props["name"]
            self.device = name.decode() if isinstance(name, bytes) else str(name)
            self.memory = int(props["totalGlobalMem"])
            self.library = "cuFFT (cupy.fft)"
        else:
            self.xp = np
            self.device = f"cpu-{os.cpu_count() or 1}core"
            self.memory = None
            self.library = "pocketfft (numpy.fft)"

    def transport(self, comm):
        from .exchange import MpiTransport, NcclTransport

        return NcclTransport(comm) if self.engine == "cuda" else MpiTransport(comm)

    def sync(self) -> None:
        if self.engine == "cuda":
            self.xp.cuda.Device().synchronize()

    def release(self) -> None:
        """Give the memory pool's free blocks and the FFT plans' work areas back."""
        if self.engine == "cuda":
            self.xp.fft.config.get_plan_cache().clear()
            self.xp.get_default_memory_pool().free_all_blocks()

    def pool_bytes(self) -> int:
        return int(self.xp.get_default_memory_pool().total_bytes()) if self.engine == "cuda" else 0


def exchange_bytes(shape: tuple[int, ...], ranks: int, itemsize: int = 16) -> int:
    """The most bytes one rank sends the others when a slab split along axis 0 moves to
    a split along axis 1 (every element of its block but its own piece)."""
    from .layout import block_range

    rest = int(np.prod(shape[2:], dtype=np.int64))
    most = 0
    for r in range(ranks):
        a0, b0 = block_range(shape[0], ranks, r)
        a1, b1 = block_range(shape[1], ranks, r)
        most = max(most, (b0 - a0) * (shape[1] - (b1 - a1)) * rest * itemsize)
    return most


def _measure_case(
    group, backend: _Backend, case: str, shape, reps: int, seed: int, predict, chunks=()
):
    """One record: every rank of ``group`` calls it; the values rank 0 returns."""
    import ozfft

    from .exchange import redistribute
    from .plan import Plan

    xp, g, rank = backend.xp, group.Get_size(), group.Get_rank()
    record: dict[str, Any] = {"case": case, "ranks": g, "shape": list(shape)}
    record["exchange_bytes"] = exchange_bytes(tuple(shape), g)
    skipped: dict[str, str] = {}
    peaks: dict[str, float] = {}
    plan = Plan(shape, group)
    transport = backend.transport(group)
    rng = xp.random.RandomState(seed * 65536 + rank)  # on the device for cupy
    x = xp.empty(plan.local_input_shape, np.complex128)
    x.real[...] = rng.standard_normal(x.shape)
    x.imag[...] = rng.standard_normal(x.shape)

    def native():  # the first passes' result is gone before the last pass
        z = redistribute(transport, xp.fft.fftn(x, axes=(1, 2)), tuple(shape), 0, 1)
        return xp.fft.fft(z, axis=0)

    # the local transforms alone, on blocks of the input and the output layout (the
    # latter made by the first, untimed call: no memory of the other measurements)
    held: list = []

    def output_block():
        if not held:
            held.append(redistribute(transport, x, tuple(shape), 0, 1))
        return held[0]

    def ozfft_local():
        ozfft.fftn(x, axes=(1, 2))
        return ozfft.fft(output_block(), axis=0)

    def native_local():
        xp.fft.fftn(x, axes=(1, 2))
        return xp.fft.fft(output_block(), axis=0)

    def single_ozfft():
        return ozfft.fftn(x)

    def single_native():
        return xp.fft.fftn(x)

    calls: dict[str, Callable[[], Any]] = {
        "ozfft": lambda: plan.forward(x),
        "native": native,
        "exchange": lambda: redistribute(transport, x, tuple(shape), 0, 1),
    }
    for k in chunks:
        variant = Plan(shape, group, chunks=k)
        calls[f"ozfft_chunks{k}"] = lambda p=variant: p.forward(x)
    if g == 1:
        calls.update(fftn=single_ozfft, native_fftn=single_native)
    if case != "largest":
        calls.update(ozfft_local=ozfft_local, native_local=native_local)
    samples: dict[str, Any] = {}
    for name, call in calls.items():
        too_big = predict(name) if predict is not None else None
        if group.allreduce(too_big is not None):
            skipped[name] = next(w for w in group.allgather(too_big) if w is not None)
            continue
        backend.release()
        try:
            y = call()
            backend.sync()
            problem = None
        except Exception as exc:  # out of device memory, in practice: agreed below
            y, problem = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        problems = [p for p in group.allgather(problem) if p is not None]
        if problems:
            del y
            skipped[name] = problems[0]
            continue
        if name in ("ozfft", "native"):  # the same layout: the plan's output_slices
            samples[name] = xp.ascontiguousarray(y[..., ::_SAMPLE])
        if name == "fftn":  # one rank: the plan's block is the whole array
            record["bitwise_fftn"] = bool((y == plan.forward(x)).all())
        del y
        times = []
        for _ in range(reps):
            group.Barrier()
            t = time.perf_counter()
            call()
            backend.sync()
            group.Barrier()
            times.append((time.perf_counter() - t) * 1e3)
        record[f"{name}_ms"] = float(np.median(times))
        peaks[name] = max(group.allgather(backend.pool_bytes())) / 2**30
    if "ozfft" in samples and "native" in samples:
        d, r = samples["ozfft"] - samples["native"], samples["native"]
        num = group.allreduce(float(xp.vdot(d, d).real))
        den = group.allreduce(float(xp.vdot(r, r).real))
        record["relative_difference"] = float(np.sqrt(num / den)) if den else 0.0
    if backend.engine == "cuda":
        record["pool_gib"] = peaks
    if skipped:
        record["skipped"] = skipped
    return record


def efficiencies(records: list[dict]) -> None:
    """Add each record's scaling efficiency (in place): weak, ``t(1 rank) / t(g ranks)``;
    strong and largest, ``t(1 rank) / (g · t(g ranks))``; for ozfft and native each
    against its own one-rank run of the same plan; and, for weak scaling, against the
    single-device transform without any exchange (``*_vs_fftn``)."""
    ones = {(r["case"], tuple(r["shape"])): r for r in records if r["ranks"] == 1}
    for r in records:
        g = r["ranks"]
        weak = r["case"].startswith("weak")
        if weak:
            n = min(r["shape"])
            base = ones.get(("weak", (n, n, n)))
            scale = 1
        else:
            base = ones.get(("strong", tuple(r["shape"])))
            scale = g
        if base is None:
            continue
        eff = {}
        for key in ("ozfft", "native"):
            if f"{key}_ms" in base and f"{key}_ms" in r:
                eff[key] = base[f"{key}_ms"] / (scale * r[f"{key}_ms"])
        if weak:
            if "fftn_ms" in base and "ozfft_ms" in r:
                eff["ozfft_vs_fftn"] = base["fftn_ms"] / r["ozfft_ms"]
            if "native_fftn_ms" in base and "native_ms" in r:
                eff["native_vs_fftn"] = base["native_fftn_ms"] / r["native_ms"]
        r["efficiency"] = eff


def _f(value, spec: str = ".1f") -> str:
    return "—" if value is None else format(value, spec)


def markdown(result: dict) -> list[str]:
    """The lines of distributed.md."""
    lines = [
        f"# ozfft.distributed on {result['world']} × {result['device']} "
        f"({result['engine']} engine)",
        "",
        result["method"],
        "",
        "| case | ranks | global shape | ozfft ms | native ms | exchange ms | ozfft local ms "
        "| native local ms | GiB sent per rank | ozfft eff. | native eff. | ozfft eff. vs fftn "
        "| native eff. vs fftn | rel. diff |",
        "|" + "---|" * 14,
    ]
    for r in result["records"]:
        eff = r.get("efficiency", {})
        pct = {k: _f(100 * v, ".0f") + " %" for k, v in eff.items()}
        lines.append(
            "| "
            + " | ".join(
                [
                    r["case"],
                    str(r["ranks"]),
                    "×".join(map(str, r["shape"])),
                    _f(r.get("ozfft_ms")),
                    _f(r.get("native_ms")),
                    _f(r.get("exchange_ms")),
                    _f(r.get("ozfft_local_ms")),
                    _f(r.get("native_local_ms")),
                    _f(r["exchange_bytes"] / 2**30, ".2f"),
                    pct.get("ozfft", "—"),
                    pct.get("native", "—"),
                    pct.get("ozfft_vs_fftn", "—"),
                    pct.get("native_vs_fftn", "—"),
                    _f(r.get("relative_difference"), ".1e"),
                ]
            )
            + " |"
        )
    for r in result["records"]:
        variants = sorted(
            (int(k[len("ozfft_chunks") : -3]), v)
            for k, v in r.items()
            if k.startswith("ozfft_chunks") and k.endswith("_ms")
        )
        if variants:
            shape = "×".join(map(str, r["shape"]))
            times = ", ".join(f"{k} chunks {_f(v)} ms" for k, v in variants)
            lines.append(f"\n{r['case']} {r['ranks']} ranks {shape}: Plan(chunks=k): {times}.")
    single = [r for r in result["records"] if "fftn_ms" in r or "native_fftn_ms" in r]
    for r in single:
        shape = "×".join(map(str, r["shape"]))
        bits = {True: "bitwise equal", False: "NOT bitwise equal"}.get(r.get("bitwise_fftn"))
        lines.append(
            f"\nOne device, {shape}: ozfft.fftn {_f(r.get('fftn_ms'))} ms, native fftn "
            f"{_f(r.get('native_fftn_ms'))} ms; the plan's result is {bits or 'not compared'} "
            "to ozfft.fftn's."
        )
    for r in result["records"]:
        for name, why in r.get("skipped", {}).items():
            lines.append(f"\nSkipped: {r['case']} {r['ranks']} ranks {name}: {why}")
    return lines


def balanced_shape(n: int, g: int) -> tuple[int, int, int]:
    """``n³·g`` elements in 3 axes: the shortest axis (the first of equals) multiplied by
    each prime factor of ``g``, the largest first."""
    dims, rest, factors, f = [n, n, n], g, [], 2
    while rest > 1:
        while rest % f == 0:
            factors.append(f)
            rest //= f
        f += 1
    for f in sorted(factors, reverse=True):
        dims[dims.index(min(dims))] *= f
    return (dims[0], dims[1], dims[2])


def _groups(world: int, ranks: list[int] | None) -> list[int]:
    if ranks:
        bad = [g for g in ranks if not 1 <= g <= world]
        if bad:
            raise ValueError(f"--ranks must lie in 1..{world} (the world size), got {bad}")
        return sorted(set(ranks))
    out, g = [], 1
    while g < world:
        out.append(g)
        g *= 2
    return [*out, world]


def main(
    args: argparse.Namespace | None = None,
    default_out: Callable[[str, int], Path] | None = None,
) -> int:
    """Run the campaign on ``MPI.COMM_WORLD`` (every rank calls it); ``default_out(device,
    world size)`` is the folder when ``--out`` is not given (None: print only)."""
    if args is None:
        parser = argparse.ArgumentParser(
            prog="python -m ozfft.distributed.bench", description=__doc__.splitlines()[0]
        )
        add_arguments(parser)
        args = parser.parse_args()
    sizes = [n for n in [args.weak, *args.strong, *args.largest] if n]
    if min(sizes, default=1) < 1 or args.reps < 1:
        raise ValueError("sizes and --reps must be >= 1")
    try:
        from mpi4py import MPI
    except ImportError:
        print(f"{_PROG}: needs mpi4py and an MPI (pip install mpi4py mpich)", file=sys.stderr)
        return 2
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    groups = _groups(size, args.ranks)
    try:
        backend = _Backend(args.engine, rank)
    except DeviceUnavailableError as exc:
        if rank == 0:
            print(f"{_PROG}: {exc}", file=sys.stderr)
        return 2
    out = args.out
    if out is None and default_out is not None:
        out = default_out(backend.device, size)
    result: dict[str, Any] = {
        "device": backend.device,
        "world": size,
        "engine": args.engine,
        "method": (
            f"Slab-decomposed forward transforms of complex128 arrays (ozfft.distributed.Plan; "
            f"{'NCCL' if args.engine == 'cuda' else 'MPI'} exchange) against the same "
            f"decomposition with {backend.library} as the local transforms and the same "
            f"redistribute(); exchange: redistribute() alone. Wall time between barriers, "
            f"median of {args.reps} after a warm-up (ozfft bench distributed). Efficiency: "
            "weak t(1)/t(g), strong t(1)/(g·t(g)), each against its own 1-rank run; local: "
            "the local transforms alone (no exchange, checks or carried fixed point); "
            "'vs fftn': against the single-device fftn without any exchange. GiB sent per "
            "rank: the model's bytes one rank sends the others in the one exchange. "
            f"rel. diff: ‖ozfft − native‖₂/‖native‖₂ over every {_SAMPLE}th element of the "
            "last axis."
        ),
        "records": [],
    }
    cases = []
    for g in groups:
        if args.weak:
            cases.append(("weak", g, (args.weak * g, args.weak, args.weak)))
            shape = balanced_shape(args.weak, g)
            if args.balanced and shape != (args.weak * g, args.weak, args.weak):
                cases.append(("weak-balanced", g, shape))
        cases += [("strong", g, (n, n, n)) for n in args.strong if n >= g]
    cases += [("largest", size, (m, m, m)) for m in args.largest if m >= size]
    for case, g, shape in cases:
        group = world.Split(0 if rank < g else MPI.UNDEFINED, rank)
        if rank < g:
            predict = None
            if case == "largest":
                predict = _predictor(result["records"], backend, g, shape)
            record = _measure_case(
                group, backend, case, shape, args.reps, args.seed, predict, args.chunks
            )
            backend.release()  # the case's arrays are gone with its frame
            group.Free()
            if rank == 0:
                result["records"].append(record)
                efficiencies(result["records"])
                print(json.dumps(record), flush=True)
                if out is not None:
                    out.mkdir(parents=True, exist_ok=True)
                    (out / "distributed.json").write_text(json.dumps(result, indent=1))
                    (out / "distributed.md").write_text("\n".join(markdown(result)) + "\n")
        world.Barrier()
        result["records"] = world.bcast(result["records"] if rank == 0 else None, root=0)
    if rank == 0:
        print("\n".join(markdown(result)))
        if out is not None:
            print(f"wrote {out / 'distributed.json'} and {out / 'distributed.md'}")
    return 0


def _predictor(records: list[dict], backend: _Backend, g: int, shape) -> Callable | None:
    """For a ``largest`` case: a function of a measurement's name that says why it
    would not fit (its pool peak in the largest ``strong`` case of ``g`` ranks, scaled
    by the element count, above 97 % of the device's memory), or None."""
    if backend.memory is None:
        return None
    ref = max(
        (r for r in records if r["case"] == "strong" and r["ranks"] == g and "pool_gib" in r),
        key=lambda r: int(np.prod(r["shape"])),
        default=None,
    )
    if ref is None:
        return None
    scale = int(np.prod(shape)) / int(np.prod(ref["shape"]))
    limit = 0.97 * backend.memory / 2**30

    def predict(name: str) -> str | None:
        peak = ref["pool_gib"].get(name)
        if peak is None or peak * scale <= limit:
            return None
        return f"predicted {peak * scale:.0f} GiB per rank (from {ref['shape']}) > {limit:.0f}"

    return predict


if __name__ == "__main__":  # pragma: no cover - run under mpiexec
    raise SystemExit(main())

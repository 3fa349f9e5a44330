"""The import graph of ``ozfft``: no cycles, and every layer imports only what it may.

Every module under ``ozfft/`` is parsed with :mod:`ast` (nothing is imported). Module-level
and function-level imports both count, ``if __name__ == "__main__":`` blocks included;
imports under ``if TYPE_CHECKING:`` do not (they never run). Relative imports are
resolved to absolute ``ozfft.*`` names, and ``from pkg import name`` is an edge to the
submodule ``pkg.name`` when there is one, else to ``pkg``.

:data:`LAYERS` is the rule table; docs/architecture.md ("Layers and import rules")
mirrors it and :func:`test_architecture_doc_mirrors_the_rule_table` keeps the two equal.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "ozfft"
ARCHITECTURE_DOC = REPO / "docs" / "architecture.md"

# -- the rules -------------------------------------------------------------------------
#
# A pattern ``"a.b.*"`` names the package ``a.b`` and everything below it; ``"a.b"`` names
# that one module. A module belongs to the layer of its most specific (longest) pattern.
# A module may import modules of its own layer and of the layers in ``may_import``.

LAYERS: dict[str, dict[str, tuple[str, ...]]] = {
    "leaves": {
        "modules": ("ozfft.errors", "ozfft.config", "ozfft._logging", "ozfft._version",
                    "ozfft._bounded"),
        "may_import": (),
    },
    "ozaki": {  # pure integer rules: moduli, scaling, bounds, residues, fixed point
        "modules": ("ozfft.ozaki.*",),
        "may_import": ("leaves",),
    },
    "profiling": {
        "modules": ("ozfft.profiling",),
        "may_import": ("leaves",),
    },
    "engine-base": {  # the Engine interface and its data types
        "modules": ("ozfft.engines.base",),
        "may_import": ("leaves", "ozaki", "profiling"),
    },
    "numpy-engine": {
        "modules": ("ozfft.engines.numpy.*",),
        "may_import": ("leaves", "ozaki", "profiling", "engine-base"),
    },
    "cuda-engine": {
        "modules": ("ozfft.engines.cuda.*",),
        "may_import": ("leaves", "ozaki", "profiling", "engine-base"),
    },
    "engine-select": {  # which engine owns an array; constructs the engines
        "modules": ("ozfft.engines", "ozfft.engines.select"),
        "may_import": (
            "leaves", "ozaki", "profiling", "engine-base", "numpy-engine", "cuda-engine",
        ),
    },
    "scheme": {  # drivers: call an engine's stages in order
        "modules": ("ozfft.scheme.*",),
        "may_import": ("leaves", "ozaki", "engine-base"),
    },
    "options": {  # validated once at the API edge
        "modules": ("ozfft.options",),
        "may_import": ("leaves", "ozaki"),
    },
    "fourier": {  # plans, plan/executor caches, host executors, the numpy.fft-style API
        "modules": ("ozfft.fourier.*",),
        "may_import": ("leaves", "ozaki", "options", "engine-base", "engine-select", "scheme"),
    },
    "api": {  # the public entry points
        "modules": ("ozfft", "ozfft.linalg", "ozfft.scipy_backend"),
        "may_import": (
            "leaves", "ozaki", "profiling", "options",
            "engine-base", "engine-select", "scheme", "fourier",
        ),
    },
    "reference": {  # independent references: share no code with what they check
        "modules": ("ozfft.reference",),  # (ozfft/reference.py's own contract)
        "may_import": ("leaves",),
    },
    "tools": {  # ozfft bench, ozfft check
        "modules": ("ozfft.bench.*", "ozfft.check"),
        "may_import": (
            "leaves", "ozaki", "profiling", "options",
            "engine-base", "engine-select", "scheme", "fourier", "api", "reference",
        ),
    },
    "distributed": {  # distributed FFTs: imported by the CLI alone
        "modules": ("ozfft.distributed.*",),
        "may_import": (
            "leaves", "ozaki", "profiling", "options",
            "engine-base", "engine-select", "scheme", "fourier", "api",
        ),
    },
    "cli": {  # the ozfft command: on top of everything, imported by nothing
        "modules": ("ozfft.cli",),
        "may_import": (
            "leaves", "ozaki", "profiling", "options", "engine-base", "engine-select",
            "scheme", "fourier", "api", "reference", "tools", "distributed",
        ),
    },
}  # fmt: skip

#: Private packages: only the listed importers (patterns as above) may import them,
#: whatever their layer allows.
PRIVATE: dict[str, tuple[str, ...]] = {
    # the CUDA engine is constructed in one place
    "ozfft.engines.cuda.*": ("ozfft.engines.cuda.*", "ozfft.engines.select"),
    # the NumPy engine's stage modules: reached through NumpyEngine only
    "ozfft.engines.numpy.*": ("ozfft.engines.numpy.*", "ozfft.engines", "ozfft.engines.select"),
    # ozfft.distributed: itself and the CLI (`ozfft bench distributed`)
    "ozfft.distributed.*": ("ozfft.distributed.*", "ozfft.cli"),
}

#: Sanctioned exceptions, permanent until the named replacement exists:
#: (importing module, enclosing function) -> target patterns it may import beyond its rules.
SANCTIONED: dict[tuple[str, str], tuple[str, ...]] = {
    # (none: the benchmarks reach the CUDA engine's kernels through its public accessors
    # `kernel`, `kernel_cubin`, `gemm_kernel_macros`)
}

#: Known violations of the current tree: (importer, imported) edges the checks skip.
#: Each is TO BE REMOVED; test_known_violations_still_exist fails once one is gone so
#: that its entry is deleted here too.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
    # (none: the bench <-> cli cycles are gone; `python -m ozfft.bench.<campaign>` runs
    # the campaign's own main(), whose GPU check lives in ozfft/bench/gpu.py)
}


Rules = Mapping[str, Mapping[str, tuple[str, ...]]]

# -- the graph ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Edge:
    """``src`` imports ``dst`` at ``path:line``, inside function ``scope`` ("" = module)."""

    src: str
    dst: str
    path: str
    line: int
    scope: str = ""

    def __str__(self) -> str:
        where = f" in {self.scope}()" if self.scope else ""
        return f"{self.path}:{self.line}{where}: {self.src} -> {self.dst}"


def module_names(root: Path, package: str = "ozfft") -> dict[str, Path]:
    """``{dotted module name: file}`` for every ``.py`` file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((package, *parts))] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Import(NamedTuple):
    module: str  # as written ("" for `from . import x`)
    names: tuple[str, ...]  # of `from module import names`; () for `import module`
    level: int  # leading dots
    line: int
    scope: str  # enclosing function/class, dotted; "" at module level


class _Imports(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[_Import] = []
        self._scope: list[str] = []

    def _def(self, node: ast.AST) -> None:
        self._scope.append(node.name)  # type: ignore[attr-defined]
        self.generic_visit(node)
        self._scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):  # never runs: not an import edge
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.found.append(_Import(alias.name, (), 0, node.lineno, ".".join(self._scope)))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        names = tuple(alias.name for alias in node.names)
        scope = ".".join(self._scope)
        self.found.append(_Import(node.module or "", names, node.level, node.lineno, scope))


def import_graph(root: Path = PACKAGE, package: str = "ozfft") -> tuple[list[Edge], list[Edge]]:
    """Edges between the modules under ``root``, and the imports of ``package.*`` names
    that match no module there (returned as edges with the unresolved name as ``dst``)."""
    modules = module_names(root, package)
    edges: list[Edge] = []
    unresolved: list[Edge] = []
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        here = mod if is_pkg else mod.rpartition(".")[0]
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(), filename=str(path)))
        rel = str(path.relative_to(root.parent))
        for name, names, level, line, scope in visitor.found:
            if level:
                base = here.split(".")
                base = base[: len(base) - (level - 1)]
                name = ".".join([*base, name] if name else base)
            if name != package and not name.startswith(package + "."):
                continue
            if names:  # from name import a, b: the submodules name.a, name.b or name itself
                targets = [f"{name}.{n}" if f"{name}.{n}" in modules else name for n in names]
            else:
                targets = [name]
            for dst in dict.fromkeys(targets):
                edge = Edge(mod, dst, rel, line, scope)
                if dst not in modules:
                    unresolved.append(edge)
                elif dst != mod:
                    edges.append(edge)
    return edges, unresolved


# -- the checks ------------------------------------------------------------------------


def matches(module: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        pkg = pattern[:-2]
        return module == pkg or module.startswith(pkg + ".")
    return module == pattern


def _specificity(pattern: str) -> tuple[int, int]:
    # an exact name beats a package pattern of the same name
    return (len(pattern.removesuffix(".*").split(".")), 0 if pattern.endswith(".*") else 1)


def layer_of(module: str, layers: Rules = LAYERS) -> str | None:
    best = None
    for layer, rule in layers.items():
        for pattern in rule["modules"]:
            if matches(module, pattern) and (best is None or _specificity(pattern) > best[0]):
                best = (_specificity(pattern), layer)
    return best[1] if best else None


def _sanctioned(edge: Edge, sanctioned: Mapping[tuple[str, str], tuple[str, ...]]) -> bool:
    for (src, scope), patterns in sanctioned.items():
        if edge.src == src and edge.scope == scope and any(matches(edge.dst, p) for p in patterns):
            return True
    return False


def layer_violations(
    edges: Iterable[Edge],
    layers: Rules = LAYERS,
    private: Mapping[str, tuple[str, ...]] = PRIVATE,
    sanctioned: Mapping[tuple[str, str], tuple[str, ...]] = SANCTIONED,
    known: Mapping[tuple[str, str], str] = KNOWN_VIOLATIONS,
) -> list[str]:
    """One message per edge that breaks the layer table or a private package's rule."""
    out = []
    for edge in edges:
        if (edge.src, edge.dst) in known or _sanctioned(edge, sanctioned):
            continue
        src_layer, dst_layer = layer_of(edge.src, layers), layer_of(edge.dst, layers)
        if src_layer is None or dst_layer is None:
            continue  # reported by test_every_module_has_a_layer
        allowed = (src_layer, *layers[src_layer]["may_import"])
        if dst_layer not in allowed:
            out.append(f"{edge}  (layer {src_layer!r} may not import layer {dst_layer!r})")
            continue
        for target, importers in private.items():
            if matches(edge.dst, target) and not any(matches(edge.src, p) for p in importers):
                out.append(f"{edge}  ({target} is private to {', '.join(importers)})")
    return out


def find_cycles(
    edges: Iterable[Edge], known: Mapping[tuple[str, str], str] = KNOWN_VIOLATIONS
) -> list[list[Edge]]:
    """One cycle (as its edges) per strongly connected component of the module graph."""
    first: dict[tuple[str, str], Edge] = {}
    graph: dict[str, list[str]] = {}
    for edge in edges:
        if (edge.src, edge.dst) in known or (edge.src, edge.dst) in first:
            continue
        first[edge.src, edge.dst] = edge
        graph.setdefault(edge.src, []).append(edge.dst)
        graph.setdefault(edge.dst, [])

    # Tarjan's strongly connected components (iterative)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    components.append(sorted(comp))

    cycles = []
    for comp in components:  # shortest cycle through the component's first module
        members, origin = set(comp), comp[0]
        parent: dict[str, str] = {}
        frontier, closing = [origin], None
        while frontier and closing is None:
            nxt = []
            for node in frontier:
                for child in graph[node]:
                    if child == origin:
                        closing = node
                        break
                    if child in members and child not in parent:
                        parent[child] = node
                        nxt.append(child)
                if closing is not None:
                    break
            frontier = nxt
        path = [closing]
        while path[-1] != origin:
            path.append(parent[path[-1]])
        path.reverse()
        path.append(origin)
        cycles.append([first[a, b] for a, b in itertools.pairwise(path)])
    return cycles


def render_rule_table(layers: Rules = LAYERS) -> list[str]:
    """The markdown rows of docs/architecture.md's rule table."""
    rows = []
    for layer, rule in layers.items():
        modules = ", ".join(f"`{m}`" for m in rule["modules"])
        may = ", ".join(f"`{m}`" for m in rule["may_import"]) or "—"
        rows.append(f"| `{layer}` | {modules} | {may} |")
    return rows


# -- tests of the tree -------------------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> tuple[list[Edge], list[Edge]]:
    return import_graph()


def test_every_module_has_a_layer():
    missing = [m for m in module_names(PACKAGE) if layer_of(m) is None]
    assert not missing, f"modules in no layer of LAYERS (add them to the table): {missing}"


def test_every_ozfft_import_names_a_module(graph):
    _, unresolved = graph
    assert not unresolved, "imports of no module in ozfft/:\n" + "\n".join(map(str, unresolved))


def test_no_import_cycles(graph):
    edges, _ = graph
    cycles = find_cycles(edges)
    report = "\n\n".join(
        " -> ".join([c[0].src, *(e.dst for e in c)]) + "\n" + "\n".join(f"  {e}" for e in c)
        for c in cycles
    )
    assert not cycles, f"import cycles:\n{report}"


def test_layer_rules(graph):
    edges, _ = graph
    bad = layer_violations(edges)
    assert not bad, "layer violations:\n" + "\n".join(bad)


def test_known_violations_still_exist(graph):
    edges, _ = graph
    present = {(e.src, e.dst) for e in edges}
    gone = [pair for pair in KNOWN_VIOLATIONS if pair not in present]
    assert not gone, f"fixed: delete these from KNOWN_VIOLATIONS: {gone}"


def test_sanctioned_exceptions_are_used(graph):
    edges, _ = graph
    unused = [
        key
        for key, targets in SANCTIONED.items()
        if not any(_sanctioned(e, {key: targets}) for e in edges)
    ]
    assert not unused, f"sanctioned exceptions no import uses (delete them): {unused}"


def test_cuda_engine_is_reached_only_through_select(graph):
    edges, _ = graph
    outside = sorted(
        {e.src for e in edges if matches(e.dst, "ozfft.engines.cuda.*")}
        - {m for m in module_names(PACKAGE) if matches(m, "ozfft.engines.cuda.*")}
    )
    assert outside == ["ozfft.engines.select"]


def test_rule_table_keeps_the_stated_prohibitions():
    engines = ("engine-base", "numpy-engine", "cuda-engine", "engine-select")
    above_engines = {
        "scheme", "fourier", "api", "reference", "tools", "distributed", "cli", "options",
    }  # fmt: skip
    for layer in engines:
        assert not above_engines & set(LAYERS[layer]["may_import"]), layer
    assert set(LAYERS["ozaki"]["may_import"]) <= {"leaves"}
    assert set(LAYERS["reference"]["may_import"]) <= {"leaves"}  # no engines, no bench
    assert not {"numpy-engine", "cuda-engine"} & set(LAYERS["fourier"]["may_import"])
    # the CLI alone imports distributed, and nothing imports the CLI
    assert [name for name, rule in LAYERS.items() if "distributed" in rule["may_import"]] == ["cli"]
    assert all("cli" not in rule["may_import"] for rule in LAYERS.values())
    assert PRIVATE["ozfft.distributed.*"] == ("ozfft.distributed.*", "ozfft.cli")
    assert all(layer in LAYERS for rule in LAYERS.values() for layer in rule["may_import"])


def test_architecture_doc_mirrors_the_rule_table():
    doc = ARCHITECTURE_DOC.read_text()
    missing = [row for row in render_rule_table() if row not in doc]
    assert not missing, "docs/architecture.md lacks these rows of LAYERS:\n" + "\n".join(missing)
    for target in PRIVATE:
        assert f"`{target}`" in doc, target
    for _src, scope in SANCTIONED:
        assert f"`{scope}`" in doc, scope


# -- tests of the checker itself --------------------------------------------------------


def _edges(*pairs: tuple[str, str], scope: str = "") -> list[Edge]:
    return [Edge(a, b, "synthetic.py", i + 1, scope) for i, (a, b) in enumerate(pairs)]


def test_checker_reports_a_synthetic_cycle():
    edges = _edges(
        ("ozfft.fourier.a", "ozfft.fourier.b"),
        ("ozfft.fourier.b", "ozfft.fourier.c"),
        ("ozfft.fourier.c", "ozfft.fourier.a"),
        ("ozfft.fourier.c", "ozfft.ozaki.moduli"),
        ("ozfft.x", "ozfft.y"),
        ("ozfft.y", "ozfft.x"),
    )
    cycles = find_cycles(edges, known={})
    found = sorted(sorted(e.src for e in c) for c in cycles)
    assert found == [
        ["ozfft.fourier.a", "ozfft.fourier.b", "ozfft.fourier.c"],
        ["ozfft.x", "ozfft.y"],
    ]
    for cycle in cycles:  # each is a closed path
        assert cycle[-1].dst == cycle[0].src
        assert all(a.dst == b.src for a, b in itertools.pairwise(cycle))
    cut = {("ozfft.y", "ozfft.x"): "", ("ozfft.fourier.c", "ozfft.fourier.a"): ""}
    assert find_cycles(edges, known=cut) == []
    assert find_cycles(_edges(("ozfft.a", "ozfft.b"), ("ozfft.b", "ozfft.c")), known={}) == []


def test_checker_reports_synthetic_layer_violations():
    bad_edges = _edges(
        ("ozfft.ozaki.moduli", "ozfft.fourier.plan"),  # rules importing the FFT
        ("ozfft.engines.cuda.engine", "ozfft.fourier.plan"),  # engine importing fourier
        ("ozfft.engines.numpy.engine", "ozfft.scheme.gemm"),  # engine importing a driver
        ("ozfft.fourier.api", "ozfft.engines.cuda.engine"),  # fourier into CUDA internals
        ("ozfft.fourier.api", "ozfft.engines.numpy.phase_a"),  # fourier into NumPy internals
        ("ozfft.fourier.api", "ozfft.bench.gemm"),  # core importing a tool
        ("ozfft.reference", "ozfft.bench.gemm"),  # reference importing bench
        ("ozfft.reference", "ozfft.linalg"),  # a reference sharing the code it checks
        ("ozfft.linalg", "ozfft.distributed.gemm"),  # anything importing distributed
        ("ozfft.bench.fft", "ozfft.distributed.bench"),  # ... a tool too
        ("ozfft.bench.fft", "ozfft.cli"),  # anything importing the CLI
        ("ozfft.engines", "ozfft.engines.cuda.engine"),  # cuda is select.py's only
        ("ozfft.bench.gemm", "ozfft.engines.cuda.compiler"),  # not the sanctioned helper
        ("ozfft.scheme.gemm", "ozfft.engines.select"),  # drivers see engines.base only
        ("ozfft.options", "ozfft.engines.base"),
    )
    bad = layer_violations(bad_edges, known={})
    assert len(bad) == len(bad_edges), "\n".join(bad)
    for edge, message in zip(bad_edges, bad, strict=True):
        assert f"{edge.src} -> {edge.dst}" in message

    good_edges = _edges(
        ("ozfft.engines.select", "ozfft.engines.cuda.engine"),
        ("ozfft.engines.cuda.engine", "ozfft.profiling"),
        ("ozfft.fourier.cache", "ozfft.engines.base"),
        ("ozfft.check", "ozfft.reference"),
        ("ozfft.distributed.gemm", "ozfft.linalg"),
        ("ozfft.cli", "ozfft.distributed.bench"),
        ("ozfft.cli", "ozfft.bench.results"),
        ("ozfft._logging", "ozfft.config"),
    )
    assert layer_violations(good_edges, known={}) == []
    # a sanctioned exception is scoped to its function (the mechanism, on a synthetic entry)
    helper = {("ozfft.bench.ceilings", "_probe"): ("ozfft.engines.cuda.*",)}
    inside = _edges(("ozfft.bench.ceilings", "ozfft.engines.cuda.compiler"), scope="_probe")
    assert layer_violations(inside, sanctioned=helper, known={}) == []
    outside_helper = _edges(("ozfft.bench.ceilings", "ozfft.engines.cuda.compiler"))
    assert layer_violations(outside_helper, sanctioned=helper, known={})
    assert layer_violations(inside, known={})  # without the entry it is a violation
    # a known violation is skipped
    known = {("ozfft.ozaki.moduli", "ozfft.fourier.plan"): "to be removed"}
    assert layer_violations(bad_edges[:1], known=known) == []


def test_parser_resolves_relative_function_level_and_type_checking_imports(tmp_path):
    root = tmp_path / "pkg"
    files = {
        "__init__.py": "from . import api\n",
        "api.py": "from .sub import mod\nfrom .sub.mod import thing\n",
        "base.py": "import pkg.sub.mod as m\nfrom pkg import missing_name\n",
        "sub/__init__.py": "",
        "sub/mod.py": (
            "from typing import TYPE_CHECKING\n"
            "import numpy\n"
            "if TYPE_CHECKING:\n"
            "    from ..api import X\n"
            "else:\n"
            "    from .. import base\n"
            "def f():\n"
            "    from ..gone import y\n"
            "    from ... import outside\n"
            "    return y\n"
            "if __name__ == '__main__':\n"
            "    from pkg import api\n"
        ),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    edges, unresolved = import_graph(root, "pkg")
    got = {(e.src, e.dst, e.scope) for e in edges}
    assert got == {
        ("pkg", "pkg.api", ""),
        ("pkg.api", "pkg.sub.mod", ""),
        ("pkg.base", "pkg.sub.mod", ""),
        ("pkg.base", "pkg", ""),  # from pkg import <not a module>: the package itself
        ("pkg.sub.mod", "pkg.base", ""),  # the else branch of TYPE_CHECKING runs
        ("pkg.sub.mod", "pkg.api", ""),  # the __main__ block counts
    }
    assert {(e.src, e.dst, e.scope) for e in unresolved} == {("pkg.sub.mod", "pkg.gone", "f")}
    assert find_cycles(edges, known={})  # pkg -> api -> sub.mod -> api ...

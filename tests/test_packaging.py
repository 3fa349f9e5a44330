"""The wheel ships every package of the source tree (pyproject.toml lists them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _listed_packages() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M)
    assert block, "no [tool.setuptools] packages list in pyproject.toml"
    return set(re.findall(r'"([^"]+)"', block.group(1)))


def test_every_subpackage_is_in_the_wheel():
    listed = _listed_packages()
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "ozfft").rglob("__init__.py")
    }
    assert found - listed == set(), f"packages missing from pyproject.toml: {found - listed}"
    assert "ozfft.kernels" in listed  # kernels/ ships as ozfft.kernels

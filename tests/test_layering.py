"""Imports in `pallas_ir/` go down the levels of the design, never up.

Data flows one way: utilities → dialects → analysis and reference → passes →
lowering → frontend → API. A module may import from its own level or below, and a
pass module may not import another pass (what two passes share lives in a helper
module). Every import counts, also one inside a function: a lazy import still ties
the module to what it imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pallas_ir"

LEVELS: dict[str, int] = {
    # 0 utilities: no IR ops, only numbers, affine expressions and diagnostics.
    "pallas_ir.tpu_rules": 0,
    "pallas_ir.affine_analysis": 0,
    "pallas_ir.interval_bounds": 0,
    "pallas_ir.dtypes": 0,
    "pallas_ir.diagnostics": 0,
    "pallas_ir.compile_profile": 0,
    "pallas_ir.symbols": 0,
    "pallas_ir.library": 0,
    # 1 dialects (their canonicalization patterns with them).
    "pallas_ir.dialects": 1,
    # 2 analyses and the reference interpreters of the dialects.
    "pallas_ir.analysis": 2,
    "pallas_ir.reference": 2,
    # 3 ta passes.
    "pallas_ir.passes": 3,
    # 4 lowerings between levels.
    "pallas_ir.lowering": 4,
    # 5 the torch frontend.
    "pallas_ir.frontend": 5,
    # 6 API and tools: the package itself, the registry of dialects, passes and
    # pipelines (it names every level), the xdsl universe entry point, the checks.
    "pallas_ir": 6,
    "pallas_ir.__main__": 6,
    "pallas_ir.compiler": 6,
    "pallas_ir.cache": 6,
    "pallas_ir.dynamo": 6,
    "pallas_ir.check": 6,
    "pallas_ir.tpu_check": 6,
    "pallas_ir.registry": 6,
    "pallas_ir.universe": 6,
    "pallas_ir.tools": 6,
}

PASS_HELPERS = frozenset(
    {
        "pallas_ir.passes",
        "pallas_ir.passes.report",
        "pallas_ir.passes.kernel_fission",
        "pallas_ir.passes.options",
        "pallas_ir.passes.access_rewrites",
        "pallas_ir.passes.indirect_access",
        "pallas_ir.passes.xla_outline",
        "pallas_ir.passes.launch_graph",
    }
)
"""Modules under `passes/` that define no pass: any pass may import them."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _level(module: str) -> int:
    """The level of the longest table entry that is `module` or a package above it."""
    name = module
    while name:
        if name in LEVELS:
            return LEVELS[name]
        name = name.rpartition(".")[0]
    raise AssertionError(f"{module} has no level: add it (or its package) to LEVELS")


def _known(module: str) -> bool:
    rel = Path(*module.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").exists() or (
        PACKAGE.parent / rel / "__init__.py"
    ).exists()


def _imports(path: Path) -> set[str]:
    """Every pallas_ir module `path` imports, at any depth of its code."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "pallas_ir"}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: use absolute imports"
            base = node.module or ""
            if base.split(".")[0] != "pallas_ir":
                continue
            found.add(base)
            # `from pallas_ir.dialects import tiled_loop` imports a module.
            found |= {
                f"{base}.{a.name}" for a in node.names if _known(f"{base}.{a.name}")
            }
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def _is_pass(module: str) -> bool:
    return module.startswith("pallas_ir.passes.") and module not in PASS_HELPERS


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_imports_go_down(path: Path) -> None:
    module = _module_name(path)
    level = _level(module)
    wrong = []
    for imported in sorted(_imports(path)):
        if _level(imported) > level:
            wrong.append(f"{imported} (level {_level(imported)})")
        elif _is_pass(module) and _is_pass(imported) and imported != module:
            wrong.append(f"{imported} (another pass)")
    assert not wrong, f"{module} (level {level}) imports " + ", ".join(wrong)

"""Imports point one way: wire data → transports/store → engines → agent → devices →
service → cli. A module may import from its own layer or a lower one, never a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "fayd"

LAYERS = {
    "errors": 0,
    "config": 0,
    "protocol": 1,
    "store": 2,
    "auth": 2,
    "transport": 2,
    "speech": 3,
    "llm": 3,
    "models": 3,
    "embedding": 3,
    "memory": 4,
    "agent": 5,
    "mcp": 6,
    "devices": 6,
    "care": 6,
    "service": 7,
    "cli": 8,
    "testing": 8,  # support for tests and benchmarks: may use any layer, the daemon none
}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "fayd" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def test_imports_point_one_way() -> None:
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        own = layer_of(".".join(rel.parts))
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                theirs = layer_of(target)
                if theirs is not None and theirs > own:
                    wrong.append(f"{rel} (layer {own}) imports {target} (layer {theirs})")
    assert not wrong, "\n".join(wrong)


def test_every_package_folder_has_a_layer() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert folders <= set(LAYERS), folders - set(LAYERS)

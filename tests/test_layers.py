"""The plan of the house, checked against the code (docs/architecture.md draws it):

- imports point one way: wire data → store/auth/transport → engines → memory → agent and
  devices → mcp → service → cli; a module imports its own layer or a lower one;
- the agent and the device side never import each other: they meet through ports that
  ``fayd.service`` wires;
- no two modules import each other, directly or round a loop (imports inside functions and
  under TYPE_CHECKING count: hiding one there does not remove the cycle);
- no class grows past 20 methods, and no engine is typed ``Any``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "fayd"

LAYERS = {
    "errors": 0,
    "config": 0,
    "beat": 0,
    "children": 0,
    "logwords": 0,
    "precedence": 0,
    "protocol": 1,
    "store": 2,
    "auth": 2,
    "transport": 2,
    "speech": 3,
    "llm": 3,
    "models": 3,
    "embedding": 3,
    "memory": 4,
    "kb": 4,
    "reminders": 4,
    "agent": 5,
    "devices": 5,
    "care": 5,
    "homeassistant": 5,
    "mcp": 6,
    "doors": 6,  # the other doors on the API port (fayd.doors): served by the service
    "web": 6,  # the household page (fayd.web): served by the service
    "service": 7,
    "doctor": 8,  # fayd doctor's checks: read the daemon's settings and files, run by the CLI
    "cli": 8,
    "testing": 8,  # support for tests and benchmarks: may use any layer, the daemon none
}
#: Packages of one layer that must not import each other.
STRANGERS = [("agent", "devices"), ("care", "agent"), ("care", "devices")]
MAX_METHODS = 20


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(path: Path, name: str, known: dict[str, Path]) -> Iterator[str]:
    """The fayd modules ``path`` imports, anywhere in it (``from a import b`` is the module
    ``a.b`` when there is one, else ``a``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        yield from (t for t in targets if t.startswith("fayd.") or t == "fayd")


def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {t for t in imports(path, name, known) if t in known and t != name}
        for name, path in known.items()
    }


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "fayd" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def test_imports_point_one_way() -> None:
    wrong = []
    for name, targets in graph().items():
        own = layer_of(name)
        for target in targets:
            theirs = layer_of(target)
            if own is not None and theirs is not None and theirs > own:
                wrong.append(f"{name} (layer {own}) imports {target} (layer {theirs})")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_agent_and_the_devices_meet_only_through_ports() -> None:
    wrong = []
    for a, b in STRANGERS:
        for name, targets in graph().items():
            for one, other in ((a, b), (b, a)):
                if name.startswith(f"fayd.{one}"):
                    wrong += [
                        f"{name} imports {t}" for t in targets if t.startswith(f"fayd.{other}")
                    ]
    assert not wrong, "\n".join(sorted(wrong))


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_cycles() -> None:
    edges = graph()
    # A package's __init__ re-exports its modules: importing the package from one of its own
    # modules would be a cycle, so the edges from a package to its own modules are kept.
    assert cycles(edges) == []


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_package_folder_has_a_layer_and_every_layer_exists() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("_")}
    files = {p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("_")}
    assert folders <= set(LAYERS), folders - set(LAYERS)
    assert set(LAYERS) <= folders | files, set(LAYERS) - folders - files


def test_no_class_has_more_than_20_methods() -> None:
    big = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = [
                    n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                if len(methods) > MAX_METHODS:
                    big.append(f"{name}.{node.name}: {len(methods)}")
    assert not big, big


ENGINE_WORDS = r"(asr|tts|llm|vad|embedder|engine|engines|wake|onset|detector|model)"


def test_no_engine_is_typed_any() -> None:
    """A parameter, attribute or field named like an engine has a real type (a Protocol)."""
    pattern = re.compile(rf"\b{ENGINE_WORDS}\s*:\s*Any\b")
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


def test_no_two_packages_import_each_other() -> None:
    """Round a loop of packages as well as of modules: speech ↔ models hid one behind a
    function-local import (models.user_files read speech.wake's wake word names)."""
    packages: dict[str, set[str]] = {}
    for name, targets in graph().items():
        own = ".".join(name.split(".")[:2])
        packages.setdefault(own, set()).update(
            ".".join(t.split(".")[:2]) for t in targets if t.count(".") >= 1
        )
    both = sorted(
        f"{a} ↔ {b}" for a, to in packages.items() for b in to if a < b and a in packages.get(b, ())
    )
    assert not both, "\n".join(both)


def test_the_daemon_never_imports_test_support() -> None:
    """fayd.testing (the simulated device, the daemon harness) is for tests, benchmarks and
    ``fayd sim``: no module the daemon runs imports it."""
    allowed = ("fayd.testing", "fayd.cli.sim")
    wrong = [
        f"{name} imports {t}"
        for name, targets in graph().items()
        if not name.startswith(allowed)
        for t in targets
        if t.startswith("fayd.testing")
    ]
    assert not wrong, "\n".join(sorted(wrong))


#: Inside the agent (docs/architecture.md, "Who owns what"): the words every part reads at
#: the bottom, the features in the middle, the router that picks one above them. A folder
#: imports its own rank or a lower one. The features' own order (care below reminders…) is
#: left to test_no_module_cycles and the rule that no two folders import each other.
AGENT_FOLDERS = {
    "language": 0,
    "clock": 1,
    "skills": 2,
    "smalltalk": 3,
    "care": 3,
    "recall": 3,
    "reminders": 3,
    "honest": 3,
    "understand": 4,
    "tools": 4,  # the model's look-ups: the read-only skills among them
}


def test_inside_the_agent_words_then_features_then_the_router() -> None:
    wrong = []
    folders: dict[str, set[str]] = {}
    for name, targets in graph().items():
        parts = name.split(".")
        own = parts[2] if name.startswith("fayd.agent.") and len(parts) > 3 else None
        for target in targets:
            tparts = target.split(".")
            theirs = tparts[2] if target.startswith("fayd.agent.") and len(tparts) > 3 else None
            if own in AGENT_FOLDERS and theirs in AGENT_FOLDERS and own != theirs:
                folders.setdefault(own, set()).add(theirs)
                if AGENT_FOLDERS[theirs] > AGENT_FOLDERS[own]:
                    wrong.append(f"{name} imports {target}")
            if own == "language" and target.startswith("fayd.agent.") and theirs != "language":
                wrong.append(f"{name} imports {target}: language/ imports nothing of the agent")
    wrong += [
        f"{a} ↔ {b}" for a, to in folders.items() for b in to if a < b and a in folders.get(b, ())
    ]
    assert folders, "no agent folders found: the test reads the wrong tree"
    assert not wrong, "\n".join(sorted(wrong))


def test_every_agent_folder_has_a_rank() -> None:
    found = {p.parent.name for p in (PACKAGE / "agent").glob("*/*.py")}
    assert found == set(AGENT_FOLDERS)

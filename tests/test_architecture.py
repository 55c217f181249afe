"""The package's structure: imports run one way (no circle among jaxgames modules), and no
module imports another module's private names."""

from __future__ import annotations

import ast
import pathlib

import jaxgames

PACKAGE = pathlib.Path(jaxgames.__file__).parent


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(path: pathlib.Path, name: str, modules: set[str]) -> list[tuple[str, list[str]]]:
    """(imported jaxgames module, imported names) for every import statement in the file,
    at any depth (imports inside functions count too). ``from pkg import sub`` of a submodule
    counts as an import of ``pkg.sub``."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.split(".")[0] == "jaxgames"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            if base.split(".")[0] != "jaxgames":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub, []) if sub in modules else (base, [a.name]))
    return [(m, names) for m, names in out if m in modules]


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {m for m, _ in _imports(path, name, set(modules)) if m != name}
        for name, path in modules.items()
    }


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_circle():
    cycle = _find_cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_circle():
    """The check itself can fail: a planted circle is reported."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _find_cycle(graph) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


#: the packages (a top-level module or a sub-package of jaxgames) from the bottom up: a module
#: may import from its own package and from packages of lower layers only, so packages can
#: never import each other both ways. ``jaxgames`` itself (the root facade) is the top.
LAYERS: list[set[str]] = [
    {
        "jaxgames.validation",
        "jaxgames.view",
        "jaxgames.provenance",
        "jaxgames.compile_cache",
        "jaxgames.signals",
    },
    {"jaxgames.distributed", "jaxgames.render"},
    {"jaxgames.core"},
    {"jaxgames.games", "jaxgames.analysis"},
    {"jaxgames.evaluation", "jaxgames.interop", "jaxgames.records"},
    {"jaxgames.baselines", "jaxgames.transcripts"},
    {"jaxgames.agents", "jaxgames.nboard"},
    {"jaxgames.runs"},
    {"jaxgames.pretrained"},
    {"jaxgames.specs"},
    {"jaxgames.training", "jaxgames.terminal"},
    {"jaxgames.web"},
    {"jaxgames.cli"},
    {"jaxgames"},
]


def _package(module: str) -> str:
    """``jaxgames.agents.ppo`` -> ``jaxgames.agents``; ``jaxgames.core`` -> itself."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, deps in graph.items():
        here = _package(module)
        out.setdefault(here, set()).update(_package(d) for d in deps if _package(d) != here)
    return out


def test_packages_point_down():
    """Package level: every import goes to a lower layer of :data:`LAYERS` (so no two packages
    import each other, even where their modules form no circle), and every package has a layer."""
    packages = _package_graph(_graph())
    layer = {p: i for i, group in enumerate(LAYERS) for p in group}
    missing = sorted(set(packages) - set(layer))
    assert not missing, f"packages without a layer in LAYERS: {missing}"
    upward = [
        f"{p} -> {d}" for p, deps in packages.items() for d in sorted(deps) if layer[d] >= layer[p]
    ]
    assert not upward, "imports that do not point down: " + ", ".join(upward)
    assert _find_cycle(packages) is None


def test_package_check_can_fail():
    """The package graph sees an edge that only a module-level view would miss: a module of
    ``agents`` importing ``training`` and one of ``training`` importing ``agents``."""
    graph = {"jaxgames.agents.a": {"jaxgames.training.b"}, "jaxgames.training.b": set()}
    graph["jaxgames.training.c"] = {"jaxgames.agents.d"}
    graph["jaxgames.agents.d"] = set()
    assert _find_cycle(graph) is None
    assert _find_cycle(_package_graph(graph)) is not None


def test_graph_sees_deferred_imports():
    """Imports inside functions count: the root facade's deferred import of jaxgames.runs
    (``jaxgames.load_policy``) is an edge, and no module of the package imports the root."""
    graph = _graph()
    assert "jaxgames.runs" in graph["jaxgames"]
    importers = sorted(m for m, deps in graph.items() if "jaxgames" in deps and m != "jaxgames")
    assert not importers, f"modules importing the root package: {importers}"


def test_layers_point_down():
    """Within the bottom layers: ``render`` draws board views (``view``) and nothing else, so a
    state can draw itself in a notebook through it; the games use only the bottom layers."""
    graph = _graph()
    low = {"jaxgames.core", "jaxgames.validation", "jaxgames.view", "jaxgames.render"}
    games = {m for m in graph if m.startswith("jaxgames.games")}
    for module in low:
        assert graph[module] <= low, (module, graph[module])
    for module in games:
        assert graph[module] <= low | games, (module, graph[module] - low - games)
    interop = {m for m in graph if m.startswith("jaxgames.interop")}
    assert interop, "jaxgames.interop is missing"
    for module in set(graph) - interop:
        assert not graph[module] & interop, module


def test_no_private_names_across_modules():
    modules = _modules()
    bad = [
        f"{name} imports {m}.{n}"
        for name, path in modules.items()
        for m, names in _imports(path, name, set(modules))
        for n in names
        if n.startswith("_") and m != name
    ]
    assert not bad, bad

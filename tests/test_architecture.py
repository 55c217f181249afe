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


def test_graph_sees_deferred_imports():
    """Imports inside functions count: agents/__init__'s deferred import of jaxgames.runs is an
    edge (and the graph stays acyclic only because runs does not import the package init)."""
    graph = _graph()
    assert "jaxgames.runs" in graph["jaxgames.agents"]
    assert "jaxgames.agents" not in graph["jaxgames.runs"]


def test_layers_point_down():
    """The bottom layers import nothing above them. ``render`` draws board views (``view``) and
    nothing else, so it is one of them: a state draws itself in a notebook through it."""
    graph = _graph()
    low = {"jaxgames.core", "jaxgames.validation", "jaxgames.view", "jaxgames.render"}
    games = {m for m in graph if m.startswith("jaxgames.games")}
    for module in low:
        assert graph[module] <= low, (module, graph[module])
    for module in games:
        assert graph[module] <= low | games, (module, graph[module] - low - games)
    for module in ("jaxgames.training.config", "jaxgames.evaluation.opponents"):
        assert not graph[module] & {"jaxgames.runs", "jaxgames.specs"}, module
    # shipped agents sit between the run directories and the specs that name them
    assert "jaxgames.runs" in graph["jaxgames.pretrained"]
    assert not graph["jaxgames.runs"] & {"jaxgames.pretrained", "jaxgames.specs"}
    assert not {m for m in graph["jaxgames.pretrained"] if m.startswith("jaxgames.cli")}
    assert "jaxgames.specs" not in graph["jaxgames.pretrained"]
    # the adapters to other libraries sit on the games (and the renderer), beside evaluation;
    # nothing in the package depends on them
    interop = {m for m in graph if m.startswith("jaxgames.interop")}
    assert interop, "jaxgames.interop is missing"
    for module in interop:
        allowed = low | games | interop | {"jaxgames.render"}
        assert graph[module] <= allowed, (module, graph[module] - allowed)
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

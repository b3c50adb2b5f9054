"""No module of ``viewer`` imports itself back through others (a package's ``__init__``
re-exporting its children is not counted). The layers contracts in ``pyproject.toml`` hold the
packages and the ui's rooms apart; this holds the modules inside one room apart too (the view's
``time_viewbox`` and ``timeline_view`` once imported each other)."""

from __future__ import annotations

import grimp


def first_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``edges`` (module -> modules it imports) as a path that ends where it
    began, or None. Iterative, so a long chain does not hit the recursion limit."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for root in sorted(edges):
        if root in state:
            continue
        path, stack = [root], [iter(sorted(edges[root]))]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(edges.get(nxt, ()))))
    return None


def test_first_cycle_finds_a_cycle_and_only_a_cycle() -> None:
    assert first_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert first_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert first_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": {"d"}}) == ["d", "d"]


def test_no_module_of_viewer_imports_itself_back() -> None:
    graph = grimp.build_graph("viewer")
    packages = {m for m in graph.modules if graph.find_children(m)}
    edges = {
        m: set(graph.find_modules_directly_imported_by(m)) - packages
        for m in graph.modules
        if m not in packages
    }
    assert len(edges) > 100  # the whole package was read
    cycle = first_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])

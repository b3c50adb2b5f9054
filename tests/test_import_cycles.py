"""No module of ``viewer`` imports itself back through others, package ``__init__``s
included (a module importing its own package is not counted: Python imports that first).
The layers contracts in ``pyproject.toml`` hold the packages and the ui's rooms apart; this
holds the modules inside one room apart too (the view's ``time_viewbox`` and
``timeline_view`` once imported each other)."""

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


def parent(child: str, package: str) -> bool:
    """Whether ``package`` holds the module ``child`` (which imports it when first imported,
    re-exports or not: no cycle of the code's making)."""
    return child.startswith(package + ".")


def kept(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {m: {i for i in imported if not parent(m, i)} for m, imported in graph.items()}


def test_a_cycle_through_a_package_init_is_found_and_a_childs_own_package_is_not() -> None:
    # b re-exports b.y, which imports a (and its own package b): a -> b -> b.y -> a
    assert first_cycle(kept({"a": {"b"}, "b": {"b.y"}, "b.y": {"a", "b"}})) == [
        "a", "b", "b.y", "a",
    ]  # fmt: skip
    assert first_cycle(kept({"a": {"b"}, "b": {"b.y"}, "b.y": {"b"}})) is None


def test_no_module_of_viewer_imports_itself_back() -> None:
    graph = grimp.build_graph("viewer")
    edges = kept({m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules})
    assert len(edges) > 150  # the whole package was read
    cycle = first_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])

"""Why recall answered what it did (explain), what the model would see (context), the graph, and health."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..facade.graph import Reached
from ._params import MAX_ID, NotFound, choice, integer, text
from ._render import Inspector, render

__all__ = ["ROUTES"]

MODES = ("hybrid", "keyword", "semantic")
#: The graph view draws at most this many nodes.
MAX_NODES = 150
_TIMINGS = (("embed", "embed_ms"), ("keyword", "keyword_ms"), ("vector", "vector_ms"), ("fusion", "fusion_ms"))


def _inspector(request: Request) -> Inspector:
    inspector: Inspector = request.app.state.inspector
    return inspector


def _timings(details: dict[str, Any]) -> list[tuple[str, float]]:
    """The legs' times in milliseconds, for the bar chart (the graph step's too, and the total)."""
    found = [(label, float(details[key])) for label, key in _TIMINGS if isinstance(details.get(key), (int, float))]
    graph = details.get("graph")
    if isinstance(graph, dict) and isinstance(graph.get("ms"), (int, float)):
        found.append(("graph", float(graph["ms"])))
    if isinstance(details.get("total_ms"), (int, float)):
        found.append(("total", float(details["total_ms"])))
    return found


def _nudges(graph: dict[str, Any], hits: list[Any]) -> list[dict[str, Any]]:
    """The graph step's nudged memories as table rows: content, the names on the way, relation, hops, nudge."""
    content = {h.id: h.content for h in hits}
    rows = []
    for row in graph.get("paths") or []:
        if not isinstance(row, dict):
            continue
        path = row.get("path") or str(row.get("via", "")).split(" > ")
        rows.append(
            {
                "memory_id": str(row.get("memory_id", "")),
                "content": content.get(row.get("memory_id"), ""),
                "path": [str(name) for name in path],
                "relation": str(row.get("relation") or ""),
                "hops": row.get("hops", max(0, len(path) - 1)),
                "nudge": row.get("nudge"),
            }
        )
    return rows


async def explain(request: Request) -> Response:
    """``GET /explain?q=...``: the legs, their candidates and scores, the fusion, the graph nudge, the timings."""
    params = request.query_params
    query = text(params, "q", limit=2000).strip()
    mode = choice(params, "mode", MODES, "hybrid")
    k = integer(params, "k", 10, low=1, high=100)
    explanation = None
    if query:
        explanation = await _inspector(request).mem.explain(query, k=k, mode=mode)
    details = {} if explanation is None else explanation.details
    timings = _timings(details)
    longest = max((ms for _, ms in timings), default=1.0) or 1.0
    found = details.get("graph")
    graph: dict[str, Any] = found if isinstance(found, dict) else {}
    scalar = {k: v for k, v in details.items() if not isinstance(v, (dict, list)) and not k.endswith("_ms")}
    return render(
        request,
        "explain.html",
        query=query,
        mode=mode,
        k=k,
        modes=MODES,
        explanation=explanation,
        timings=timings,
        longest=longest,
        graph=graph,
        nudges=_nudges(graph, [] if explanation is None else explanation.hits),
        scalar=scalar,
    )


async def context(request: Request) -> Response:
    """``GET /context?q=...&budget=N``: the plan ``build_context`` makes (no access recorded), cut to the budget."""
    params = request.query_params
    query = text(params, "q", limit=5000).strip()
    budget = integer(params, "budget", 0, low=0, high=1_000_000)
    session = text(params, "session", limit=MAX_ID).strip() or None
    plan = None
    if query:
        plan = await _inspector(request).mem.build_context(query, session_id=session, touch=False)
        if budget:
            plan = plan.truncate(budget)
    return render(request, "context.html", query=query, budget=budget, session=session or "", plan=plan)


async def graph(request: Request) -> Response:
    """``GET /graph?entity=NAME``: the entity's neighbourhood, drawn by ``static/graph.js``."""
    params = request.query_params
    entity = text(params, "entity", limit=300).strip()
    hops = integer(params, "hops", 2, low=1, high=4)
    mem = _inspector(request).mem
    entities = await mem.graph.entities(limit=50)
    found = None
    if entity:
        found = await mem.graph.entity(entity)
        if found is None:
            msg = f"no entity named {entity!r} in the graph"
            raise NotFound(msg)
    return render(request, "graph.html", entity=found, hops=hops, entities=entities, query=entity)


def _neighbourhood(centre: str, reached: list[Reached]) -> dict[str, Any]:
    """Nodes and edges from a traversal: each path's last step is an edge with its relation."""
    nodes: dict[str, dict[str, Any]] = {centre: {"id": centre, "hops": 0, "type": ""}}
    edges: dict[tuple[str, str], str] = {}
    for step in reached:
        if len(nodes) >= MAX_NODES and step.name not in nodes:
            continue
        nodes.setdefault(step.name, {"id": step.name, "hops": step.hops, "type": step.type})
        if len(step.path) >= 2:
            edges.setdefault((step.path[-2], step.path[-1]), step.relation or "")
    links = [{"source": s, "target": t, "relation": r} for (s, t), r in edges.items() if s in nodes and t in nodes]
    return {"centre": centre, "nodes": list(nodes.values()), "edges": links}


async def graph_json(request: Request) -> Response:
    """``GET /graph.json?entity=NAME&hops=N``: the data the graph view draws."""
    params = request.query_params
    entity = text(params, "entity", limit=300).strip()
    hops = integer(params, "hops", 2, low=1, high=4)
    mem = _inspector(request).mem
    found = await mem.graph.entity(entity) if entity else None
    if found is None:
        msg = f"no entity named {entity!r} in the graph"
        raise NotFound(msg)
    reached = await mem.graph.traverse(found.name, hops=hops, limit=MAX_NODES)
    return JSONResponse(_neighbourhood(found.name, list(reached)))


async def health(request: Request) -> Response:
    """``GET /health``: the governor's tier, the vector tier, the embedding pin, a federation's tiers."""
    mem = _inspector(request).mem
    loop = await mem.health()
    stats = await mem.stats()
    federation = loop.pop("federation", None)
    tiers = federation.get("tiers", {}) if isinstance(federation, dict) else {}
    return render(request, "health.html", gov=loop, stats=stats, federation=federation, tiers=tiers)


ROUTES = [
    Route("/explain", explain, name="explain"),
    Route("/context", context, name="context"),
    Route("/graph", graph, name="graph"),
    Route("/graph.json", graph_json, name="graph_json"),
    Route("/health", health, name="health"),
]

"""Turn the benchmarks' figures (``benchmarks/results/*.json``) into the guide's SVG charts.

    python benchmarks/charts.py                 # writes docs/assets/charts/*.svg
    python benchmarks/charts.py --out DIR       # somewhere else

Needs matplotlib (``nox -s charts`` installs it; it is no dependency of the packages). A
chart whose JSON file is missing is skipped with a note. The output is deterministic (fixed
SVG ids, no date, text kept as text), so rerunning it on unchanged figures changes no file.
Charts are drawn in dark grey on a transparent background; the guide's stylesheet puts a
light panel behind them in the dark scheme.

Where each file comes from:

- ``peers.json``: ``python benchmarks/peers/run.py --out benchmarks/results/peers.json``
- ``locomo_recall.json``, ``memory_loop.json``, ``vector_tiers.json``, ``ingest_recall.json``,
  ``postgres.json``, ``federation.json``: the scripts of the same name, with ``--json PATH``
  where they have it, or figures transcribed from their last run (the ``run`` block says which).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib as mpl

mpl.use("svg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OUT = HERE.parent / "docs" / "assets" / "charts"

INK = "#37474f"  # text and axes: dark grey, on the light page and on the dark scheme's light panel
GRID = "#cfd8dc"
OURS = ["#3949ab", "#00897b", "#8e24aa", "#f4511e"]  # elastic-memory's tiers
THEIRS = ["#90a4ae", "#a1887f", "#78909c", "#bcaaa4", "#b0bec5", "#8d6e63"]  # the peers, muted
PEER_MARKERS = ["s", "^", "D", "v", "P", "X", "<", ">"]
CATEGORIES = ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"]

mpl.rcParams.update(
    {
        "svg.fonttype": "none",  # text stays text: the page's font, selectable, small files
        "svg.hashsalt": "elastic-memory",  # fixed ids: reruns do not churn git
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans"],
        "font.size": 10,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.edgecolor": INK,
        "axes.titlesize": 11.5,
        "axes.titleweight": "bold",
        "axes.titlelocation": "left",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.color": GRID,
        "grid.linewidth": 0.6,
        "xtick.color": INK,
        "ytick.color": INK,
        "legend.frameon": False,
        "figure.facecolor": "none",
        "axes.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.bbox": "tight",
    }
)


def load(name: str) -> dict[str, Any] | None:
    """``results/<name>.json``, or None when it is not there."""
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def save(fig: Any, out: Path, name: str) -> Path:
    """Write ``name.svg`` without a date (deterministic output) and close the figure."""
    path = out / f"{name}.svg"
    fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "benchmarks/charts.py"})
    plt.close(fig)
    return path


def _ms(value: float, _pos: object = None) -> str:
    return f"{value:g} ms"


def _size(n: float, _pos: object = None) -> str:
    return f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k"


def _is_ours(name: str) -> bool:
    return name.startswith("elastic-memory")


#: The peer harness's row names, as a reader knows them.
LABELS = {
    "elastic-memory": "elastic-memory (auto)",
    "elastic-memory-exact": "elastic-memory ram (exact)",
    "elastic-memory-vec0": "elastic-memory vec0",
    "elastic-memory-ann": "elastic-memory ann",
    "sqlite-vec+fts5": "raw sqlite-vec + FTS5",
    "numpy-exact": "numpy exact scan",
    "langgraph-SqliteStore": "LangGraph SqliteStore",
    "lancedb-ivfpq-refine10": "LanceDB IVF-PQ",
}


def _peer_rows(peers: dict[str, Any]) -> dict[str, dict[int, dict[str, Any]]]:
    """peer -> size -> its result, for the rows that ran."""
    rows: dict[str, dict[int, dict[str, Any]]] = {}
    for size, result in peers["sizes"].items():
        for name, r in result["peers"].items():
            if "ingest_per_s" in r:
                rows.setdefault(name, {})[int(size)] = r
    return rows


#: elastic-memory's tiers keep their colour in every chart.
TIER_COLOURS = {
    "elastic-memory": OURS[0],
    "elastic-memory-ann": OURS[1],
    "elastic-memory-exact": OURS[2],
    "elastic-memory-vec0": OURS[3],
}


def _styles(names: list[str]) -> dict[str, dict[str, Any]]:
    theirs = iter(THEIRS * 2)
    markers = iter(PEER_MARKERS * 2)  # muted colours alone are hard to tell apart: a marker each
    styles = {}
    for name in names:
        if _is_ours(name):
            colour = TIER_COLOURS.get(name, OURS[0])
            styles[name] = {"color": colour, "linewidth": 2.4, "marker": "o", "zorder": 3}
        else:
            styles[name] = {
                "color": next(theirs),
                "linewidth": 1.4,
                "marker": next(markers),
                "linestyle": "--",
                "zorder": 2,
            }
    return styles


def _order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (not _is_ours(n), n != "elastic-memory", n))


def latency_by_size(out: Path) -> list[Path]:
    """Vector search p50 against the store size, one line per peer and per elastic-memory tier."""
    peers = load("peers")
    if peers is None:
        return []
    rows = _peer_rows(peers)
    # The tiers forced by name; the `auto` row switches tier with the size and the RAM budget.
    rows.pop("elastic-memory", None)
    names = _order([n for n, by in rows.items() if any((r.get("vector") or {}).get("p50_ms") for r in by.values())])
    styles = _styles(names)
    fig, ax = plt.subplots(figsize=(8, 4.6))
    for name in names:
        points = sorted(
            (n, r["vector"]["p50_ms"]) for n, r in rows[name].items() if (r.get("vector") or {}).get("p50_ms")
        )
        xs, ys = zip(*points, strict=True)
        ax.plot(xs, ys, label=LABELS.get(name, name), **styles[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_size))
    ax.yaxis.set_major_formatter(FuncFormatter(_ms))
    ax.set_xticks(sorted({n for by in rows.values() for n in by}))
    ax.set_xlabel("memories in the store (384-d vectors)")
    ax.set_title("Vector search latency (p50, k = 10) as the store grows: lower is better")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    return [save(fig, out, "latency-by-size")]


def recall_vs_latency(out: Path) -> list[Path]:
    """recall@10 against p50 at the largest size where most peers ran."""
    peers = load("peers")
    if peers is None:
        return []
    size = "100000" if "100000" in peers["sizes"] else max(peers["sizes"], key=int)
    result = peers["sizes"][size]["peers"]
    names = _order([n for n, r in result.items() if (r.get("vector") or {}).get("recall_at_10") is not None])
    styles = _styles(names)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    # Every point is named in the legend (ours first, larger dots): labels beside points overlapped
    # where the tiers sit close together.
    for name in sorted(names, key=lambda n: not _is_ours(n)):
        v = result[name]["vector"]
        st = styles[name]
        big = _is_ours(name)
        marker, dot = ("o", 80) if big else (st["marker"], 50)
        label = LABELS.get(name, name)
        ax.scatter(v["p50_ms"], v["recall_at_10"], s=dot, color=st["color"], marker=marker, zorder=3, label=label)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_ms))
    ax.set_xlabel("vector search p50 (log scale): left is faster")
    ax.set_ylabel("recall@10 against exact")
    lowest = min(result[n]["vector"]["recall_at_10"] for n in names)
    ax.set_ylim(min(0.9, lowest - 0.02), 1.012)
    ax.set_xlim(
        min(result[n]["vector"]["p50_ms"] for n in names) / 1.6, max(result[n]["vector"]["p50_ms"] for n in names) * 1.8
    )
    ax.set_title(f"Recall against latency at {_size(int(size))} memories: top left is best")
    return [save(fig, out, "recall-vs-latency")]


def ingest_rate(out: Path) -> list[Path]:
    """Ingest rate with supplied vectors, per peer, at each size with the most peers."""
    peers = load("peers")
    if peers is None:
        return []
    rows = _peer_rows(peers)
    sizes = [s for s in sorted(int(s) for s in peers["sizes"]) if s < 1_000_000] or sorted(
        int(s) for s in peers["sizes"]
    )
    names = _order([n for n in rows if all(s in rows[n] for s in sizes)])
    names = sorted(names, key=lambda n: rows[n][sizes[-1]]["ingest_per_s"])
    fig, ax = plt.subplots(figsize=(8, 0.26 * len(names) * len(sizes) + 1.0))
    height = 0.8 / len(sizes)
    for j, size in enumerate(sizes):
        ys = [i + j * height for i in range(len(names))]
        colours = [(OURS[0] if _is_ours(n) else THEIRS[0]) for n in names]
        bars = ax.barh(ys, [rows[n][size]["ingest_per_s"] for n in names], height=height * 0.9, color=colours,
                       alpha=1.0 if j == len(sizes) - 1 else 0.55, label=f"{_size(size)} memories")  # fmt: skip
        ax.bar_label(bars, labels=[f"{rows[n][size]['ingest_per_s']:,.0f}/s" for n in names], padding=3, fontsize=8)
    ax.set_yticks([i + height * (len(sizes) - 1) / 2 for i in range(len(names))], [LABELS.get(n, n) for n in names])
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ax.set_xlabel("memories written per second, vectors supplied (log scale): right is faster")
    ax.grid(axis="y", visible=False)
    ax.set_title("Ingest rate, batches of 500 with their vectors")
    ax.legend(loc="lower right", fontsize=9)
    return [save(fig, out, "ingest-rate")]


def memory_loop(out: Path) -> list[Path]:
    """The memory loop's two calls per turn (p50 and p95), and LoCoMo evidence in the plan."""
    loop = load("memory_loop")
    if loop is None:
        return []
    steps = loop["per_turn"]
    labels = [s["step"] + (f"\nat {_size(s['n'])} turns" if "n" in s else "") for s in steps]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    xs = range(len(steps))
    p50 = ax.bar([x - 0.2 for x in xs], [s["p50_ms"] for s in steps], width=0.4, color=OURS[0], label="p50")
    p95 = ax.bar([x + 0.2 for x in xs], [s["p95_ms"] for s in steps], width=0.4, color=OURS[0], alpha=0.45,
                 label="p95")  # fmt: skip
    for bars in (p50, p95):
        ax.bar_label(bars, labels=[f"{b.get_height():.1f}" for b in bars], padding=2, fontsize=8)
    ax.set_xticks(list(xs), labels)
    ax.yaxis.set_major_formatter(FuncFormatter(_ms))
    ax.grid(axis="x", visible=False)
    ax.set_title("What memory costs a turn: build_context before the model, record_turn after it")
    ax.set_xlabel("build_context without the query embedding (the built-in model adds about 5 ms)", fontsize=9)
    ax.legend(loc="upper left", fontsize=9)
    paths = [save(fig, out, "memory-loop")]
    held = loop.get("plan_holds_evidence")
    if held and held.get("by_category"):
        cats = [c for c in CATEGORIES if c in held["by_category"]]
        fig, ax = plt.subplots(figsize=(8, 3.2))
        bars = ax.barh(cats[::-1], [held["by_category"][c] for c in cats[::-1]], color=OURS[1])
        ax.bar_label(bars, labels=[f"{b.get_width():.0%}" for b in bars], padding=3, fontsize=8)
        ax.axvline(held["all"], color=INK, linestyle=":", linewidth=1.2)
        ax.text(held["all"], len(cats) - 0.45, f" all questions {held['all']:.0%}", fontsize=8.5, va="bottom")
        ax.set_xlim(0, 1.1)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:.0%}"))
        ax.grid(axis="y", visible=False)
        ax.set_title("LoCoMo: questions whose every evidence turn is in the plan (1,800 tokens)")
        paths.append(save(fig, out, "memory-loop-evidence"))
    return paths


def _method_label(name: str) -> str:
    """A LoCoMo method's row name, short enough for a legend."""
    if "default" in name:
        return "hybrid (the default)"
    if name.startswith("keyword"):
        return "keyword (BM25)"
    if name.startswith("semantic"):
        return "semantic (MiniLM)"
    return name


def locomo(out: Path) -> list[Path]:
    """LoCoMo evidence recall@10 by question category, for the main methods."""
    data = load("locomo_recall")
    if data is None:
        return []
    methods = data["methods"]
    wanted = [m for m in methods if any(k in m["name"] for k in ("keyword", "semantic", "default"))] or methods[:3]
    cats = [c for c in CATEGORIES if all(c in m["by_category"] for m in wanted)]
    colours = {id(m): (OURS[0] if "default" in m["name"] else THEIRS[i]) for i, m in enumerate(wanted)}
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(wanted)
    for j, m in enumerate(wanted):
        xs = [i + (j - (len(wanted) - 1) / 2) * width for i in range(len(cats) + 1)]
        values = [m["by_category"][c] for c in cats] + [m["recall@10"]]
        bars = ax.bar(xs, values, width=width * 0.92, color=colours[id(m)], label=_method_label(m["name"]))
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], padding=2, fontsize=7.5)
    ax.set_xticks(range(len(cats) + 1), [*cats, "all"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("evidence recall@10")
    ax.grid(axis="x", visible=False)
    ax.set_title("LoCoMo: evidence found in the top 10, by question category")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    return [save(fig, out, "locomo-by-category")]


def postgres(out: Path) -> list[Path]:
    """Semantic and keyword p50 of the SQLite file and PostgreSQL, by store size."""
    data = load("postgres")
    if data is None:
        return []
    stores = list(dict.fromkeys(r["store"] for r in data["stores"]))
    sizes = sorted({r["n"] for r in data["stores"]})
    by = {(r["store"], r["n"]): r for r in data["stores"]}
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.8), layout="constrained")
    for ax, key, title in zip(
        axes, ("semantic_p50_ms", "keyword_p50_ms"), ("semantic p50", "keyword p50"), strict=True
    ):
        width = 0.8 / len(stores)
        for j, store in enumerate(stores):
            xs = [i + (j - (len(stores) - 1) / 2) * width for i in range(len(sizes))]
            values = [by[(store, n)].get(key, 0) if (store, n) in by else 0 for n in sizes]
            colour = OURS[0] if store.startswith("SQLite") else THEIRS[j]
            bars = ax.bar(xs, values, width=width * 0.92, color=colour, label=store)
            ax.bar_label(bars, labels=[f"{v:g}" for v in values], padding=2, fontsize=7.5)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(_ms))
        ax.set_xticks(range(len(sizes)), [_size(n) for n in sizes])
        ax.grid(axis="x", visible=False)
        ax.set_title(title, fontsize=10)
    axes[0].legend(loc="upper left", fontsize=8.5)
    fig.suptitle("The SQLite file beside PostgreSQL + pgvector (log scale): lower is better", x=0.02, ha="left",
                 fontweight="bold", fontsize=11.5, color=INK)  # fmt: skip
    return [save(fig, out, "postgres")]


def federation(out: Path) -> list[Path]:
    """A federated read against one store holding everything, and a stalled pool."""
    data = load("federation")
    if data is None:
        return []
    rows = data["recall"]
    # federation.py --json names its layout in the run block; the transcribed file is its default run.
    tiers, per_tier = data["run"].get("tiers", 5), data["run"].get("per_tier", 10_000)
    fig, ax = plt.subplots(figsize=(8, 3.4))
    xs = range(len(rows))
    single = ax.bar([x - 0.2 for x in xs], [r["single_p50_ms"] for r in rows], width=0.4, color=THEIRS[0],
                    label=f"one store, {_size(tiers * per_tier)} memories")  # fmt: skip
    fed = ax.bar([x + 0.2 for x in xs], [r["federation_p50_ms"] for r in rows], width=0.4, color=OURS[0],
                 label=f"federation, {tiers} tiers x {_size(per_tier)}")  # fmt: skip
    for bars in (single, fed):
        ax.bar_label(bars, labels=[f"{b.get_height():.1f}" for b in bars], padding=2, fontsize=8)
    ax.set_xticks(list(xs), [r["mode"] for r in rows])
    ax.set_xlabel("recall mode, query embedding excluded (the query is embedded once for all tiers)", fontsize=9)
    ax.yaxis.set_major_formatter(FuncFormatter(_ms))
    ax.grid(axis="x", visible=False)
    ax.set_title(f"Recall p50: a federation of {tiers} tiers against one store with the same memories")
    ax.legend(loc="upper left", fontsize=9)
    return [save(fig, out, "federation")]


def vector_tiers(out: Path) -> list[Path]:
    """Vector search p50 per tier on one store, unfiltered and with a selective and a broad session filter."""
    data = load("vector_tiers")
    if data is None:
        return []
    rows = data["recall"]
    tiers = list(dict.fromkeys(r["tier"] for r in rows))
    filters = list(dict.fromkeys(r["filter"] for r in rows))
    by = {(r["tier"], r["filter"]): r for r in rows}
    colours = {"vec0": OURS[3], "ram": OURS[2], "auto": OURS[0], "ann": OURS[1]}
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(tiers)
    for j, tier in enumerate(tiers):
        present = [i for i, f in enumerate(filters) if (tier, f) in by]  # a tier may skip a filter
        xs = [i + (j - (len(tiers) - 1) / 2) * width for i in present]
        values = [by[(tier, filters[i])]["p50_ms"] for i in present]
        bars = ax.bar(xs, values, width=width * 0.92, color=colours.get(tier, THEIRS[j]), label=tier)
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in values], padding=2, fontsize=7.5)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_ms))
    ax.set_xticks(range(len(filters)), [f if f != "none" else "no filter" for f in filters])
    ax.grid(axis="x", visible=False)
    ax.set_title(f"Vector search p50 by tier at {_size(int(data['size']))} memories (log scale), with session filters")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9, title="vector_index", title_fontsize=9)
    return [save(fig, out, "vector-tiers")]


CHARTS: dict[str, Callable[[Path], list[Path]]] = {
    "latency-by-size": latency_by_size,
    "recall-vs-latency": recall_vs_latency,
    "ingest-rate": ingest_rate,
    "memory-loop": memory_loop,
    "locomo-by-category": locomo,
    "postgres": postgres,
    "federation": federation,
    "vector-tiers": vector_tiers,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the SVG files go (default {OUT})")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, draw in CHARTS.items():
        written = draw(args.out)
        if written:
            for path in written:
                print(f"wrote {path}")
        else:
            print(f"skipped {name}: its figures are not in {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

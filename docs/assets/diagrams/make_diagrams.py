"""Write the guide's diagrams: ``python docs/assets/diagrams/make_diagrams.py`` (no dependencies).

Each diagram is plain SVG with a transparent background. Every piece of text sits on a
light shape of its own (a box or a label pill) and the lines are mid-contrast, so one file
reads on the light and on the dark (slate) scheme alike. The output is deterministic: rerun
it after changing a diagram and commit the SVG it writes.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

HERE = Path(__file__).resolve().parent
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
LINE = "#7986cb"  # mid indigo: visible on white and on Material's slate
#: kind -> (fill, stroke, text)
KINDS = {
    "host": ("#f3e5f5", "#8e24aa", "#4a148c"),
    "facade": ("#e8eaf6", "#3f51b5", "#1a237e"),
    "core": ("#e3f2fd", "#1e88e5", "#0d47a1"),
    "leg": ("#e0f2f1", "#00897b", "#004d40"),
    "tier": ("#fff3e0", "#ef6c00", "#4e2600"),
    "store": ("#eceff1", "#607d8b", "#263238"),
    "loop": ("#fce4ec", "#d81b60", "#880e4f"),
    "warn": ("#ffebee", "#e53935", "#b71c1c"),
    "pill": ("#eceff1", "#b0bec5", "#37474f"),
}


class Svg:
    """A tiny SVG builder: boxes, label pills, dashed groups and arrows."""

    def __init__(self, width: int, height: int, title: str) -> None:
        self.width, self.height, self.title = width, height, title
        self.parts: list[str] = []

    def group(self, x: float, y: float, w: float, h: float, label: str) -> None:
        """A dashed frame with its label in a pill on the top edge."""
        self.parts.append(
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="10" fill="none" '
            f'stroke="#90a4ae" stroke-width="1.5" stroke-dasharray="6 4"/>'
        )
        self.pill(x + 14, y - 11, label, anchor="start")

    def box(self, x: float, y: float, w: float, h: float, title: str, sub: str = "", kind: str = "core") -> None:
        """A rounded box with a bold title and up to two lines of smaller text (``sub`` split on ``|``)."""
        fill, stroke, text = KINDS[kind]
        self.parts.append(
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.5"/>'
        )
        lines = [s for s in sub.split("|") if s]
        top = y + h / 2 - (len(lines) * 15) / 2 + 5
        self.parts.append(
            f'<text x="{x + w / 2}" y="{top}" text-anchor="middle" font-size="14" font-weight="600" '
            f'fill="{text}">{escape(title)}</text>'
        )
        for i, line in enumerate(lines):
            self.parts.append(
                f'<text x="{x + w / 2}" y="{top + 16 + i * 15}" text-anchor="middle" font-size="11.5" '
                f'fill="{text}">{escape(line)}</text>'
            )

    def pill(self, x: float, y: float, label: str, anchor: str = "middle", kind: str = "pill") -> None:
        """A small label on a light rounded background (readable on any page colour)."""
        fill, stroke, text = KINDS[kind]
        w = 6.6 * len(label) + 14
        left = x - w / 2 if anchor == "middle" else x
        self.parts.append(
            f'<rect x="{left}" y="{y}" width="{w}" height="22" rx="11" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1"/>'
        )
        self.parts.append(
            f'<text x="{left + w / 2}" y="{y + 15}" text-anchor="middle" font-size="11.5" fill="{text}">'
            f"{escape(label)}</text>"
        )

    def arrow(
        self, points: list[tuple[float, float]], label: str = "", dashed: bool = False, both: bool = False
    ) -> None:
        """A polyline with an arrow head at its end (and its start with ``both``), an optional label mid-way."""
        d = " ".join(f"{x},{y}" for x, y in points)
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        start = ' marker-start="url(#head)"' if both else ""
        self.parts.append(
            f'<polyline points="{d}" fill="none" stroke="{LINE}" stroke-width="2"{dash}{start} '
            'marker-end="url(#head)"/>'
        )
        if label:
            (x1, y1), (x2, y2) = points[len(points) // 2 - 1], points[len(points) // 2]
            self.pill((x1 + x2) / 2, (y1 + y2) / 2 - 11, label)

    def render(self) -> str:
        """The SVG document."""
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" font-family="{FONT}" role="img" '
            f'aria-label="{escape(self.title)}">\n<title>{escape(self.title)}</title>\n'
            '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{LINE}"/></marker></defs>\n'
        )
        return head + "\n".join(self.parts) + "\n</svg>\n"


def architecture() -> Svg:
    """Facade -> core -> recall legs -> tiers -> storage, with the memory loop beside it."""
    s = Svg(980, 640, "elastic-memory: the layers from your agent down to the file, and the memory loop beside them")
    # the callers
    s.group(20, 20, 620, 86, "your agent")
    for i, (name, sub) in enumerate(
        [
            ("LangChain", "LangGraph"),
            ("LlamaIndex", "chat engines, agents"),
            ("Haystack", "Agent, pipelines"),
            ("MCP clients", "elastic-memory mcp"),
        ]
    ):
        s.box(36 + i * 150, 40, 138, 52, name, sub, "host")
    s.arrow([(330, 106), (330, 128)])
    s.box(
        20,
        130,
        620,
        56,
        "Memory  ·  AsyncMemory",
        "the same methods, sync and async: remember, recall, explain, facts, lessons, graph",
        "facade",
    )
    s.arrow([(330, 186), (330, 206)])
    s.box(
        20,
        208,
        620,
        56,
        "Core",
        "validation, filters, duplicates, scores  ·  the governor budgets RAM, tokens, vectors",
        "core",
    )
    s.arrow([(330, 264), (330, 286)])
    # recall legs
    s.group(20, 296, 620, 96, "recall: hybrid by default")
    s.box(36, 312, 196, 62, "Keyword", "FTS5 BM25|+ RAM tier for frequent terms", "leg")
    s.box(248, 312, 170, 62, "Semantic", "vector tier:|vec0 · ram · ann", "leg")
    s.box(434, 312, 190, 62, "Fusion", "convex + session boosts|+ graph nudge", "leg")
    s.arrow([(418, 343), (432, 343)])
    s.arrow([(134, 374), (134, 384), (529, 384), (529, 376)])
    s.arrow([(330, 392), (330, 416)])
    # tiers
    s.group(20, 428, 620, 86, "tiers: one store, or a federation (Memory.for_agent)")
    for i, (name, sub) in enumerate(
        [("private", "the agent's own file"), ("shared pools", "a team's memory"), ("global", "every agent reads")]
    ):
        s.box(36 + i * 202, 448, 186, 52, name, sub, "tier")
    s.arrow([(330, 514), (330, 538)])
    s.box(20, 540, 300, 70, "One SQLite file", "rows, FTS5, sqlite-vec vectors|the loop's turns, facts, graph", "store")
    s.box(340, 540, 300, 70, "PostgreSQL + pgvector", "a whole store, or the shared tiers|on a server", "store")
    # the memory loop beside it
    s.group(680, 20, 280, 590, "the memory loop, every turn")
    s.box(
        700,
        50,
        240,
        62,
        "build_context(message)",
        "a plan within the token budget:|facts, lessons, past moments",
        "loop",
    )
    s.arrow([(820, 112), (820, 150)], "the plan goes in the prompt")
    s.box(700, 152, 240, 50, "your model answers", "", "host")
    s.arrow([(820, 202), (820, 238)])
    s.box(
        700,
        240,
        240,
        62,
        "record_turn(user, assistant)",
        "~2 ms, no model: transcript,|chunks, rule facts, graph",
        "loop",
    )
    s.arrow([(820, 302), (820, 344)], "queue")
    s.box(
        700,
        346,
        240,
        76,
        "background worker",
        "embeds chunks, summarises sessions,|extracts facts and lessons,|consolidates; yields to the host",
        "loop",
    )
    s.arrow([(820, 422), (820, 470)], "writes")
    s.box(700, 472, 240, 56, "the same store", "found by the next build_context", "store")
    s.arrow([(700, 500), (684, 500), (684, 81), (698, 81)])
    s.arrow([(640, 81), (698, 81)], dashed=True)
    return s


def turn() -> Svg:
    """One turn: build_context before the model call, record_turn after, the worker in between turns."""
    s = Svg(900, 470, "One turn of the memory loop: build_context, the model, record_turn and the background worker")
    s.pill(80, 14, "host (your framework)", kind="pill")
    s.pill(450, 14, "elastic-memory", kind="pill")
    s.pill(780, 14, "background worker", kind="pill")
    s.box(20, 50, 170, 50, "user message", "", "host")
    s.arrow([(190, 75), (318, 75)], "query")
    s.box(
        320,
        44,
        260,
        124,
        "build_context",
        "|".join(
            [
                "one hybrid recall serves every section",
                "profile facts · facts · lessons",
                "past moments · related topics",
                "session summary",
                "trimmed to the token budget",
            ]
        ),
        "loop",
    )
    s.arrow([(320, 140), (190, 140)], "ContextPlan")
    s.box(20, 116, 170, 50, "prompt + plan", "", "host")
    s.arrow([(105, 166), (105, 204)])
    s.box(20, 206, 170, 50, "model call", "the worker runs meanwhile", "host")
    s.arrow([(105, 256), (105, 294)])
    s.box(20, 296, 170, 50, "answer", "", "host")
    s.arrow([(190, 321), (318, 321)], "record_turn")
    s.box(
        320,
        250,
        260,
        142,
        "record_turn",
        "|".join(
            [
                "inline, ~1-3 ms, no model:",
                "transcript row (never rewritten)",
                "chunks, full-text indexed at once",
                "rule facts, cues, entities",
                "guards against poisoning",
            ]
        ),
        "loop",
    )
    s.arrow([(580, 321), (658, 321)], "jobs")
    s.box(
        660,
        230,
        220,
        182,
        "worker",
        "|".join(
            [
                "one task, a bounded queue:",
                "embed chunks",
                "rolling + session summaries",
                "extract facts, lessons (llm)",
                "consolidate when idle",
                "sheds load, loses nothing",
            ]
        ),
        "loop",
    )
    s.arrow([(770, 230), (770, 100), (582, 100)], "vectors, summaries")
    s.box(320, 412, 560, 44, "the store: SQLite file or PostgreSQL", "", "store")
    s.arrow([(450, 392), (450, 410)])
    return s


def federation() -> Svg:
    """Private / pools / global with routing, promotion, breakers and the merge."""
    s = Svg(940, 530, "Federation: writes routed by scope, reads fanned out to every tier behind breakers and merged")
    s.box(300, 20, 340, 58, 'Memory.for_agent("ana", pools=[...])', "the same Memory API", "facade")
    # writes
    s.pill(150, 38, "writes: routed by scope")
    s.arrow([(380, 78), (380, 96), (120, 96), (120, 178)])
    s.arrow([(470, 78), (470, 178)])
    s.arrow([(560, 78), (560, 96), (820, 96), (820, 178)])
    s.pill(120, 130, 'scope="private"')
    s.pill(470, 130, 'scope="shared", pool=')
    s.pill(820, 130, 'scope="global"')
    s.box(20, 180, 200, 70, "private", "the agent's own file|the durability anchor", "tier")
    s.box(330, 180, 280, 70, "shared pools", "one file (or schema) per pool|read and written by a team", "tier")
    s.box(720, 180, 200, 70, "global", "every agent reads|authors or moderators change", "tier")
    s.arrow([(120, 250), (120, 270), (820, 270), (820, 252)], "", dashed=True)
    s.pill(290, 259, "promotion: importance >= 0.9, same id")
    # reads
    for x in (120, 470, 820):
        s.box(x - 90, 300, 180, 56, "breaker + timeout", "ResilientTier", "warn")
        s.arrow([(x, 298), (x, 252)], both=False)
        s.arrow([(x, 356), (x, 384), (470, 384), (470, 400)] if x != 470 else [(x, 356), (x, 400)])
    s.box(
        300,
        402,
        340,
        60,
        "merge",
        "every tier asked at once, the query embedded once|dedupe by id, re-fuse, each hit names its tier",
        "leg",
    )
    s.arrow([(640, 432), (760, 432)])
    s.box(762, 406, 158, 52, "hits", "h.tier", "facade")
    s.pill(120, 470, "a slow tier costs its budget,")
    s.pill(120, 496, "then fails fast once open")
    s.pill(800, 476, "authors come from the identity")
    return s


def vector_tiers() -> Svg:
    """The three vector tiers and how vector_index="auto" picks one."""
    s = Svg(940, 400, "The vector tiers: vec0, ram and ann, and how vector_index auto picks one")
    s.box(320, 18, 300, 52, 'vector_index="auto"', "the governor's RAM budget decides", "facade")
    cols = [
        (
            "vec0",
            "exact scan inside sqlite-vec|no RAM beyond SQLite's cache",
            "100k: 84 ms p50, recall 1.000",
            "the matrix does not fit, or tier LITE",
        ),
        (
            "ram",
            "exact: float32 matrix in RAM|+ float16 shadow, top k proven",
            "100k: 7.8 ms p50, recall 1.000",
            "it fits, below 50,000 vectors",
        ),
        (
            "ann",
            "faiss IVF over 8-bit codes|candidates re-scored exactly",
            "100k: 2.3 ms p50, recall 0.998",
            "50,000 vectors on, faiss installed",
        ),
    ]
    for i, (name, how, fig, when) in enumerate(cols):
        x = 20 + i * 310
        s.arrow([(470, 70), (470, 92), (x + 140, 92), (x + 140, 136)] if i != 1 else [(470, 70), (470, 136)])
        s.pill(x + 140, 102, when)
        s.box(x, 138, 280, 90, name, how, "leg")
        s.pill(x + 140, 240, fig)
    s.box(
        20,
        290,
        900,
        50,
        "the vectors themselves always live in the file (sqlite-vec vec0 rows): the RAM tiers are loaded from it",
        "",
        "store",
    )
    s.pill(470, 356, 'force one: Memory.open(path, vector_index="vec0" | "ram" | "ann")')
    return s


def main() -> None:
    """Write every diagram next to this script."""
    for name, build in {
        "architecture": architecture,
        "turn": turn,
        "federation": federation,
        "vector-tiers": vector_tiers,
    }.items():
        (HERE / f"{name}.svg").write_text(build().render(), encoding="utf-8")
        print(f"wrote {HERE / name}.svg")


if __name__ == "__main__":
    main()

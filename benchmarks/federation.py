"""Federated recall (private + 3 pools + global) beside one store holding the same memories; a stalled tier.

Run from the repository root::

    python benchmarks/federation.py            # 10k memories per tier (50k in all), 300 queries, ~8-9 min on 2 vCPUs
                                               # (3.5-5 min of it embedding the 50k texts once)
    python benchmarks/federation.py --small    # 2k per tier (10k in all), 100 queries, ~1.5 min

**Corpus.** Generated English sentences (fixed seed), memory-like facts from 30 templates
("Nadia is allergic to peanuts, so avoid ordering it for the team lunch.", "The Atlas
deployment failed on Tuesday because the scheduler ran out of disk space.") with real
words in every slot: 150 names, 60 cities, 60 project code names, foods, tools, weekdays...
All sentences are distinct. Each query is the question form of one stored sentence's
template, filled with that sentence's slots ("what is Nadia allergic to"), so each query
has a source memory; queries are spread over every tier.

**Embedder.** The built-in :class:`elastic_memory.MiniLMEmbedder` (what ``embedder="auto"``
resolves to: all-MiniLM-L6-v2 int8, offline), one instance behind a switchable in-process
memo. Every text is embedded once by the model, in batches, and the vectors are written
with the rows through ``remember_many(items, dedupe=False, vectors=...)`` on each tier's
``MemoryCore`` (caller-computed vectors are stored as given), so the ingest does not embed
100k texts (50k for the federation, the same 50k for the single store). Ingest time is not measured.

**Stores.** The federation is ``Memory.for_agent("bench-agent", home=tmp, pools=["research",
"support", "ops"], embedder=...)``: private, ``shared:research``, ``shared:support``,
``shared:ops`` and ``global`` tiers, N memories each (scope and pool set accordingly).
The single store is ``Memory.open(tmp/single.db, embedder=...)`` holding the same rows
(same ids, scopes, pools). No session ids, so the single store's session-neighbour boost
has nothing to boost and the hybrid rankings compare fusion with fusion.

**Recall.** ``mem.explain(query, k=10, mode=...)`` on both, wall time around the call,
keyword / semantic / hybrid, every probe interleaved query by query in rotating order,
after separate warm-up queries. Two regimes: query embedding excluded (the memo holds every
query's vector, so each embed is a dict lookup, as the other benchmarks exclude
``embed_ms``), and end to end with the model (memo off: each store embeds the query itself).
"overlap" is the mean share of the single store's top-10 ids found in the federation's
top-10; "source@10" the share of queries whose source memory is in the top 10.

**Stall.** A second federation over the same files, with the ``shared:support`` pool wrapped
in a store whose ``search`` sleeps 10 s (a tier that does not answer), under
``TierBudget(read_timeout_ms=250, semantic_timeout_ms=250)``. Measured interleaved query by
query against the healthy federation (hybrid, memo on): with the breaker held closed
(``fail_threshold`` huge: every read waits for the timeout), then with the default breaker
(``fail_threshold=3``, ``reset_after_s=30``): the first reads, then the reads once it is open.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _common import RESULTS, environment, percentile, run_block, section, table, write_json
from elastic_memory import Memory, MiniLMEmbedder
from elastic_memory import _runner as runner
from elastic_memory.federation import CoreStore, Entry, MemoryStore, TierBudget, TierHealth
from elastic_memory.storage.sqlite.driver import driver
from elastic_memory.types import Hit, MemoryId, MemoryRecord

F32 = npt.NDArray[np.float32]
SEED = 20261201
K = 10
AGENT = "bench-agent"
POOLS = ("research", "support", "ops")
STALLED_POOL = "support"
MODES = ("keyword", "semantic", "hybrid")
WARMUP = 10
BATCH = 1000

# ------------------------------------------------------------------------------ corpus

_WORDS: dict[str, list[str]] = {
    "name": (
        "Nadia Omar Priya Lukas Sofia Mateo Aisha Kenji Elena Tomas Fatima Jonas Mei Arjun Clara Diego Yara Henrik "
        "Leila Marco Ingrid Kwame Amara Felix Noor Rafael Hana Samuel Lina Viktor Zara Emeka Chloe Ivan Rosa Tariq "
        "Anya Bruno Keiko Malik Greta Pablo Sana Oskar Imani Luca Farah Nils Esme Hugo Wen Dmitri Ada Theo Salma "
        "Jasper Mira Andre Lucia Ravi Freya Emil Nia Sebastian Alma Youssef Ines Caleb Hiroshi Vera Nikolai Zoe "
        "Adrian Leah Karim Maya Stefan Olga Isaac Rania Finn Carmen Jamal Heidi Ezra Paula Kofi Astrid Mario Selin "
        "Gustav Layla Tobias Bianca Sami Liv Martin Alina Joel Yasmin Erik Dalia Aaron Petra Omari Sara Leon Daria "
        "Victor Naomi Felipe Hannah Ali Julia Rohan Eva Mikael Tara Simon Lena Moses Ruth Pedro Ilse Kai Aylin "
        "Georg Nora Hassan Elin Abel Chiara Idris Beatriz Otto Mina Ruben Sigrid Jude Amira Lars Celia Ibrahim"
    ).split(),
    "city": (
        "Lisbon Porto Madrid Valencia Lyon Marseille Berlin Hamburg Munich Vienna Prague Krakow Warsaw Budapest "
        "Zagreb Athens Istanbul Cairo Nairobi Lagos Accra Casablanca Tunis Dubai Mumbai Pune Delhi Chennai Colombo "
        "Bangkok Hanoi Singapore Jakarta Manila Seoul Osaka Tokyo Taipei Sydney Melbourne Auckland Santiago Lima "
        "Bogota Quito Mexico Toronto Montreal Vancouver Chicago Boston Denver Seattle Austin Dublin Edinburgh "
        "Oslo Stockholm Helsinki Copenhagen"
    ).split(),
    "project": (
        "Atlas Borealis Cascade Delta Ember Falcon Granite Harbor Indigo Juniper Kestrel Lantern Meridian Nimbus "
        "Orchid Pioneer Quartz Raven Sierra Tundra Umbra Vertex Willow Xenon Yonder Zephyr Aurora Beacon Cobalt "
        "Dune Echo Fjord Glacier Helix Iris Jade Kite Lotus Mosaic Nova Onyx Prism Quill Ripple Saffron Tidal "
        "Unity Velvet Wren Yarrow Zenith Anchor Bramble Cinder Drift Flint Grove Hollow"
    ).split(),
    "food": (
        "peanuts shellfish gluten dairy eggs sesame soy walnuts almonds cashews strawberries kiwi mustard celery "
        "shrimp lobster oats garlic mushrooms tomatoes"
    ).split(),
    "dish": (
        "ramen pizza sushi tacos dumplings paella curry falafel risotto pho burritos lasagna bibimbap shakshuka "
        "pierogi empanadas moussaka biryani ceviche goulash"
    ).split(),
    "drink": "espresso green tea oat latte black coffee chai hot chocolate matcha mint tea cold brew".split(),
    "weekday": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(),
    "hour": "8:30 9:00 9:30 10:00 10:30 11:00 13:00 14:00 14:30 15:00 16:00 16:30 17:00".split(),
    "month": "January February March April May June July August September October November December".split(),
    "component": (
        "scheduler database ingest worker cache layer search index auth service billing queue load balancer "
        "payment gateway notification service report builder api gateway object store message broker"
    ).split(" "),
    "resource": "disk space memory file handles connections threads CPU quota inodes".split(" "),
    "meeting": "standup retrospective planning review design review sprint demo budget review all-hands".split(" "),
    "relative": "sister brother mother father grandmother grandfather cousin aunt uncle daughter son".split(),
    "doc": "shared drive wiki page design doc spreadsheet notebook slide deck tracker".split(" "),
    "book": (
        "Thinking Fast and Slow|The Pragmatic Programmer|Sapiens|Atomic Habits|The Design of Everyday Things|"
        "Deep Work|The Mythical Man-Month|Educated|The Body Keeps the Score|Range|Quiet|The Checklist Manifesto|"
        "Factfulness|Project Hail Mary|The Overstory|Braiding Sweetgrass"
    ).split("|"),
    "topic": (
        "decision making|software craft|human history|habit change|product design|focus|project management|"
        "learning|health|careers|introversion|safety|statistics|space travel|trees|ecology"
    ).split("|"),
    "vehicle": "car van motorbike camper bicycle scooter".split(),
    "service": "tyre change|oil change|brake check|new battery|full service|wheel alignment".split("|"),
    "instrument": "piano guitar violin cello drums saxophone flute trumpet ukulele harp".split(),
    "pet": "dog cat rabbit parrot tortoise hamster".split(),
    "petname": (
        "Biscuit Pepper Mochi Luna Olive Rocket Pickle Maple Juno Ziggy Noodle Clover Pumpkin Socks Waffles Ginger"
    ).split(),
    "team": "platform data mobile security infrastructure payments search growth design support".split(),
    "metric": "p99 latency|p95 latency|error rate|queue depth|cold start time|page load time".split("|"),
    "sport": "running cycling swimming climbing rowing tennis badminton volleyball".split(),
    "place": "office|library|gym|studio|warehouse|lab|front desk|coworking space".split("|"),
    "place2": "food bank|animal shelter|community garden|youth centre|hospital|museum|public library".split("|"),
    "language": "Python Rust Go TypeScript Kotlin Java Elixir Scala Swift".split(),
    "tool": "Bazel Gradle Maven Make Nix Cargo Poetry Webpack Vite".split(),
    "human_language": "Spanish French German Portuguese Japanese Arabic Hindi Turkish Dutch Italian".split(),
    "symptom": "back pain|headaches|jet lag|a sore throat|insomnia|dizziness|knee pain|stomach trouble".split("|"),
    "restaurant": (
        "the corner bistro|a tiny stall near the station|the place by the river|the market hall|"
        "a family diner downtown|the rooftop cafe|the old harbour tavern"
    ).split("|"),
    "item": "printer paper|coffee beans|whiteboard markers|laptop chargers|name badges|batteries|snacks".split("|"),
    "store": "the office supplier|the hardware shop|the online store|the wholesale market|the stationer".split("|"),
    "room": "kitchen|bedroom|living room|hallway|study|bathroom".split("|"),
    "color": "blue green yellow grey white teal orange olive".split(),
    "number": "10 15 20 25 30 40 50 75 100 150 200 250 300".split(),
    "race": "half marathon|marathon|10k race|trail race|triathlon".split("|"),
    "hobby": "hiking fishing birdwatching sketching kayaking camping photography".split(),
}

_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("{name} prefers {drink} in the morning and always asks for it at the {place}.",
     "what does {name} like to drink in the morning"),
    ("The {project} deployment failed on {weekday} because the {component} ran out of {resource}.",
     "why did the {project} deployment fail"),
    ("{name} is allergic to {food}, so avoid ordering {dish} with it for the team lunch.",
     "what is {name} allergic to"),
    ("We moved the {meeting} to {weekday} at {hour} so that {name} can join from {city}.",
     "when is the {meeting} that {name} joins from {city}"),
    ("{name}'s {relative} lives in {city} and comes to visit every {month}.",
     "where does {name}'s {relative} live"),
    ("The design notes for {project} are in the {doc} that {name} shared last {weekday}.",
     "where are the design notes for {project}"),
    ("{name} recommended the book {book} to anyone interested in {topic}.",
     "which book did {name} recommend about {topic}"),
    ("The {vehicle} needs a {service} before the road trip to {city} in {month}.",
     "what does the {vehicle} need before the trip to {city}"),
    ("{name} has been learning to play the {instrument} and practises every {weekday} evening.",
     "which instrument is {name} learning"),
    ("{name} adopted a {pet} called {petname} from the shelter in {city}.",
     "what is the name of {name}'s {pet}"),
    ("Our {team} team agreed to keep {metric} under {number} milliseconds for the {project} API.",
     "what {metric} target did the {team} team set for {project}"),
    ("{name} runs a {sport} club on {weekday} mornings near the {place}.",
     "when does {name}'s {sport} club meet"),
    ("The {project} service is written in {language} and is built with {tool}.",
     "what language is the {project} service written in"),
    ("{name} complained about {symptom} after the long flight back from {city}.",
     "how did {name} feel after the flight from {city}"),
    ("The best {dish} in {city} is at {restaurant}, according to {name}.",
     "where can I get good {dish} in {city}"),
    ("{name} will be on leave from {weekday} until the end of {month} for a trip to {city}.",
     "when is {name} on leave"),
    ("Remember to order more {item} from {store} before the {meeting} on {weekday}.",
     "what should we order before the {meeting}"),
    ("{name} painted the {room} {color} last {month} and still dislikes the result.",
     "what colour did {name} paint the {room}"),
    ("The budget for {project} was cut by {number} percent after the review with {name}.",
     "how much was the {project} budget cut"),
    ("{name} and {name2} are pairing on the {component} rewrite for {project}.",
     "who is working on the {component} rewrite for {project}"),
    ("{name} keeps the spare key to the {place} in the {color} box under the desk.",
     "where does {name} keep the spare key"),
    ("{name} wants replies in {human_language} and prefers short summaries over long reports.",
     "which language does {name} want replies in"),
    ("{name} volunteers at the {place2} in {city} on the first {weekday} of each month.",
     "where does {name} volunteer"),
    ("The {component} alert for {project} fires when the {metric} stays above {number} for five minutes.",
     "when does the {component} alert for {project} fire"),
    ("{name} moved from {city} to {city2} in {month} to be closer to their {relative}.",
     "why did {name} move to {city2}"),
    ("{name} is training for a {race} in {city} and runs {number} kilometres a week.",
     "what race is {name} training for"),
    ("The quarterly {meeting} with the {team} team is hosted by {name} in the {room}.",
     "who hosts the quarterly {meeting} with the {team} team"),
    ("{name} stopped drinking {drink} after the doctor mentioned {symptom}.",
     "why did {name} stop drinking {drink}"),
    ("For {project}, {name} prefers {tool} over {tool2} because the builds are faster.",
     "which build tool does {name} prefer for {project}"),
    ("{name}'s favourite {hobby} spot is near the {place2} just outside {city}.",
     "where does {name} like to go {hobby}"),
)  # fmt: skip


@dataclass
class Corpus:
    """Distinct sentences with ids and types; queries with the index of their source sentence."""

    texts: list[str]
    ids: list[str]
    types: list[str]
    queries: list[str]
    sources: list[int]


def _fill(template: str, slots: Mapping[str, str]) -> str:
    text = template.format(**slots)
    return text[0].upper() + text[1:]


def make_corpus(n: int, n_queries: int, seed: int = SEED) -> Corpus:
    """``n`` distinct template sentences and ``n_queries`` questions about randomly chosen ones."""
    rng = random.Random(seed)
    texts: list[str] = []
    slot_sets: list[tuple[int, dict[str, str]]] = []
    seen: set[str] = set()
    while len(texts) < n:
        t = rng.randrange(len(_TEMPLATES))
        slots = {key: rng.choice(words) for key, words in _WORDS.items()}
        slots["name2"] = rng.choice([w for w in _WORDS["name"] if w != slots["name"]][:60])
        slots["city2"] = rng.choice(_WORDS["city"])
        slots["tool2"] = rng.choice([w for w in _WORDS["tool"] if w != slots["tool"]])
        text = _fill(_TEMPLATES[t][0], slots)
        if text in seen:
            continue
        seen.add(text)
        texts.append(text)
        slot_sets.append((t, slots))
    sources = rng.sample(range(n), n_queries)
    queries = [_fill(_TEMPLATES[slot_sets[i][0]][1], slot_sets[i][1]) for i in sources]
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n)]
    types = rng.choices(["semantic", "episodic", "procedural"], weights=[5, 3, 2], k=n)
    return Corpus(texts, ids, types, queries, sources)


# ---------------------------------------------------------------------------- embedder


class SwitchableMemo:
    """The built-in model behind an in-process memo that can be switched off (same model_id, family, dimension).

    ``memo=True``: a text seen before is a dict lookup. ``memo=False``: every call reaches
    the model (and the memo is not consulted). ``model_calls`` counts calls that reached it.
    """

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.family = inner.family
        self.dimension = inner.dimension
        self.memo = True
        self._memo: dict[str, F32] = {}
        self.model_calls = 0

    def warm(self, texts: Sequence[str], batch: int = 2048) -> float:
        """Embed ``texts`` with the model, in batches, into the memo; the seconds it took."""
        t = time.perf_counter()
        todo = [x for x in dict.fromkeys(texts) if x not in self._memo]
        for lo in range(0, len(todo), batch):
            chunk = todo[lo : lo + batch]
            self._memo.update(zip(chunk, self.inner.embed(chunk), strict=True))
        return time.perf_counter() - t

    def vectors(self, texts: Sequence[str]) -> list[F32]:
        """The memoised vectors of ``texts`` (warm them first)."""
        return [self._memo[x] for x in texts]

    def embed(self, texts: Sequence[str]) -> F32:
        if self.memo and all(x in self._memo for x in texts):
            if not texts:
                return np.zeros((0, self.dimension), dtype=np.float32)
            return np.stack([self._memo[x] for x in texts])
        self.model_calls += 1
        return self.inner.embed(texts)


# ------------------------------------------------------------------------------ stores


class StallingStore:
    """A tier whose ``search`` does not answer for ``stall_s`` seconds (a hung network store); the rest delegates."""

    def __init__(self, inner: MemoryStore, stall_s: float) -> None:
        self.inner = inner
        self.name = inner.name
        self.stall_s = stall_s
        self.searches = 0

    async def search(
        self, query: str = "", *, k: int = 10, mode: str = "hybrid", filters: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        self.searches += 1
        await asyncio.sleep(self.stall_s)
        return await self.inner.search(query, k=k, mode=mode, filters=filters)

    async def write(self, entries: Sequence[Entry]) -> list[MemoryId]:
        return await self.inner.write(entries)

    async def get(self, ids: Sequence[str]) -> list[MemoryRecord]:
        return await self.inner.get(ids)

    async def delete(self, ids: Sequence[str], *, hard: bool = False) -> int:
        return await self.inner.delete(ids, hard=hard)

    async def health_check(self) -> TierHealth:
        return await self.inner.health_check()

    async def aclose(self) -> None:
        await self.inner.aclose()


def tier_fields(tier: str) -> dict[str, Any]:
    """The scope/pool fields of a row stored in ``tier``."""
    if tier == "private":
        return {"scope": "private"}
    if tier == "global":
        return {"scope": "global"}
    return {"scope": "shared", "pool": tier.removeprefix("shared:")}


def write_rows(core: Any, corpus: Corpus, indices: Sequence[int], fields: dict[str, Any], emb: SwitchableMemo) -> None:
    """Rows ``indices`` of the corpus into ``core`` with their precomputed vectors, batch by batch."""
    for lo in range(0, len(indices), BATCH):
        part = indices[lo : lo + BATCH]
        items = [{"content": corpus.texts[i], "id": corpus.ids[i], "type": corpus.types[i], **fields} for i in part]
        vectors = emb.vectors([corpus.texts[i] for i in part])
        runner.run(core.remember_many(items, dedupe=False, vectors=vectors), "write")


def open_federation(home: Path, emb: SwitchableMemo, on_degraded: Callable[[Any], None] | None = None) -> Memory:
    return Memory.for_agent(AGENT, home=home, pools=list(POOLS), embedder=emb, on_degraded=on_degraded)


def tier_cores(mem: Memory) -> dict[str, Any]:
    """Tier name -> its MemoryCore (every tier of a for_agent federation is a SQLite file)."""
    fed = mem.federation
    assert fed is not None
    out = {}
    for ref in fed.tiers:
        inner = ref.store.inner
        assert isinstance(inner, CoreStore), ref
        out[ref.name] = inner.core
    return out


# ------------------------------------------------------------------------------ probes


@dataclass
class Probe:
    """One measured operation: ``run(i)`` serves query ``i``, returns timings (ms) and the top ids."""

    name: str
    run: Callable[[int], tuple[dict[str, float], list[str]]]
    samples: dict[str, list[float]] = field(default_factory=dict)
    tops: dict[int, list[str]] = field(default_factory=dict)

    def p(self, key: str = "ms", q: float = 50) -> float:
        return percentile(self.samples.get(key, []), q)


def measure(probes: Sequence[Probe], queries: Sequence[int], warmup: Sequence[int]) -> None:
    """Warm up on ``warmup``, then serve ``queries`` through every probe, rotating the order per query."""
    for i in warmup:
        for probe in probes:
            probe.run(i)
    for n, i in enumerate(queries):
        shift = n % len(probes)
        for probe in [*probes[shift:], *probes[:shift]]:
            values, top = probe.run(i)
            for key, value in values.items():
                probe.samples.setdefault(key, []).append(value)
            probe.tops[i] = top


def single_probe(name: str, mem: Memory, queries: Sequence[str], mode: str, emb: SwitchableMemo) -> Probe:
    def run(i: int) -> tuple[dict[str, float], list[str]]:
        calls = emb.model_calls
        t = time.perf_counter()
        ex = mem.explain(queries[i], k=K, mode=mode)
        wall = (time.perf_counter() - t) * 1000
        calls = emb.model_calls - calls
        if ex.effective_mode.value != mode:
            raise RuntimeError(f"{name}: recall degraded to {ex.effective_mode.value}: {ex.details.get('degraded')}")
        d = ex.details
        return {
            "ms": wall,
            "total": d["total_ms"],
            "embed": d.get("embed_ms", math.nan),
            "calls": float(calls),
            "hits": float(len(ex.hits)),
        }, [h.id for h in ex.hits]

    return Probe(name, run)


def federated_probe(
    name: str, mem: Memory, queries: Sequence[str], mode: str, emb: SwitchableMemo, *, strict: bool = True
) -> Probe:
    def run(i: int) -> tuple[dict[str, float], list[str]]:
        calls = emb.model_calls
        t = time.perf_counter()
        ex = mem.explain(queries[i], k=K, mode=mode)
        wall = (time.perf_counter() - t) * 1000
        calls = emb.model_calls - calls
        d = ex.details["federation"]
        if strict and d["degraded"]:
            raise RuntimeError(f"{name}: tiers degraded: {d['degraded']}")
        tier_ms = [v["ms"] for v in d["tiers"].values()]
        return {
            "ms": wall,
            "slowest": max(tier_ms),
            "sum": sum(tier_ms),
            "merge": d["merge_ms"],
            "rank": d["merge_ms"] - max(tier_ms),
            "degraded": float(len(d["degraded"])),
            "calls": float(calls),
            "hits": float(len(ex.hits)),
        }, [h.id for h in ex.hits]

    return Probe(name, run)


def tier_call(core: Any, queries: Sequence[str], mode: str) -> Callable[[int], tuple[dict[str, float], list[str]]]:
    """One tier's own recall, as the federation asks it (2k hits, no access recorded): wall ms and the ids."""

    def run(i: int) -> tuple[dict[str, float], list[str]]:
        t = time.perf_counter()
        ex = runner.run(core.explain(queries[i], k=2 * K, mode=mode, touch=False), "explain")
        return {"ms": (time.perf_counter() - t) * 1000}, [h.id for h in ex.hits]

    return run


def recall_call(mem: Memory, queries: Sequence[str]) -> Callable[[int], tuple[dict[str, float], list[str]]]:
    """``mem.recall`` in hybrid mode (records access: the default): wall ms and the ids."""

    def run(i: int) -> tuple[dict[str, float], list[str]]:
        t = time.perf_counter()
        hits = mem.recall(queries[i], k=K, mode="hybrid")
        return {"ms": (time.perf_counter() - t) * 1000}, [h.id for h in hits]

    return run


def overlap(a: Mapping[int, list[str]], b: Mapping[int, list[str]]) -> float:
    """Mean share of ``b``'s top-k found in ``a``'s top-k over the queries both served."""
    keys = [i for i in a if b.get(i)]
    return float(np.mean([len(set(a[i]) & set(b[i])) / len(b[i]) for i in keys])) if keys else math.nan


def tie_aware_overlap(single: Memory, queries: Sequence[str], fed: Mapping[int, list[str]], mode: str) -> float:
    """Like :func:`overlap`, counting a federated hit that ties the single store's 10th score as agreeing.

    Template sentences tie often (every "X runs a volleyball club ..." has the same BM25),
    and tied hits may be cut at rank 10 in any order. The single store's own scores come from
    a k=50 recall (the same candidates and scores as k=10: both legs fetch max(50, k)).
    """
    shares = []
    for i, top in fed.items():
        hits = single.explain(queries[i], k=5 * K, mode=mode).hits
        if len(hits) < K:
            continue
        scores = {h.id: h.score for h in hits}
        floor = hits[K - 1].score - 1e-9 * max(1.0, abs(hits[K - 1].score))
        shares.append(sum(scores.get(x, -math.inf) >= floor for x in top) / K)
    return float(np.mean(shares)) if shares else math.nan


def touched(path: Path) -> set[str]:
    """Ids whose access was ever recorded in the file at ``path``."""
    conn = driver().connect(str(path), timeout=5)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM memories WHERE access_count > 0")}
    finally:
        conn.close()


def source_at_k(tops: Mapping[int, list[str]], corpus: Corpus) -> float:
    """Share of queries whose source memory is among the top-k."""
    return float(np.mean([corpus.ids[corpus.sources[i]] in top for i, top in tops.items()])) if tops else math.nan


# -------------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--per-tier", type=int, default=10_000, help="memories per tier (default 10000; 5 tiers)")
    parser.add_argument("--queries", type=int, default=300, help="measured queries per probe (default 300)")
    parser.add_argument("--stall-queries", type=int, default=100, help="measured reads per stall phase (default 100)")
    parser.add_argument("--stall-budget-ms", type=float, default=250.0, help="the stalled pool's timeouts (250)")
    parser.add_argument("--small", action="store_true", help="2k per tier, 100 queries, 40 stall reads")
    parser.add_argument(
        "--json", type=Path, help=f"also write the figures here (for charts.py: {RESULTS}/federation.json)"
    )
    args = parser.parse_args(argv)
    if args.small:
        args.per_tier, args.queries, args.stall_queries = 2_000, 100, 40
    started = time.perf_counter()
    print("elastic-memory benchmark: federated recall vs one store, and a stalled tier")
    for line in environment():
        print(line)
    log = logging.getLogger("elastic_memory.federation")  # a degraded read logs a warning: keep its cost, not its noise
    log.addHandler(logging.NullHandler())
    log.propagate = False

    per_tier = args.per_tier
    tiers = ["private", *(f"shared:{p}" for p in POOLS), "global"]
    total = per_tier * len(tiers)
    n_q = args.queries + WARMUP
    corpus = make_corpus(total, max(n_q, args.stall_queries + 2 * WARMUP))
    measured = list(range(WARMUP, n_q))
    warmup = list(range(WARMUP))

    section("Setup")
    emb = SwitchableMemo(MiniLMEmbedder())
    t = time.perf_counter()
    emb.inner.embed(["load the model"])
    load_s = time.perf_counter() - t
    embed_s = emb.warm(corpus.texts)
    query_s = emb.warm(corpus.queries)
    print(
        f"corpus: {total:,} distinct generated sentences ({len(_TEMPLATES)} templates, mean "
        f"{np.mean([len(x.split()) for x in corpus.texts]):.1f} words), {per_tier:,} per tier x {len(tiers)} tiers; "
        f"{len(corpus.queries)} questions (e.g. {corpus.queries[0]!r} for {corpus.texts[corpus.sources[0]]!r})"
    )
    print(
        f"embedder {emb.model_id}: model load {load_s:.1f} s; {total:,} texts embedded once in {embed_s:.0f} s "
        f"({total / embed_s:.0f} texts/s), queries {query_s:.1f} s. The rows are written with these vectors "
        "(remember_many(..., vectors=...)), so the stores do not embed them again."
    )

    workdir = Path(tempfile.mkdtemp(prefix="em-federation-"))
    home = workdir / "home"
    single_path = workdir / "single.db"
    try:
        t = time.perf_counter()
        fed = open_federation(home, emb)
        single = Memory.open(single_path, agent_id=AGENT, embedder=emb)
        cores = tier_cores(fed)
        assert list(cores) == tiers, list(cores)
        for n, name in enumerate(tiers):
            indices = list(range(n, total, len(tiers)))  # tier n holds every 5th sentence
            write_rows(cores[name], corpus, indices, tier_fields(name), emb)
            write_rows(single._core, corpus, indices, tier_fields(name), emb)
        fed.close()
        single.close()
        print(f"ingest (vectors supplied, not measured): {time.perf_counter() - t:.0f} s for {2 * total:,} rows")

        # ------------------------------------------------------------------ reopen, cold first query
        t = time.perf_counter()
        single = Memory.open(single_path, agent_id=AGENT, embedder=emb)
        single_open = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        fed = open_federation(home, emb)
        fed_open = (time.perf_counter() - t) * 1000
        first_q = corpus.queries[-1]
        t = time.perf_counter()
        single.explain(first_q, k=K, mode="semantic")
        single_first = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        fed.explain(first_q, k=K, mode="semantic")
        fed_first = (time.perf_counter() - t) * 1000
        counts = {name: s.get("active_memories") for name, s in fed.stats()["tiers"].items()}
        print(f"federation tiers (active memories): {counts}; single store: {single.stats()['active_memories']:,}")
        print(
            f"reopen: Memory.open {single_open:.0f} ms, Memory.for_agent {fed_open:.0f} ms; first semantic query "
            f"(loads the RAM vector index: one of {total:,} vectors vs five of {per_tier:,}): single "
            f"{single_first:.0f} ms, federation {fed_first:.0f} ms"
        )

        # ------------------------------------------------------------------ recall, embedding excluded
        section(f"Recall: federation of 5 x {per_tier:,} vs one store of {total:,}, k={K}")
        emb.memo = True
        probes: dict[tuple[str, str, str], Probe] = {}
        for mode in MODES:
            probes[("excl", "single", mode)] = single_probe(f"single {mode}", single, corpus.queries, mode, emb)
            probes[("excl", "fed", mode)] = federated_probe(f"federation {mode}", fed, corpus.queries, mode, emb)
        private = tier_cores(fed)["private"]
        alone = {mode: Probe(f"one tier alone {mode}", tier_call(private, corpus.queries, mode)) for mode in MODES}
        t = time.perf_counter()
        measure([*(p for key, p in probes.items() if key[0] == "excl"), *alone.values()], measured, warmup)
        memo_s = time.perf_counter() - t

        # ------------------------------------------------------------------ recall, end to end with the model
        emb.memo = False
        t = time.perf_counter()
        for mode in ("semantic", "hybrid"):  # one pass per mode: a store's own query memo must not serve the 2nd
            probes[("with", "single", mode)] = single_probe(f"single {mode}", single, corpus.queries, mode, emb)
            probes[("with", "fed", mode)] = federated_probe(f"federation {mode}", fed, corpus.queries, mode, emb)
            measure([probes[("with", "single", mode)], probes[("with", "fed", mode)]], measured, [])
        e2e_s = time.perf_counter() - t
        emb.memo = True

        t = time.perf_counter()
        ties = {
            (regime, mode): tie_aware_overlap(single, corpus.queries, probes[(regime, "fed", mode)].tops, mode)
            for regime, _, mode in probes
            if _ == "fed"
        }
        ties_s = time.perf_counter() - t
        regimes = {"excl": "query embedding excluded", "with": "with the query embedding"}
        rows = []
        for (regime, who, mode), f in probes.items():
            if who != "fed":
                continue
            s = probes[(regime, "single", mode)]
            rows.append(
                [
                    f"{mode}, {regimes[regime]}",
                    s.p(),
                    s.p("ms", 95),
                    f.p(),
                    f.p("ms", 95),
                    f"{f.p() / s.p():.2f}x",
                    f"{f.p('ms', 95) / s.p('ms', 95):.2f}x",
                    overlap(f.tops, s.tops),
                    ties[(regime, mode)],
                    source_at_k(s.tops, corpus),
                    source_at_k(f.tops, corpus),
                ]
            )
        print(
            table(
                f"Recall latency, wall ms around mem.explain, {len(measured)} queries, probes interleaved query by "
                "query; ratio = federation / single; overlap = share of the single store's top-10 in the federation's "
                "(+ties: a hit tied with the single store's 10th score counts); source@10 = the query's source memory "
                "in the top 10",
                [
                    "mode",
                    "single p50",
                    "single p95",
                    "fed p50",
                    "fed p95",
                    "p50 ratio",
                    "p95 ratio",
                    "overlap",
                    "+ties",
                    "source@10 single",
                    "source@10 fed",
                ],
                rows,
            )
        )
        breakdown = []
        for (regime, who, mode), f in probes.items():
            if who != "fed":
                continue
            s = probes[(regime, "single", mode)]
            breakdown.append(
                [
                    f"{mode}, {regimes[regime]}",
                    s.p("total"),
                    s.p("embed"),
                    s.p("calls"),
                    alone[mode].p() if regime == "excl" else math.nan,
                    f.p("slowest"),
                    f.p("sum"),
                    f.p("rank"),
                    f.p() - f.p("merge"),
                    f.p("calls"),
                    f.p("hits"),
                ]
            )
        print(
            table(
                "Where the time goes (p50 ms): single 'total' = its details total_ms, 'embed' its embed_ms; 'one tier "
                f"alone' = the private tier's own recall of {2 * K} hits (what the federation asks a tier), wall; fed "
                "'slowest tier' / 'sum of tiers' = per-tier search times as the federation saw them (the tiers run "
                "concurrently); 'merge' = merge_ms minus the slowest tier (gather + dedupe + re-fusion); 'facade' = "
                "wall minus merge_ms; 'model calls' = embedding-model calls per query (p50)",
                [
                    "mode",
                    "single total",
                    "single embed",
                    "single model calls",
                    "one tier alone",
                    "fed slowest tier",
                    "fed sum of tiers",
                    "fed merge",
                    "fed facade",
                    "fed model calls",
                    "fed hits",
                ],
                breakdown,
            )
        )
        print(
            f"recall measurements: {memo_s:.0f} s excl. embedding, {e2e_s:.0f} s with the model, "
            f"tie check {ties_s:.0f} s (not timed)"
        )

        # ------------------------------------------------------------------ stall
        section(f"Stall: shared:{STALLED_POOL} sleeps 10 s per search, budget {args.stall_budget_ms:.0f} ms")
        events: list[Any] = []
        stalled = open_federation(home, emb, on_degraded=events.append)
        sfed = stalled.federation
        assert sfed is not None
        inner = sfed.remove_pool(STALLED_POOL)
        assert inner is not None
        staller = StallingStore(inner, stall_s=10.0)
        budget = args.stall_budget_ms
        held = TierBudget(read_timeout_ms=budget, semantic_timeout_ms=budget, fail_threshold=10**9)
        sfed.add_pool(STALLED_POOL, staller, budget=held)
        stall_queries = list(range(WARMUP, WARMUP + args.stall_queries))
        stall_warm = list(range(len(corpus.queries) - WARMUP, len(corpus.queries)))
        healthy = federated_probe("healthy", fed, corpus.queries, "hybrid", emb)
        closed = federated_probe("stalled, breaker held closed", stalled, corpus.queries, "hybrid", emb, strict=False)
        t = time.perf_counter()
        measure([healthy, closed], stall_queries, stall_warm[:3])
        closed_s = time.perf_counter() - t

        # The default breaker: 3 consecutive failures open it for reset_after_s = 30 s.
        sfed.remove_pool(STALLED_POOL)
        sfed.add_pool(STALLED_POOL, staller, budget=TierBudget(read_timeout_ms=budget, semantic_timeout_ms=budget))
        tier = next(ref.store for ref in sfed.tiers if ref.name == f"shared:{STALLED_POOL}")
        opening = federated_probe(
            "stalled, default breaker (first reads)", stalled, corpus.queries, "hybrid", emb, strict=False
        )
        first_reads = []
        for i in stall_warm[:5]:
            values, _ = opening.run(i)
            first_reads.append((values["ms"], tier.breaker.state.value))
        healthy_open = federated_probe("healthy", fed, corpus.queries, "hybrid", emb)
        broken = federated_probe("stalled, breaker open", stalled, corpus.queries, "hybrid", emb, strict=False)
        searches_before = staller.searches
        t = time.perf_counter()
        measure([healthy_open, broken], stall_queries, [])
        open_s = time.perf_counter() - t
        state_after = tier.breaker.state.value
        passed = staller.searches - searches_before

        rows = [
            [
                "healthy federation (interleaved with the next row)",
                healthy.p(),
                healthy.p("ms", 95),
                "",
                healthy.p("hits"),
                "",
            ],
            [
                "one pool stalled, breaker held closed (every read times out)",
                closed.p(),
                closed.p("ms", 95),
                f"{closed.p() / healthy.p():.1f}x",
                closed.p("hits"),
                overlap(closed.tops, healthy.tops),
            ],
            [
                "healthy federation (interleaved with the next row)",
                healthy_open.p(),
                healthy_open.p("ms", 95),
                "",
                healthy_open.p("hits"),
                "",
            ],
            [
                "one pool stalled, breaker open (fails fast)",
                broken.p(),
                broken.p("ms", 95),
                f"{broken.p() / healthy_open.p():.2f}x",
                broken.p("hits"),
                overlap(broken.tops, healthy_open.tops),
            ],
        ]
        print(
            table(
                f"Hybrid federated recall with shared:{STALLED_POOL} stalled, wall ms, {len(stall_queries)} reads "
                "per row; ratio = stalled / healthy p50; overlap = share of the healthy top-10 still returned",
                ["federation", "p50", "p95", "ratio", "hits", "overlap"],
                rows,
            )
        )
        write_json(
            args.json,
            {
                "run": run_block(args) | {"per_tier": per_tier, "tiers": len(tiers)},
                "recall": [
                    {
                        "mode": mode,
                        "single_p50_ms": probes[("excl", "single", mode)].p(),
                        "single_p95_ms": probes[("excl", "single", mode)].p("ms", 95),
                        "federation_p50_ms": probes[("excl", "fed", mode)].p(),
                        "federation_p95_ms": probes[("excl", "fed", mode)].p("ms", 95),
                    }
                    for mode in MODES
                ],
                "stall": [
                    {"phase": "healthy", "p50_ms": healthy.p(), "p95_ms": healthy.p("ms", 95)},
                    {
                        "phase": "one pool stalled, breaker held closed",
                        "p50_ms": closed.p(),
                        "p95_ms": closed.p("ms", 95),
                    },
                    {"phase": "one pool stalled, breaker open", "p50_ms": broken.p(), "p95_ms": broken.p("ms", 95)},
                ],
            },
        )
        print(
            "default breaker (fail_threshold 3, reset_after_s 30), the first reads once the pool stalls: "
            + ", ".join(f"{ms:.0f} ms ({state})" for ms, state in first_reads)
        )
        print(
            f"breaker {state_after} after the open phase; searches that reached the stalled store during it: "
            f"{passed}; degraded events recorded: {len(events)} "
            f"(reasons {sorted({e.reason for e in events})}); stall phases took {closed_s:.0f} s + {open_s:.0f} s"
        )
        stalled.close()

        # ------------------------------------------------------------------ recall() records access
        section("recall() (records access, the default) vs explain(): hybrid, query embedding excluded")
        rec = {
            "single": Probe("single recall()", recall_call(single, corpus.queries)),
            "fed": Probe("federation recall()", recall_call(fed, corpus.queries)),
        }
        ex_single = single_probe("single explain()", single, corpus.queries, "hybrid", emb)
        ex_fed = federated_probe("federation explain()", fed, corpus.queries, "hybrid", emb)
        returned: dict[str, set[str]] = {"single": set(), "fed": set()}
        measure([*rec.values(), ex_single, ex_fed], measured, [])
        for who, probe in rec.items():
            returned[who] = {x for top in probe.tops.values() for x in top}
        fed.close()
        single.close()
        fed_files = [home / "agents" / AGENT / "memory.db", *(home / "pools" / p / "memory.db" for p in POOLS)]
        fed_files.append(home / "global" / "memory.db")
        marked = {"single": touched(single_path), "fed": set().union(*(touched(f) for f in fed_files))}
        print(
            table(
                f"recall(query, k={K}) recording access vs explain() recording none, {len(measured)} queries "
                "interleaved; run after every measurement above, so no ranking above saw a recorded access",
                [
                    "store",
                    "recall() p50",
                    "recall() p95",
                    "explain() p50",
                    "recall / explain",
                    "ids returned",
                    "ids marked accessed",
                    "marked / returned",
                ],
                [
                    [
                        f"single store ({total:,})",
                        rec["single"].p(),
                        rec["single"].p("ms", 95),
                        ex_single.p(),
                        rec["single"].p() / ex_single.p(),
                        len(returned["single"]),
                        len(marked["single"]),
                        len(marked["single"]) / max(1, len(returned["single"])),
                    ],
                    [
                        f"federation (5 x {per_tier:,})",
                        rec["fed"].p(),
                        rec["fed"].p("ms", 95),
                        ex_fed.p(),
                        rec["fed"].p() / ex_fed.p(),
                        len(returned["fed"]),
                        len(marked["fed"]),
                        len(marked["fed"]) / max(1, len(returned["fed"])),
                    ],
                ],
            )
        )
        print(
            f"ids marked accessed but never returned: single {len(marked['single'] - returned['single']):,}, "
            f"federation {len(marked['fed'] - returned['fed']):,} (each tier is asked for 2k = {2 * K} hits)"
        )

        section("Headline figures (ratios are p50 / p50)")
        head: list[list[object]] = [
            [
                f"federation / single, {mode}, {regimes[regime]}",
                probes[(regime, "fed", mode)].p() / probes[(regime, "single", mode)].p(),
            ]
            for regime, who, mode in probes
            if who == "fed"
        ]
        head += [
            ["hybrid federation p50 ms, query embedding excluded", probes[("excl", "fed", "hybrid")].p()],
            ["hybrid single store p50 ms, query embedding excluded", probes[("excl", "single", "hybrid")].p()],
            ["hybrid one tier alone p50 ms", alone["hybrid"].p()],
            [
                "semantic top-10 overlap, federation vs single",
                overlap(probes[("excl", "fed", "semantic")].tops, probes[("excl", "single", "semantic")].tops),
            ],
            ["one pool stalled, breaker closed: p50 ms", closed.p()],
            ["one pool stalled, breaker closed: p50 / healthy p50", closed.p() / healthy.p()],
            ["one pool stalled, breaker open: p50 / healthy p50", broken.p() / healthy_open.p()],
        ]
        print(table("Headline", ["figure", "value"], head))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"total run time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A plan holds what is relevant: the past-moment relevance gate, chosen by cross-validation on LoCoMo.

Run from the repository root (the data lives outside the repo, CC BY-NC 4.0)::

    python benchmarks/plan_floor.py                      # ~10 min on 2 vCPUs
    python benchmarks/plan_floor.py --json benchmarks/results/plan_floor.json

The protocol of ``memory_loop.py``'s LoCoMo part: one store per conversation with the built-in
embedder, each pair of consecutive dialogue turns recorded as one exchange, a plan built per
question from a new session with an 1,800-token budget; a question counts when every evidence
turn's chunk is among the plan's items. Each floor of :data:`FLOORS` is
:attr:`~elastic_memory.LoopConfig.past_floor` (the relevance the best past moment needs for the
plan to show past moments at all). Beside the questions, requests about nothing in the
conversations (:data:`OFF_TOPIC`, or ``--off-topic FILE``: a JSON list written by someone else,
held out) measure what a plan spends on an input it has no memory for: tokens, and the share
of plans with no past moment.

Leave-one-conversation-out: each fold picks, on the other four conversations, the highest floor
whose plan evidence is not below the evidence without a floor, and reports it on the held-out
conversation. Every question is held out once; the pooled held-out evidence and plan tokens
(median, p95) are printed beside the no-floor plans of the same questions.

Plan size before the worker catches up: the same plans built on the same file opened without
an embedder (keyword recall only, as a store whose vectors are not written yet answers), with
and without the chosen floor.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import median, percentile, run_block, section, table, write_json
from elastic_memory import LoopConfig, Memory, MiniLMEmbedder
from locomo_recall import DEFAULT_DATA, MemoEmbedder, turn_text

BUDGET = 1_800
FLOORS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
#: Requests about nothing in LoCoMo's conversations (written for this benchmark; the gate was looked at on them).
OFF_TOPIC = [
    "Suggest a salsa recipe.",
    "What's the capital of Australia?",
    "Write a haiku about autumn leaves.",
    "How do I reverse a list in Python?",
    "Convert 30 degrees Celsius to Fahrenheit.",
    "Explain how a transistor works.",
    "What's a good name for a goldfish?",
    "Translate 'good morning' into Spanish.",
    "How many ounces are in a pound?",
    "Give me a synonym for 'happy'.",
    "What year did the Berlin Wall fall?",
    "Recommend a stretching routine for lower back pain.",
    "How do I change a flat bicycle tyre?",
    "What is the boiling point of water at high altitude?",
    "Summarise the plot of Hamlet in two sentences.",
    "How do I make cold brew coffee?",
    "What's the difference between a virus and a bacterium?",
    "Write a limerick about a cat.",
    "How do I compute compound interest?",
    "What is the tallest mountain in Africa?",
]


@dataclass
class Plans:
    """Per question of one conversation, at each floor: whether all evidence was shown, and plan tokens."""

    sample_id: str
    found: dict[float, list[float]] = field(default_factory=dict)
    tokens: dict[float, list[int]] = field(default_factory=dict)
    past: dict[float, list[int]] = field(default_factory=dict)
    off_tokens: dict[float, list[int]] = field(default_factory=dict)
    off_past: dict[float, list[int]] = field(default_factory=dict)
    held_tokens: dict[float, list[int]] = field(default_factory=dict)
    held_past: dict[float, list[int]] = field(default_factory=dict)


def _fill(db: Path, sample: dict[str, Any], embedder: Any) -> None:
    conv = sample["conversation"]
    keys = sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    config = LoopConfig(tier="standard", budget_tokens=BUDGET, background=False)
    with Memory.open(db, embedder=embedder, loop=config, context_tokens=128_000) as mem:
        for key in keys:
            turns = conv[key]
            for i in range(0, len(turns), 2):
                pair = turns[i : i + 2]
                reply = turn_text(pair[1]) if len(pair) > 1 else ""
                meta = {"dia_ids": [t["dia_id"] for t in pair]}
                mem.record_turn(turn_text(pair[0]), reply, session_id=f"{sample['sample_id']}/{key}", metadata=meta)
        mem.drain()


def _plans(
    db: Path, sample: dict[str, Any], embedder: Any, floors: Sequence[float], off: Sequence[str], held: Sequence[str]
) -> Plans:
    out = Plans(sample["sample_id"])
    questions = [qa for qa in sample["qa"] if qa.get("evidence")]
    for floor in floors:
        config = LoopConfig(tier="standard", budget_tokens=BUDGET, background=False, past_floor=floor)
        found, tokens, past = [], [], []
        with Memory.open(db, embedder=embedder, loop=config, context_tokens=128_000) as mem:
            for qa in questions:
                plan = mem.build_context(str(qa["question"]), session_id="question", touch=False)
                ids = [i.source_id for i in plan.items() if i.kind == "chunk" and i.source_id]
                shown = {d for r in mem.get_many(ids) for d in r.metadata.get("dia_ids", [])} if ids else set()
                found.append(float(set(qa["evidence"]) <= shown))
                tokens.append(plan.tokens)
                past.append(len(ids))
            plans = [mem.build_context(text, session_id="question", touch=False) for text in off]
            out.off_tokens[floor] = [p.tokens for p in plans]
            out.off_past[floor] = [sum(1 for i in p.items() if i.kind == "chunk") for p in plans]
            plans = [mem.build_context(text, session_id="question", touch=False) for text in held]
            out.held_tokens[floor] = [p.tokens for p in plans]
            out.held_past[floor] = [sum(1 for i in p.items() if i.kind == "chunk") for p in plans]
        out.found[floor], out.tokens[floor], out.past[floor] = found, tokens, past
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _summary(plans: list[Plans], floor: float) -> dict[str, float]:
    """Evidence, plan tokens (p50, p95) and past moments (p50) of ``plans`` at ``floor``."""
    tokens = [float(t) for p in plans for t in p.tokens[floor]]
    return {
        "evidence": _mean([v for p in plans for v in p.found[floor]]),
        "tokens_p50": median(tokens),
        "tokens_p95": percentile(tokens, 95),
        "moments_p50": median([float(n) for p in plans for n in p.past[floor]]),
        "off_topic_tokens_p50": median([float(t) for p in plans for t in p.off_tokens[floor]]),
        "off_topic_without_moments": _mean([float(n == 0) for p in plans for n in p.off_past[floor]]),
        "held_out_off_topic_tokens_p50": median([float(t) for p in plans for t in p.held_tokens[floor]] or [0.0]),
        "held_out_off_topic_without_moments": _mean([float(n == 0) for p in plans for n in p.held_past[floor]]),
    }


def _choose(train: list[Plans], floors: Sequence[float]) -> float:
    """The highest floor whose evidence over ``train`` is not below the no-floor evidence."""
    base = _mean([v for p in train for v in p.found[0.0]])
    ok = [f for f in floors if _mean([v for p in train for v in p.found[f]]) >= base]
    return max(ok)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--off-topic", type=Path, default=None, help="a JSON list of requests about nothing stored")
    parser.add_argument("--held-out", type=Path, default=None, help="another such list, written by someone else")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"LoCoMo data not found at {args.data}")
        return 1
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    off = json.loads(args.off_topic.read_text(encoding="utf-8")) if args.off_topic else list(OFF_TOPIC)
    held = json.loads(args.held_out.read_text(encoding="utf-8")) if args.held_out else []
    embedder = MemoEmbedder(MiniLMEmbedder())
    workdir = Path(tempfile.mkdtemp(prefix="plan-floor-"))
    try:
        section("Plans at each floor (MiniLM int8, hybrid)")
        per: list[Plans] = []
        before: list[Plans] = []
        for sample in samples:
            db = workdir / f"{sample['sample_id']}.db"
            _fill(db, sample, embedder)
            per.append(_plans(db, sample, embedder, FLOORS, off, held))
            print(f"{sample['sample_id']}: {len(per[-1].found[0.0])} questions", flush=True)
        in_sample = {floor: _summary(per, floor) for floor in FLOORS}
        rows = [[floor, *in_sample[floor].values()] for floor in FLOORS]
        headers = ["floor", "evidence", "tokens p50", "p95", "moments", "off p50", "none", "held p50", "none"]
        print(table("In sample (all five conversations)", headers, rows, digits=3))

        section("Leave one conversation out")
        held_found: dict[str, list[float]] = {"no floor": [], "chosen": []}
        held_tokens: dict[str, list[float]] = {"no floor": [], "chosen": []}
        chosen: dict[str, float] = {}
        for i, test in enumerate(per):
            floor = _choose(per[:i] + per[i + 1 :], FLOORS)
            chosen[test.sample_id] = floor
            held_found["no floor"] += test.found[0.0]
            held_found["chosen"] += test.found[floor]
            held_tokens["no floor"] += [float(t) for t in test.tokens[0.0]]
            held_tokens["chosen"] += [float(t) for t in test.tokens[floor]]
        print("floor chosen per held-out conversation: " + ", ".join(f"{k} {v}" for k, v in chosen.items()))
        held = {
            name: {
                "evidence": _mean(held_found[name]),
                "tokens_p50": median(held_tokens[name]),
                "tokens_p95": percentile(held_tokens[name], 95),
            }
            for name in held_found
        }
        rows = [[name, len(held_found[name]), *held[name].values()] for name in held]
        print(
            table("Held out (each question once)", ["plans", "n", "all evidence", "tokens p50", "p95"], rows, digits=3)
        )
        common = Counter(chosen.values()).most_common(1)[0][0]

        section("Before the worker catches up (the same file, keyword recall only)")
        for sample in samples:
            before.append(_plans(workdir / f"{sample['sample_id']}.db", sample, None, (0.0, common), off, held))
        states = {
            f"{name}, floor {floor}": _summary(plans, floor)
            for floor in (0.0, common)
            for name, plans in (("keyword only", before), ("embedded", per))
        }
        rows = [[name, *figures.values()] for name, figures in states.items()]
        headers = ["store", "evidence", "tokens p50", "p95", "moments", "off p50", "none", "held p50", "none"]
        print(table("Plan size by state", headers, rows, digits=3))
        write_json(
            args.json,
            {"run": run_block(args), "in_sample": in_sample, "chosen": chosen, "held_out": held, "by_state": states},
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

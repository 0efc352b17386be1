"""The hostile-input fuzz suite with many more examples: cases, foreign exceptions, changed stores.

Run from the repository root (``pip install -e "packages/elastic-memory[ann,postgres-server]" hypothesis``)::

    python benchmarks/fuzz.py                         # 200 examples per method and setup
    python benchmarks/fuzz.py --examples 1000 --setups sqlite-fake postgres-fake
    python benchmarks/fuzz.py --methods recall remember --async

It runs the properties of ``tests/fuzz`` (the same strategies, the same check) without
stopping at the first failure: every call either returns or raises an ``ElasticMemoryError``,
and a call that raised leaves every table's rows as they were. Setups: the fake hashing
embedder, no embedder, the vec0 vector tier, the built-in model, on SQLite; the fake and no
embedder on a throwaway PostgreSQL server (skipped without the ``postgres-server`` extra).
Foreign exceptions are printed with their call. Exit status 1 when any foreign exception,
or any changed store, was seen.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from tests.fuzz.calls import METHODS, calls  # noqa: E402
from tests.fuzz.harness import BENCH_SETUPS, Fuzzer, Setup, Tally, fuzz_store  # noqa: E402


def run_method(fz: Fuzzer, method: str, examples: int, *, use_async: bool) -> None:
    strategy = calls(fz.seeds, fz.folder, fz.setup.dim)[method]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(call=strategy)
    def prop(call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        fz.check(method, call[0], call[1], use_async=use_async)

    prop()


def fuzz_setup(setup: Setup, url: str | None, methods: list[str], examples: int, *, use_async: bool) -> Tally:
    total = Tally()
    for method in methods:
        with fuzz_store(setup, url) as fz:
            fz.strict = False
            try:
                run_method(fz, method, examples, use_async=use_async)
            except Exception as e:  # the harness itself failed (it should not): count it as foreign
                fz.tally.foreign.append(f"{type(e).__name__} escaped the harness in {method}: {e!r}"[:400])
        total.cases += fz.tally.cases
        total.library_errors += fz.tally.library_errors
        total.foreign += fz.tally.foreign
        total.changed += fz.tally.changed
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="hypothesis examples per method and setup")
    parser.add_argument("--setups", nargs="*", default=[s.name for s in BENCH_SETUPS])
    parser.add_argument("--methods", nargs="*", default=METHODS)
    parser.add_argument("--async", dest="use_async", action="store_true", help="fuzz AsyncMemory instead")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # RecallWarning and friends: hostile input provokes them on purpose
    chosen = [s for s in BENCH_SETUPS if s.name in args.setups]
    print(f"fuzz: {args.examples} examples per method, {len(args.methods)} methods, setups {[s.name for s in chosen]}")
    bad = 0
    with contextlib.ExitStack() as stack:
        url: str | None = None
        if any(s.backend == "postgres" for s in chosen):
            from elastic_memory.testing import postgres_available, postgres_server

            if postgres_available():
                url = stack.enter_context(postgres_server())
            else:
                print("postgres: skipped (pip install 'elastic-memory[postgres-server]')")
        for setup in chosen:
            if setup.backend == "postgres" and url is None:
                continue
            start = time.perf_counter()
            tally = fuzz_setup(setup, url, args.methods, args.examples, use_async=args.use_async)
            took = time.perf_counter() - start
            print(
                f"\n== {setup.name}: {tally.cases} cases in {took:.0f} s, {tally.library_errors} library errors, "
                f"{len(tally.foreign)} foreign exceptions, {len(tally.changed)} changed stores"
            )
            kinds = Counter(
                line.split(" from ")[0] + " from " + line.split(" from ")[1].split("(")[0]
                for line in tally.foreign
                if " from " in line
            )
            for kind, n in kinds.most_common():
                print(f"   foreign {n:5d}  {kind}")
            seen: set[str] = set()
            for line in tally.foreign:
                key = line.split("(")[0]
                if key not in seen:
                    seen.add(key)
                    print(f"     e.g. {line}")
            for line in tally.changed[:20]:
                print(f"   changed  {line}")
            bad += len(tally.foreign) + len(tally.changed)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Forgetting and consolidation math (pure, no I/O): retention, priority, near-duplicate groups.

>>> retention(age_seconds=7 * DAY, importance=1.0, strength=1.0, half_life_seconds=half_life_for("episodic"))
0.5
>>> near_duplicate_groups(
...     [
...         ("a", "User drinks cortado"),
...         ("b", "The user prefers dark mode in the editor."),
...         ("c", "User drinks flat white"),
...         ("d", "User prefers dark mode in the editor"),
...     ]
... )
[['b', 'd']]
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from .errors import UsageError

__all__ = [
    "DAY",
    "DEFAULT_WEIGHTS",
    "HALF_LIVES",
    "MIN_FACTOR",
    "STOPWORDS",
    "PriorityWeights",
    "grow_strength",
    "half_life_for",
    "jaccard",
    "merge_text",
    "near_duplicate_groups",
    "priority",
    "retention",
    "tokenize",
]

DAY = 86_400.0
#: Seconds until an untouched memory of importance 1 and strength 1 keeps half its retention.
HALF_LIVES: Mapping[str, float] = MappingProxyType({"episodic": 7 * DAY, "semantic": 90 * DAY, "procedural": 365 * DAY})
#: Floor for importance and strength, so an importance of 0 still decays at a finite rate.
MIN_FACTOR = 0.05


def _number(name: str, value: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if math.isnan(number) or isinstance(value, (str, bytes)):
        msg = f"{name} must be a number, got {value!r}; check the stored value"
        raise UsageError(msg)
    return number


def half_life_for(memory_type: str) -> float:
    """The half-life in seconds for a memory type (``"episodic"``, ``"semantic"``, ``"procedural"``).

    Accepts :class:`~elastic_memory.MemoryType` members too.
    """
    name = getattr(memory_type, "value", memory_type)
    if not isinstance(name, str) or name not in HALF_LIVES:
        msg = f"unknown memory type {memory_type!r}; use one of {', '.join(HALF_LIVES)}"
        raise UsageError(msg)
    return HALF_LIVES[name]


def retention(*, age_seconds: float, importance: float, strength: float, half_life_seconds: float) -> float:
    """Ebbinghaus retention in [0, 1]: ``R = 2 ** (-t / S) = exp(-t * ln 2 / S)``.

    ``t`` is the time since the last access (negative ages count as 0) and
    ``S = half_life_seconds * importance * strength``, each factor floored at :data:`MIN_FACTOR`.
    ``half_life_seconds`` is a true half-life: an untouched memory with importance and strength 1
    keeps ``R = 0.5`` after one half-life, 0.25 after two.

    >>> retention(age_seconds=0, importance=0.0, strength=1.0, half_life_seconds=DAY)
    1.0
    """
    half_life = _number("half_life_seconds", half_life_seconds)
    if not 0 < half_life < math.inf:
        msg = f"half_life_seconds must be positive and finite, got {half_life_seconds!r}; see HALF_LIVES"
        raise UsageError(msg)
    age = max(0.0, _number("age_seconds", age_seconds))
    scale = (
        half_life * max(_number("importance", importance), MIN_FACTOR) * max(_number("strength", strength), MIN_FACTOR)
    )
    if not math.isfinite(scale):
        msg = f"importance and strength must be finite, got {importance!r} and {strength!r}"
        raise UsageError(msg)
    return math.pow(0.5, age / scale)


def grow_strength(strength: float, *, factor: float = 1.5, cap: float = 10.0) -> float:
    """The strength after one more access: ``min(cap, strength * factor)``.

    >>> grow_strength(1.0), grow_strength(8.0)
    (1.5, 10.0)
    """
    step, ceiling = _number("factor", factor), _number("cap", cap)
    if not 1.0 <= step < math.inf or not 0.0 < ceiling < math.inf:
        msg = f"grow_strength needs factor >= 1 and a positive finite cap, got factor={factor!r}, cap={cap!r}"
        raise UsageError(msg)
    return min(ceiling, max(_number("strength", strength), MIN_FACTOR) * step)


@dataclass(frozen=True, kw_only=True)
class PriorityWeights:
    """Weights of the priority score's four components (non-negative; the defaults sum to 1)."""

    importance: float = 0.4
    """Weight of the stored importance (0-1)."""
    recency: float = 0.2
    """Weight of ``1 / (1 + age_days)``."""
    access: float = 0.1
    """Weight of ``min(1, access_count / 100)``."""
    retention: float = 0.3
    """Weight of the Ebbinghaus retention."""

    def __post_init__(self) -> None:
        for name in ("importance", "recency", "access", "retention"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                msg = f"PriorityWeights.{name} must be a non-negative finite number, got {value!r}"
                raise UsageError(msg)


DEFAULT_WEIGHTS = PriorityWeights()


def priority(
    *,
    importance: float,
    age_days: float,
    access_count: float,
    retention: float,
    weights: PriorityWeights = DEFAULT_WEIGHTS,
) -> float:
    """Weighted keep-priority: higher means keep; eviction takes the lowest first.

    ``w.importance * importance + w.recency / (1 + age_days) + w.access * min(1, access_count / 100)
    + w.retention * retention``, with importance and retention clamped to [0, 1] and negative
    ages and counts taken as 0.

    >>> priority(importance=1.0, age_days=0, access_count=100, retention=1.0)
    1.0
    """
    imp = min(1.0, max(0.0, _number("importance", importance)))
    recency = 1.0 / (1.0 + max(0.0, _number("age_days", age_days)))
    access = min(1.0, max(0.0, _number("access_count", access_count)) / 100.0)
    ret = min(1.0, max(0.0, _number("retention", retention)))
    return weights.importance * imp + weights.recency * recency + weights.access * access + weights.retention * ret


# --- near-duplicates -----------------------------------------------------------------------------

#: Function words left out of :func:`tokenize`. Negations, quantifiers and modals are kept on
#: purpose: "likes coffee" and "does not like coffee" must stay apart.
STOPWORDS = frozenset(
    "a an the and or but of at by for from in into on onto to with about as than then so this that these those "
    "it its is are was were be been being am do does did has have had having i me my mine we us our ours you "
    "your yours he him his she her hers they them their theirs which who whom whose there here also just very".split()
)
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026\u3002\uff01\uff1f])\s+")
_ENDS = (".", "!", "?", "\u2026", "\u3002", "\uff01", "\uff1f")
F32 = npt.NDArray[np.float32]


def tokenize(text: str) -> frozenset[str]:
    """Lowercase word tokens without :data:`STOPWORDS`; a possessive ``'s`` is dropped.

    >>> sorted(tokenize("The user's cat doesn't like the rain."))
    ['cat', "doesn't", 'like', 'rain', 'user']
    """
    words = (w.replace("\u2019", "'") for w in _WORD.findall(text.lower()))
    return frozenset(w.removesuffix("'s") for w in words if w not in STOPWORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a & b| / |a | b|``; 0.0 when both are empty (nothing to compare is not a duplicate)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _unit_vectors(ids: Sequence[str], vectors: Mapping[str, F32] | None) -> dict[str, F32]:
    out: dict[str, F32] = {}
    dim: int | None = None
    for key in ids:
        if vectors is None or key not in vectors:
            continue
        vec = np.asarray(vectors[key], dtype=np.float32)
        if vec.ndim != 1 or (dim is not None and vec.shape[0] != dim):
            msg = f"vectors must be 1-D and all of one size; {key!r} has shape {vec.shape}"
            raise UsageError(msg)
        dim = vec.shape[0]
        norm = float(np.linalg.norm(vec))
        if norm > 0 and math.isfinite(norm):
            out[key] = vec / norm  # a zero or broken vector counts as missing
    return out


def _check_threshold(name: str, value: float, low: float) -> None:
    if not low < _number(name, value) <= 1.0:
        msg = f"{name} must be in ({low:g}, 1], got {value!r}"
        raise UsageError(msg)


def near_duplicate_groups(
    items: Sequence[tuple[str, str]],
    *,
    vectors: Mapping[str, F32] | None = None,
    jaccard_threshold: float = 0.8,
    cosine_threshold: float = 0.92,
    min_group: int = 2,
    max_items: int = 5000,
) -> list[list[str]]:
    """Group ``(id, text)`` items that say the same thing, for consolidation.

    Two items are linked when their :func:`tokenize` sets have Jaccard >= ``jaccard_threshold``
    and, when both have a vector, cosine >= ``cosine_threshold`` (the double gate: a changed
    value such as "drinks cortado" / "drinks flat white" fails the token gate even when the
    vectors are close). Groups are the connected components of those links (so chains can join
    items that are not pairwise similar), at least ``min_group`` strong. Only the first
    ``max_items`` items are considered. Candidate pairs come from an inverted index over each
    item's rarest tokens (prefix filtering), which finds exactly the pairs a full pairwise
    scan would. Members keep input order; groups are ordered by their first member.

    Raises:
        UsageError: Duplicate ids, thresholds out of range, or vectors of mixed shapes.
    """
    _check_threshold("jaccard_threshold", jaccard_threshold, 0.0)
    _check_threshold("cosine_threshold", cosine_threshold, -1.0)
    for name, value, low in (("min_group", min_group, 2), ("max_items", max_items, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            msg = f"{name} must be an int >= {low}, got {value!r}"
            raise UsageError(msg)
    items = list(items)[:max_items]
    ids = [key for key, _ in items]
    if len(set(ids)) != len(ids):
        msg = "near_duplicate_groups needs unique ids; deduplicate the items first"
        raise UsageError(msg)
    units = _unit_vectors(ids, vectors)
    sets = [tokenize(text) for _, text in items]
    rarity = Counter(token for tokens in sets for token in tokens)
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def linked(i: int, j: int) -> bool:
        if jaccard(sets[i], sets[j]) < jaccard_threshold:
            return False
        va, vb = units.get(ids[i]), units.get(ids[j])
        return va is None or vb is None or float(va @ vb) >= cosine_threshold

    index: defaultdict[str, list[int]] = defaultdict(list)
    twins: dict[tuple[frozenset[str], bytes | None], int] = {}
    for j, tokens in enumerate(sets):
        unit = units.get(ids[j])
        twin = twins.setdefault((tokens, None if unit is None else unit.tobytes()), j)
        if twin != j and linked(twin, j):  # an exact twin links to exactly whom its first copy links to
            parent[root(j)] = root(twin)
            continue
        # Items with Jaccard >= t share at least ceil(t * |A|) tokens, so they share one among
        # each other's |A| - ceil(t * |A|) + 1 rarest tokens.
        overlap = max(1, math.ceil(jaccard_threshold * len(tokens) - 1e-9))
        prefix = sorted(tokens, key=lambda token: (rarity[token], token))[: len(tokens) - overlap + 1]
        candidates = {i for token in prefix for i in index[token]}
        for i in sorted(candidates):
            if root(i) != root(j) and linked(i, j):
                parent[root(j)] = root(i)
        for token in prefix:
            index[token].append(j)
    groups: defaultdict[int, list[str]] = defaultdict(list)
    for i, key in enumerate(ids):
        groups[root(i)].append(key)
    return [members for members in groups.values() if len(members) >= min_group]  # first-member order


def _words(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def merge_text(texts: Sequence[str]) -> str:
    """The content of a merged memory: the longest text, then each sentence of the others it lacks.

    A sentence counts as present when its words already appear as one unbroken run in what is
    merged so far (case and punctuation ignored); anything less is kept, so no detail is lost.
    Pieces are joined with a space; a piece without closing punctuation gets a full stop when
    another follows.

    >>> merge_text(["User likes tea.", "User likes tea and lives in Lisbon.", "Has a cat named Mo"])
    'User likes tea and lives in Lisbon. Has a cat named Mo'
    """
    pieces = [text.strip() for text in texts if isinstance(text, str) and text.strip()]
    if not pieces:
        msg = "merge_text needs at least one non-blank text"
        raise UsageError(msg)
    longest = max(range(len(pieces)), key=lambda i: len(pieces[i]))
    merged = [pieces[longest]]
    seen = _words(pieces[longest])
    for i, text in enumerate(pieces):
        if i == longest:
            continue
        for sentence in _SENTENCE_END.split(text):
            words = _words(sentence)
            if words.strip() and words not in seen:
                merged.append(sentence)
                seen += words.lstrip()
    return " ".join(p if p.endswith(_ENDS) or k == len(merged) - 1 else p + "." for k, p in enumerate(merged))

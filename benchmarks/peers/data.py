"""Deterministic synthetic workload: agent memories (text + vector) and queries.

Vectors are not uniform noise: they come from a mixture of ``N_CLUSTERS``
Gaussians with uneven cluster sizes, per-cluster spread and a shared
direction (real sentence embeddings are anisotropic), then L2-normalised.
Each Gaussian varies mostly inside its own ``CLUSTER_RANK``-dimensional
subspace: real embeddings have a low intrinsic dimension, and full-rank
isotropic clusters would make every ANN index look far worse than it is. Each
cluster also owns a handful of topic words, so text and vector agree the way
they do in real memories (which a hybrid retriever can exploit).

Keyword queries are built from the rarest words of a target memory, so
``kw_targets`` lets a run check that a keyword search finds what it should.

    >>> w = make_workload(1_000, 10, seed=0)
    >>> w.vectors.shape, w.vectors.dtype.name, len(w.query_texts)
    ((1000, 384), 'float32', 10)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

DIM = 384
N_CLUSTERS = 200
CLUSTER_RANK = 24
ISOTROPIC_NOISE = 0.15
TOPIC_WORDS_PER_CLUSTER = 12

# Small, fixed English vocabulary. Function words glue sentences together,
# content words carry topics, and generated names give the rare tokens that
# make keyword search meaningful (people, places, projects).
FUNCTION_WORDS = """
the a an and of to in on for with at from by about after before during
is was has had will would can should may might that this these those
my your our their his her its he she they we i you it not very really
""".split()

CONTENT_WORDS = """
user agent assistant memory note reminder meeting call email message chat
project task deadline report budget invoice contract client customer team
manager colleague friend family mother father sister brother daughter son
wife husband partner child doctor dentist teacher lawyer engineer designer
coffee tea breakfast lunch dinner restaurant recipe pasta salad pizza sushi
vegetarian vegan allergy peanut gluten dairy diet gym running yoga swimming
cycling hiking football tennis chess guitar piano music concert movie book
novel podcast series game travel flight hotel train airport passport visa
vacation holiday weekend morning evening night monday tuesday wednesday
thursday friday saturday sunday january february march april june july
august september october november december birthday anniversary wedding
party gift present card flowers garden house apartment office kitchen car
bike bus parking rent mortgage bank account password laptop phone tablet
printer software update bug release server database backup cloud storage
python javascript rust query index vector search model prompt token context
prefers likes dislikes loves hates wants needs plans booked cancelled moved
started finished visited bought sold paid ordered scheduled asked told said
remembered forgot changed promised prefers avoids recommends uses owns
early late weekly daily monthly urgent important private shared favourite
new old quiet noisy cheap expensive quick slow healthy spicy sweet warm cold
blue green red black white small large short long first last next previous
insurance tax salary pension loan school university course exam lecture
homework hospital pharmacy appointment medication vitamin sleep headache
dog cat pet vet walk park beach mountain lake river city village country
museum gallery theatre library market shop store delivery package refund
""".split()

_SYLLABLES = """
ka lo mi ra ten vo si da ne bru chel fa gor hil ian jo kes lin mar nor
pe quin ros sar tu val wen xa yor zel and bel cor del est fin gan har
""".split()
N_NAMES = 2_000
_FUNCTION = np.array(FUNCTION_WORDS, dtype=object)
_CONTENT = np.array(CONTENT_WORDS, dtype=object)


@dataclass(frozen=True)
class Workload:
    """A generated data set: memories and the queries to run against them."""

    texts: list[str]
    vectors: np.ndarray  # (n, DIM) float32, unit length
    metadata: list[dict]
    query_texts: list[str]  # keyword queries (3 rare words of a target memory)
    query_vectors: np.ndarray  # (q, DIM) float32, unit length
    kw_targets: list[int]  # id of the memory each keyword query was built from

    @property
    def n(self) -> int:
        return len(self.texts)


def make_workload(n: int, n_queries: int, seed: int = 0) -> Workload:
    """Build ``n`` memories and ``n_queries`` queries; same seed, same bytes."""
    rng = np.random.default_rng(seed)
    names = _make_names(rng)
    mixture = _make_mixture(rng)
    topics = rng.integers(0, len(CONTENT_WORDS), size=(N_CLUSTERS, TOPIC_WORDS_PER_CLUSTER))

    clusters = rng.choice(N_CLUSTERS, size=n, p=mixture.weights)
    vectors = _sample_vectors(rng, clusters, mixture)
    texts = _unique_sentences(rng, clusters, topics, names)
    metadata = [
        {"user": f"u{int(c) % 7}", "cluster": int(c), "ts": 1_700_000_000 + 60 * i} for i, c in enumerate(clusters)
    ]

    q_clusters = rng.choice(N_CLUSTERS, size=n_queries, p=mixture.weights)
    query_vectors = _sample_vectors(rng, q_clusters, mixture)
    kw_targets = [int(t) for t in rng.choice(n, size=n_queries, replace=n_queries > n)]
    query_texts = _keyword_queries(texts, kw_targets)
    return Workload(texts, vectors, metadata, query_texts, query_vectors, kw_targets)


def batches(w: Workload, size: int) -> Iterator[list[tuple[int, str, np.ndarray, dict]]]:
    """Yield ``(id, text, vector, metadata)`` tuples, ``size`` at a time, ids from 0."""
    for start in range(0, w.n, size):
        stop = min(start + size, w.n)
        yield [(i, w.texts[i], w.vectors[i], w.metadata[i]) for i in range(start, stop)]


def exact_top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Exact cosine top-k ids for each query (vectors are unit length), best first."""
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), 64):
        scores = queries[start : start + 64] @ vectors.T
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
        out[start : start + 64] = np.take_along_axis(part, order, axis=1)
    return out


def _make_names(rng: np.random.Generator) -> list[str]:
    names: set[str] = set()
    while len(names) < N_NAMES:
        parts = rng.choice(_SYLLABLES, size=int(rng.integers(2, 4)))
        names.add("".join(parts).capitalize())
    return sorted(names)


class _Mixture(NamedTuple):
    centroids: np.ndarray  # (N_CLUSTERS, DIM) unit
    weights: np.ndarray  # (N_CLUSTERS,) sums to 1, uneven
    bases: np.ndarray  # (N_CLUSTERS, CLUSTER_RANK, DIM) orthonormal rows
    spreads: np.ndarray  # (N_CLUSTERS,)
    shared: np.ndarray  # (DIM,) unit; every vector leans this way a little


def _make_mixture(rng: np.random.Generator) -> _Mixture:
    centroids = _unit(rng.standard_normal((N_CLUSTERS, DIM)))
    weights = rng.dirichlet(np.full(N_CLUSTERS, 0.8))
    bases = np.stack([np.linalg.qr(rng.standard_normal((DIM, CLUSTER_RANK)))[0].T for _ in range(N_CLUSTERS)])
    spreads = rng.uniform(0.7, 1.3, size=N_CLUSTERS)
    shared = _unit(rng.standard_normal(DIM))
    return _Mixture(centroids, weights, bases, spreads, shared)


def _sample_vectors(rng, clusters, m: _Mixture) -> np.ndarray:
    low_rank = rng.standard_normal((len(clusters), CLUSTER_RANK)) / np.sqrt(CLUSTER_RANK)
    isotropic = rng.standard_normal((len(clusters), DIM)) / np.sqrt(DIM)
    noise = ISOTROPIC_NOISE * isotropic
    for c in np.unique(clusters):
        rows = clusters == c
        noise[rows] += low_rank[rows] @ m.bases[c]
    raw = m.centroids[clusters] + 0.35 * m.shared + noise * m.spreads[clusters, None]
    return _unit(raw).astype(np.float32)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _zipf_p(size: int, s: float) -> np.ndarray:
    p = 1.0 / np.arange(1, size + 1) ** s
    return p / p.sum()


def _unique_sentences(rng, clusters, topics, names) -> list[str]:
    texts = _sentences(rng, clusters, topics, names)
    seen: set[str] = set()
    for i in range(len(texts)):
        while texts[i] in seen:  # rare; redraw until unique so ids map 1:1 to texts
            texts[i] = _sentences(rng, clusters[i : i + 1], topics, names)[0]
        seen.add(texts[i])
    return texts


def _sentences(rng, clusters, topics, names) -> list[str]:
    """10-30 words each: 40% function words, 25% cluster topic words,
    27% Zipf-distributed content words, 8% Zipf-distributed names."""
    lengths = rng.integers(10, 31, size=len(clusters))
    total = int(lengths.sum())
    kind = rng.random(total)
    function = _FUNCTION[rng.choice(len(_FUNCTION), size=total, p=_zipf_p(len(_FUNCTION), 1.0))]
    owner = np.repeat(clusters, lengths)
    topical = _CONTENT[topics[owner, rng.integers(TOPIC_WORDS_PER_CLUSTER, size=total)]]
    content = _CONTENT[rng.choice(len(_CONTENT), size=total, p=_zipf_p(len(_CONTENT), 1.1))]
    name_arr = np.array(names, dtype=object)
    name = name_arr[rng.choice(len(names), size=total, p=_zipf_p(len(names), 1.05))]
    words = np.where(kind < 0.40, function, np.where(kind < 0.65, topical, np.where(kind < 0.92, content, name)))
    out = []
    for sentence in np.split(words, np.cumsum(lengths)[:-1]):
        text = " ".join(sentence)
        out.append(text[:1].upper() + text[1:] + ".")
    return out


def _keyword_queries(texts: list[str], targets: list[int]) -> list[str]:
    df = Counter()
    for t in texts:
        df.update(set(_tokens(t)))
    queries = []
    for t in targets:
        toks = sorted(set(_tokens(texts[t])), key=lambda w: (df[w], w))
        queries.append(" ".join(toks[:3]))
    return queries


def _tokens(text: str) -> list[str]:
    return [w.strip(".").lower() for w in text.split()]

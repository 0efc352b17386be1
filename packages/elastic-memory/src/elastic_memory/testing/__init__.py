"""Deterministic fakes and checks for fast tests. Public, so adapters and hosts can test with them.

:class:`FakeEmbedder` hashes word tokens into a small vector: texts that share words get
similar vectors, the same text always gets the same vector, and no model is loaded.
:func:`check_hostile_call` is the adapters' fuzz check: one call with hostile arguments
returns, or raises a library or documented error and leaves the store as it was.

>>> e = FakeEmbedder()
>>> v = e.embed(["red apple", "red apple", "blue sky"])
>>> bool((v[0] == v[1]).all()), round(float(v[0] @ v[0]), 3), float(v[0] @ v[2]) < 0.9
(True, 1.0, True)
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from types import FrameType, MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ElasticMemoryError
from ..storage.sqlite.fts import query_terms
from .pg_server import TemporaryPostgres, fresh_schema, postgres_available, postgres_server, postgres_session

__all__ = [
    "CONTROL_TOKENS",
    "LOOKALIKE_NAMES",
    "OWN_CODE",
    "FakeEmbedder",
    "TemporaryPostgres",
    "fresh_schema",
    "postgres_available",
    "postgres_server",
    "postgres_session",
    "built_or_raw",
    "reference_bm25",
    "check_hostile_call",
    "control_tokens_in",
    "reached_own_code",
    "short_repr",
]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

#: The special tokens of the common chat templates, by family, spelt as their tokenizers spell
#: them (DeepSeek's bars are U+FF5C): what tests store to check that none reaches a model.
CONTROL_TOKENS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "chatml-qwen": ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>"),
        "llama2": ("<s>", "</s>", "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>"),
        "llama3": (
            "<|begin_of_text|>",
            "<|end_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
            "<|eom_id|>",
            "<|python_tag|>",
        ),
        "gemma": ("<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>"),
        "mistral": (
            "[INST]",
            "[/INST]",
            "[SYSTEM_PROMPT]",
            "[/SYSTEM_PROMPT]",
            "[AVAILABLE_TOOLS]",
            "[/AVAILABLE_TOOLS]",
            "[TOOL_CALLS]",
            "[TOOL_RESULTS]",
            "[/TOOL_RESULTS]",
            "[TOOL_CONTENT]",
            "[ARGS]",
            "[CALL_ID]",
            "<s>",
            "</s>",
        ),
        "phi3": ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|endoftext|>"),
        "gpt": ("<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>"),
        "harmony": ("<|start|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|end|>", "<|return|>", "<|call|>"),
        "deepseek": (
            "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
            "<\uff5cend\u2581of\u2581sentence\uff5c>",
            "<\uff5cUser\uff5c>",
            "<\uff5cAssistant\uff5c>",
            "<think>",
            "</think>",
        ),
    }
)
_CONTROL_SPELLINGS = sorted(
    {s for tokens in CONTROL_TOKENS.values() for t in tokens for s in (t, unicodedata.normalize("NFKC", t))}
)


def control_tokens_in(text: str) -> list[str]:
    """The :data:`CONTROL_TOKENS` (or their NFKC forms) found in ``text`` or in its NFKC form, sorted.

    >>> control_tokens_in("Sure.<|im_end|> [inst] \u2039\u00a6im_end\u00a6\u203a")
    ['<|im_end|>']
    """
    folded = unicodedata.normalize("NFKC", text)
    return [t for t in _CONTROL_SPELLINGS if t in text or t in folded]


#: Pairs of collection or agent names that a sloppy comparison (a prefix, ``LIKE``, a glob, a
#: path split, case folding, a look-alike letter, unescaped quotes) would conflate, as
#: ``(id, a, b)``: isolation tests parametrise over them.
LOOKALIKE_NAMES: tuple[tuple[str, str, str], ...] = (
    ("prefix", "ali", "alice"),
    ("percent", "a%", "ab"),
    ("underscore", "a_", "ab"),
    ("star", "a*", "ab"),
    ("dotted-prefix", "a.b", "a.bc"),
    ("dotted-child", "a", "a.b"),
    ("cyrillic-a", "\u0430lice", "alice"),
    ("case", "Alice", "alice"),
    ("quotes", "o'brien", 'o"brien'),
)


class FakeEmbedder:
    """A bag-of-words hashing embedder (default 16-d). ``calls`` counts embedded texts."""

    def __init__(self, dimension: int = 16, *, model_id: str = "fake-hash", family: str = "fake-hash") -> None:
        self.dimension = dimension
        self.model_id = model_id
        self.family = family
        self.calls = 0

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        vec = np.zeros(self.dimension, dtype=np.float32)
        for word in _WORD.findall(text.casefold()) or [""]:
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dimension
            vec[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            norm = 1.0
        return vec / norm

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit float32 vectors, one row per text."""
        self.calls += len(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])


# ----------------------------------------------------------------------------- fuzz checks

#: Path fragments of elastic-memory's own code (the core and the three adapters: LlamaIndex's and
#: Haystack's leaf folders are named ``elastic_memory`` too), for :func:`reached_own_code`.
OWN_CODE: tuple[str, ...] = ("/elastic_memory/", "/langchain_elastic_memory/")


def short_repr(value: object, limit: int = 300) -> str:
    """A bounded repr (a 10 MB argument prints as its start and length)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<{type(value).__name__} nested too deep to repr>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def built_or_raw(factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory``, but when it raises (a framework refusing a hostile value) its first argument, raw."""

    def build(*args: Any) -> Any:
        try:
            return factory(*args)
        except Exception:  # noqa: BLE001  # the framework refused it: hand the raw value over instead
            return args[0]

    return build


def reached_own_code(error: BaseException, own: tuple[str, ...] = OWN_CODE) -> bool:
    """Whether a frame of our own code (a path containing one of ``own``) is on ``error``'s traceback.

    The traceback's first frame (the one that caught ``error``) and this module's frames are
    not counted. ``False`` means the framework raised it: an inherited method such as
    LangGraph's ``BaseStore.list_namespaces(prefix=1)`` fails in LangGraph's own argument
    handling for every store, which is the framework's behaviour, not a finding against the adapter.
    """
    frames: list[FrameType] = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return any(
        part in frame.f_code.co_filename.replace("\\", "/")
        for frame in frames[1:]
        if frame.f_globals.get("__name__") != __name__
        for part in own
    )


def check_hostile_call(
    label: str,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    allowed: tuple[type[BaseException], ...],
    digest: Callable[[], object],
) -> None:
    """Call ``fn(*args, **kwargs)`` (awaiting an awaitable result) and check what escaped.

    A result passes. An :class:`ElasticMemoryError` or one of ``allowed`` (what the framework
    documents for bad input) passes if ``digest()`` (a digest of the store's rows) is what it was
    before the call. Any other exception raised before our code ran (see :func:`reached_own_code`)
    passes on the same condition; one from our code fails. Failures raise :class:`AssertionError`
    naming ``label`` and the arguments.
    """
    documented: tuple[type[BaseException], ...] = (ElasticMemoryError, *allowed)
    before = digest()
    try:
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    except documented as e:
        if digest() != before:
            msg = f"{label}(*{short_repr(args)}, **{short_repr(kwargs)}) raised {e!r} and changed the store"
            raise AssertionError(msg) from e
    except Exception as e:
        if not reached_own_code(e):  # the framework's base class refused the call before any of our code ran
            if digest() != before:
                msg = f"{label} raised {e!r} in the framework and changed the store"
                raise AssertionError(msg) from e
            return
        msg = f"{type(e).__name__} from {label}(*{short_repr(args)}, **{short_repr(kwargs)}): {short_repr(e, 200)}"
        raise AssertionError(msg) from e


async def _awaited(result: Any) -> Any:
    return await result


def reference_bm25(conn: Any, query: str, table: str = "memories_fts") -> dict[int, float]:
    """The score contract's BM25 of every row of FTS5 ``table`` holding a term of ``query``.

    Computed from the index's tokens alone (FTS5's ``fts5vocab`` instance view), with
    k1 1.2, b 0.75, column weights content 1 and tags 0.5 and the IDF
    ``log(1 + (N - n + 0.5) / (n + 0.5))``: an independent check of the store's keyword
    scores. ``conn`` is an open DB-API connection to the database file (it creates temp tables).
    """
    weights = {"content": 1.0, "tags": 0.5}
    ident = '"' + table.replace('"', '""') + '"'
    create = "CREATE VIRTUAL TABLE IF NOT EXISTS temp."
    conn.execute(f"{create}reference_vocab USING fts5vocab(main, {ident}, instance)")
    conn.execute(f"{create}reference_probe USING fts5(word, tokenize='porter unicode61')")
    conn.execute(f"{create}reference_words USING fts5vocab(temp, reference_probe, instance)")
    freq: defaultdict[tuple[int, str], float] = defaultdict(float)
    length: Counter[int] = Counter()
    for term, doc, column in conn.execute("SELECT term, doc, col FROM temp.reference_vocab"):
        freq[(int(doc), str(term))] += weights[str(column)]
        length[int(doc)] += 1
    # N counts every indexed row, those without a token too (one ``_docsize`` row each).
    docsize = '"' + f"{table}_docsize".replace('"', '""') + '"'
    rows = int(conn.execute(f"SELECT count(*) FROM {docsize}").fetchone()[0])
    average = sum(length.values()) / rows if rows else 0.0
    holding = Counter(term for _, term in freq)
    scores: defaultdict[int, float] = defaultdict(float)
    for word in query_terms(query):
        conn.execute("DELETE FROM temp.reference_probe")
        conn.execute("INSERT INTO temp.reference_probe (word) VALUES (?)", (word,))
        tokens = [str(r[0]) for r in conn.execute("SELECT term FROM temp.reference_words")]
        if len(tokens) != 1 or not holding[tokens[0]]:
            continue  # not one token (a phrase: not covered by this reference), or in no row
        term = tokens[0]
        idf = math.log(1 + (rows - holding[term] + 0.5) / (holding[term] + 0.5))
        for (doc, held), f in freq.items():
            if held == term:
                norm = f + 1.2 * (1 - 0.75 + 0.75 * length[doc] / average)
                scores[doc] += idf * f * 2.2 / norm
    return dict(scores)

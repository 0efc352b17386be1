"""Texts into model batches: sorted by length, each batch under a token budget.

A transformer pads a batch to its longest text, and its attention costs grow with the
batch size times the square of that length: 64 texts of 267 tokens held about 1.5 GB of
activations in ONNX Runtime's arena and ran at half the rate of batches of 8 (measured,
``docs/performance.md``). Sorting by length makes each batch's texts alike (little
padding), and the budget keeps the product bounded whatever the corpus holds.
"""

from __future__ import annotations

from collections.abc import Sequence

#: A batch's padded size in tokens (texts times the longest).
BATCH_TOKENS = 2048
#: A batch's attention cost (texts times the longest squared): bounds the activations' memory.
BATCH_ATTENTION = 2048 * 128
#: Texts per batch at most, however short.
MAX_BATCH = 64


def plan(lengths: Sequence[int], *, max_batch: int = MAX_BATCH) -> list[list[int]]:
    """Positions of texts, grouped into batches: shortest first, each within the budgets.

    ``lengths`` are the texts' token counts (as the model will read them: truncated).

    >>> plan([256, 12, 256, 10, 256, 256, 256])
    [[3, 1, 0, 2], [4, 5, 6]]
    >>> [len(b) for b in plan([16] * 100)]
    [64, 36]
    """
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        longest, size = max(1, lengths[i]), len(current) + 1  # ascending: this text is the longest so far
        if current and (
            size > max_batch or size * longest > BATCH_TOKENS or size * longest * longest > BATCH_ATTENTION
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches

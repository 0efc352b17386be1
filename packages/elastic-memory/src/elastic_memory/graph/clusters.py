"""Topic clusters: connected components of the entity graph, by union-find (pure).

>>> components([(1, "Biscuit", 3), (2, "Dr Okonkwo", 1), (3, "Porto", 2)], [(1, 2)])
[(1, 'Biscuit', [1, 2]), (3, 'Porto', [3])]
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["components"]


def components(
    entities: Sequence[tuple[int, str, int]],
    relations: Sequence[tuple[int, int]],
    *,
    skip: frozenset[int] = frozenset(),
) -> list[tuple[int, str, list[int]]]:
    """``(cluster id, label, member ids)`` per connected component, by smallest member id.

    The label is the most mentioned member's name. Entities in ``skip`` (a hub such as the
    user, linked to everything) are left out, so they do not merge every topic into one.
    """
    parent = {e[0]: e[0] for e in entities if e[0] not in skip}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in relations:
        if a in parent and b in parent:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    info = {e[0]: e for e in entities}
    groups: dict[int, list[int]] = {}
    for node in sorted(parent):
        groups.setdefault(root(node), []).append(node)
    out = []
    for cluster_id, members in sorted(groups.items()):
        label = max(members, key=lambda m: (info[m][2], -m))
        out.append((cluster_id, info[label][1], members))
    return out

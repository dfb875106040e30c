"""Unavoidable bit conditions (UBCs) of SHA-1DC's disturbance vectors, derived.

Stevens and Shumow's speed-up: an attack block built on a disturbance vector
(DV) must satisfy certain relations between bits of its expanded message,
whatever else the attacker chooses; a block that breaks one of a DV's
relations cannot be that DV's attack block, so the expensive recompression
for that DV can be skipped.  This module derives such relations from the DV
alone, so no table is copied from anywhere:

In the steps where an attack follows its DV, the XOR difference of every
state word ``A[j]`` is exactly ``DV[j-1]``; the attacker picks the direction
of each flipped bit (``sigma``), the boolean function's output flips in ways
that depend on the state (``tau``: any direction, or none, where an input
flips; in the XOR rounds it flips exactly when an odd number of inputs do), but
the direction of each message-bit flip (``mu``) is fixed by the message: +1
where the block's bit is 0.  Every step's modular equation must hold::

    dA[k+1] = d rol5(A[k]) + d f_k + d rol30(A[k-4]) + dW[k]   (mod 2**32)

For a window of consecutive steps the equations are solved by enumeration,
the attacker's variables are projected away, and every relation
``mu_a * mu_b == const`` that holds in all solutions is a necessary
condition: bit ``a`` XOR bit ``b`` of the expanded message equals 0 or 1.
Only pairwise relations are kept: they hold for both blocks of a colliding
pair (the partner has every ``mu`` negated), single-bit ones do not.

Soundness rests on the attack following the DV's XOR path in steps
``FIRST_STEP..LAST_STEP`` (the attacks' non-linear part is in the first 16 to
20 steps; the last few steps, where a near-collision may tolerate carries,
are left out).  Relaxations (all sound: they only allow more solutions):
unknown f-output directions, equations with too many unknowns are skipped,
variables constrained outside a window are left free.

``python -m gitodb.objects.sha1dc_ubc`` prints the C table the native core
compiles in (``src/gitodb/_native/sha1dc_ubc.h``); a unit test checks it is
what this derivation gives.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable
from operator import itemgetter

from gitodb.objects.sha1dc_ref import DVS, disturbance_vector, message_difference

FIRST_STEP = 24
LAST_STEP = 72
WINDOW = 6  # consecutive step equations solved together
MAX_BINARY = 16  # equations with more binary unknowns are skipped (sound)
MASK = 0xFFFFFFFF

# A condition: (word1, bit1, word2, bit2, parity): W[word1] bit1 ^ W[word2] bit2 == parity.
Condition = tuple[int, int, int, int, int]


def _bits(x: int) -> list[int]:
    return [p for p in range(32) if x >> p & 1]


def _step_equation(
    dv: dict[int, int], dw: list[int], k: int
) -> tuple[list[tuple[str, int, int, int]], set[int]] | None:
    """Step ``k``'s equation as signed terms and the set of f-output values.

    Terms are ``(kind, word, bit, weight_exponent)`` with coefficient +1 on
    the right-hand side (the left side, A[k+1], enters negated as kind "s-").
    Kinds: "s" attacker-chosen bit-flip direction of A[word] bit, "m" the
    message's flip direction of W[word] bit.  Returns None if too large.
    """
    terms: list[tuple[str, int, int, int]] = []
    for p in _bits(dv[k]):  # A[k+1] (left side, moved right)
        terms.append(("s-", k + 1, p, p))
    for p in _bits(dv[k - 1]):  # rol5(A[k])
        terms.append(("s", k, p, (p + 5) % 32))
    for p in _bits(dv[k - 5]):  # e = rol30(A[k-4])
        terms.append(("s", k - 4, p, (p + 30) % 32))
    for p in _bits(dw[k]):  # W[k]
        terms.append(("m", k, p, p))
    # f inputs at step k: b = A[k-1], c = rol30(A[k-2]), d = rol30(A[k-3]).
    flips: dict[int, int] = {}
    for p in _bits(dv[k - 2]):
        flips[p] = flips.get(p, 0) + 1
    for src in (k - 3, k - 4):
        for p in _bits(dv[src]):
            q = (p + 30) % 32
            flips[q] = flips.get(q, 0) + 1
    xor_round = k < 40 or k >= 60
    choices: list[tuple[int, tuple[int, ...]]] = []
    for q, n in flips.items():
        if xor_round:
            choices.append((q, (-1, 1) if n % 2 else (0,)))
        else:
            choices.append((q, (-1, 0, 1)))
    if len(terms) > MAX_BINARY or len(choices) > 8:
        return None
    fvals = set()
    for combo in itertools.product(*(c for _, c in choices)):
        fvals.add(sum(t << q for t, (q, _) in zip(combo, choices, strict=True)) & MASK)
    return terms, fvals


def _equation_relation(
    terms: list[tuple[str, int, int, int]], fvals: set[int]
) -> tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]]:
    """All sign assignments (+1/-1 per variable) that satisfy one step equation."""
    variables: list[tuple[str, int, int]] = []
    coeffs: list[list[tuple[int, int]]] = []
    for kind, word, bit, exp in terms:
        key = ("m" if kind == "m" else "s", word, bit)
        sign = -1 if kind == "s-" else 1
        if key in variables:
            coeffs[variables.index(key)].append((sign, exp))
        else:
            variables.append(key)
            coeffs.append([(sign, exp)])
    solutions = set()
    for values in itertools.product((1, -1), repeat=len(variables)):
        total = 0
        for v, cs in zip(values, coeffs, strict=True):
            for sign, exp in cs:
                total += sign * v << exp
        # Right side must cancel with some f-output difference: sum + f == 0.
        if (-total) & MASK in fvals:
            solutions.add(values)
    return tuple(variables), solutions


def _drop_free(
    rel: tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]],
) -> tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]]:
    """Project out message variables that are free in their (only) equation.

    ``mu[k]`` occurs in step k's equation alone; if flipping it maps solutions
    to solutions it takes part in no relation (a bit-31 flip, for one).
    """
    variables, rows = rel
    keep = []
    for i, v in enumerate(variables):
        if v[0] == "m" and all(r[:i] + (-r[i],) + r[i + 1 :] in rows for r in rows):
            continue
        keep.append(v)
    return _project(rel, keep)


def _join(
    a: tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]],
    b: tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]],
) -> tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]]:
    va, sa = a
    vb, sb = b
    shared = [v for v in vb if v in va]
    extra = [v for v in vb if v not in va]
    ia = [va.index(v) for v in shared]
    ib = [vb.index(v) for v in shared]
    ie = [vb.index(v) for v in extra]
    index: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    for row in sb:
        index.setdefault(tuple(row[i] for i in ib), []).append(tuple(row[i] for i in ie))
    out = set()
    for row in sa:
        for tail in index.get(tuple(row[i] for i in ia), ()):
            out.add(row + tail)
    return va + tuple(extra), out


def _project(
    rel: tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]],
    keep: Iterable[tuple[str, int, int]],
) -> tuple[tuple[tuple[str, int, int], ...], set[tuple[int, ...]]]:
    variables, rows = rel
    wanted = set(keep)
    kept = tuple(v for v in variables if v in wanted)
    if len(kept) == len(variables):
        return rel
    if not kept:
        return kept, {()} if rows else set()
    pick = itemgetter(*[variables.index(v) for v in kept])
    if len(kept) == 1:
        return kept, {(pick(r),) for r in rows}
    return kept, {pick(r) for r in rows}


def derive(dv_type: int, k: int, b: int) -> list[Condition]:
    """The pairwise message-bit conditions every attack block on DV (type, k, b) meets."""
    dv = disturbance_vector(dv_type, k, b)
    dw = message_difference(dv)
    equations = {}
    for step in range(FIRST_STEP, LAST_STEP + 1):
        eq = _step_equation(dv, dw, step)
        if eq is not None:
            equations[step] = _drop_free(_equation_relation(*eq))
    found: list[tuple[tuple[int, int], tuple[int, int], int]] = []
    for start in range(FIRST_STEP, LAST_STEP + 1):
        window = [equations[s] for s in range(start, start + WINDOW) if s in equations]
        if not window:
            continue
        rel = window[0]
        for other in window[1:]:
            rel = _join(rel, other)
            # Keep the relation small: attacker variables no later equation in
            # the window mentions are projected out now.
            later = {v for w in window[window.index(other) + 1 :] for v in w[0]}
            rel = _project(rel, [v for v in rel[0] if v[0] == "m" or v in later])
        rel = _project(rel, [v for v in rel[0] if v[0] == "m"])
        variables, rows = rel
        if not rows:
            raise ValueError(f"DV {(dv_type, k, b)}: no solution in steps {start}..")
        found.extend(_constant_products(variables, rows))
    return _independent(found)


def _constant_products(
    variables: tuple[tuple[str, int, int], ...], rows: set[tuple[int, ...]]
) -> list[tuple[tuple[int, int], tuple[int, int], int]]:
    """Pairs of variables whose product is the same in every row, with that product.

    Two equal columns always agree (product +1), opposite ones always
    disagree (product -1).
    """
    columns = list(zip(*rows, strict=True)) if rows else []
    groups: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for i, col in enumerate(columns):
        # Canonical form: the column with +1 in row 0, and whether it was negated.
        flip = 1 if col[0] < 0 else 0
        groups.setdefault(tuple(-v for v in col) if flip else col, []).append((i, flip))
    out = []
    for members in groups.values():
        for (i, fi), (j, fj) in itertools.combinations(members, 2):
            (_, w1, b1), (_, w2, b2) = variables[i], variables[j]
            # Equal directions <=> equal bits (parity 0); opposite <=> parity 1.
            out.append(((w1, b1), (w2, b2), fi ^ fj))
    return out


def _independent(found: list[tuple[tuple[int, int], tuple[int, int], int]]) -> list[Condition]:
    """A spanning set of the relations (union-find with parity), in a stable order."""
    parent: dict[tuple[int, int], tuple[tuple[int, int], int]] = {}

    def root(x: tuple[int, int]) -> tuple[tuple[int, int], int]:
        parity = 0
        while x in parent:
            x, p = parent[x]
            parity ^= p
        return x, parity

    out: list[Condition] = []
    for a, b, parity in sorted(set(found)):
        ra, pa = root(a)
        rb, pb = root(b)
        if ra == rb:
            if pa ^ pb != parity:
                raise ValueError(f"contradictory conditions on {a} and {b}")
            continue
        parent[rb] = (ra, pa ^ pb ^ parity)
        out.append((a[0], a[1], b[0], b[1], parity))
    return out


def all_conditions() -> list[list[Condition]]:
    """Conditions per DV, in the order of ``sha1dc_ref.DVS``."""
    return [derive(*spec) for spec in DVS]


def satisfied(w: list[int], conditions: list[Condition]) -> bool:
    """True if the expanded message ``w`` meets every condition."""
    return all((w[w1] >> b1 ^ w[w2] >> b2) & 1 == parity for w1, b1, w2, b2, parity in conditions)


def ordered_distinct(per_dv: list[list[Condition]]) -> list[tuple[Condition, int]]:
    """Distinct conditions with the mask of DVs that have each, in checking order.

    A block breaks each condition with probability 1/2, and a DV is dropped
    at its first broken condition, so the native core checks in rounds: every
    DV's most shared condition first, then every DV's next one, and so on;
    it stops as soon as no DV is left.
    """
    masks: dict[Condition, int] = {}
    for n, conds in enumerate(per_dv):
        for c in conds:
            masks[c] = masks.get(c, 0) | 1 << n
    shared = {c: bin(m).count("1") for c, m in masks.items()}
    rank: dict[Condition, int] = {}
    for conds in per_dv:
        for pos, c in enumerate(sorted(conds, key=lambda c: (-shared[c], c))):
            rank[c] = min(rank.get(c, pos), pos)
    order = sorted(masks, key=lambda c: (rank[c], -shared[c], c))
    return [(c, masks[c]) for c in order]


def c_header(per_dv: list[list[Condition]]) -> str:
    """The table for src/gitodb/_native/sha1dc_ubc.h."""
    table = ordered_distinct(per_dv)
    lines = [
        "/* Generated by `python -m gitodb.objects.sha1dc_ubc > sha1dc_ubc.h`: the",
        " * unavoidable bit conditions derived in gitodb/objects/sha1dc_ubc.py, for the",
        " * DVs in the order of dv_specs[] in sha1dc.c.  Do not edit. */",
        f"#define UBC_DV_COUNT {len(per_dv)}",
        f"#define UBC_COUNT {len(table)}",
        "/* {word1, bit1, word2, bit2, parity, DVs having it (bit n: dv_specs[n])}:",
        " * a block can be an attack block for those DVs only if",
        " * ((W[word1] >> bit1) ^ (W[word2] >> bit2)) & 1 == parity. */",
        "static const struct {",
        "    unsigned char w1, b1, w2, b2, parity;",
        "    uint64_t dvs;",
        "} ubc_table[UBC_COUNT] = {",
    ]
    for (w1, b1, w2, b2, parity), mask in table:
        lines.append(f"    {{{w1}, {b1}, {w2}, {b2}, {parity}, 0x{mask:09x}ull}},")
    lines.append("};")
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.stdout.write(c_header(all_conditions()))


if __name__ == "__main__":
    main()

"""``parse_commit_links``: the fast path gives what Git's rule-by-rule reading gives."""

from __future__ import annotations

import pytest

from gitodb.errors import ObjectParseError
from gitodb.objects.commit import parse_commit_links
from gitodb.objects.format import SHA1, SHA256

T = "a" * 40
P1 = "b" * 40
P2 = "C" * 40  # upper case: Git's get_oid_hex accepts it


@pytest.mark.parametrize(
    "body,parents,pos",
    [
        (f"tree {T}\nauthor x\n", [], 46),
        (f"tree {T}\nparent {P1}\nauthor x\n", [P1], 94),
        (f"tree {T}\nparent {P1}\nparent {P2}\nx", [P1, P2], 142),
        (f"tree {T}\nparent {P1}\nparent {P2}\n\n", [P1, P2], 142),
    ],
)
def test_links(body: str, parents: list[str], pos: int) -> None:
    tree, got, end = parse_commit_links(body.encode(), SHA1)
    assert tree == bytes.fromhex(T)
    assert got == [bytes.fromhex(p) for p in parents]
    assert end == pos


@pytest.mark.parametrize(
    "body,reason",
    [
        (f"tree {T}\nparent {P1}\n", "bad-parents"),  # nothing after the parent line
        (f"tree {T}\nparent {'z' * 40}\nx", "bad-parents"),  # not hex
        (f"tree {T}\nparent {P1[:39]}\nx", "bad-parents"),  # short
        (f"tree {'g' * 40}\nx", "bad-tree"),
        (f"tree {T}", "bogus"),
        ("parent x\n", "bogus"),
    ],
)
def test_errors(body: str, reason: str) -> None:
    with pytest.raises(ObjectParseError) as e:
        parse_commit_links(body.encode(), SHA1)
    assert e.value.reason == reason


def test_sha256() -> None:
    t, p = "1" * 64, "2" * 64
    tree, parents, end = parse_commit_links(f"tree {t}\nparent {p}\nx".encode(), SHA256)
    assert (tree.hex(), [x.hex() for x in parents], end) == (t, [p], 5 + 64 + 1 + 7 + 64 + 1)

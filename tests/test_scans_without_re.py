"""The scans that read config files, refs, names and commits without ``re`` give what
the expressions they replace give (``gitodb.repo.config``'s section header, variable
name and number; ``gitodb.refs``' hex id and pseudoref checks; ``gitodb.repo.revparse``'s
pseudoref syntax; ``parse_commit_links``' fast path)."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gitodb.refs import loose, worktree
from gitodb.repo import config

_HEADER = st.lists(
    st.sampled_from(
        ["[", "]", " ", "\t", '"', "\\", "a", "Z", "0", ".", "-", "_", "é", "\n", "x y"]
    ),
    max_size=12,
).map(lambda parts: "[" + "".join(parts))


@settings(max_examples=1500)
@given(_HEADER)
@example("[core]")
@example('[remote "origin"]  x = 1')
@example('[a "b\\"c" ] ; rest')
@example('[a "b\\')
@example('[a"b"]')
@example("[a.b]")
def test_section_header_is_the_expression(text: str) -> None:
    m = re.compile(config._SECTION.pattern).match(text)  # noqa: SLF001
    assert config._section_header(text) == (m.groups() if m else None)  # noqa: SLF001


@given(st.text(alphabet="az09-_.AÄ ", max_size=6))
def test_variable_name_is_the_expression(name: str) -> None:
    assert config._is_var(name) == bool(re.fullmatch(r"[a-z][a-z0-9-]*", name))  # noqa: SLF001


_NUMBERS = st.lists(
    st.sampled_from(
        [" ", "\t", "\v", "+", "-", "0", "1", "7", "8", "9", "x", "X", "a", "F", "g", "k", "M", "٣"]
    ),
    max_size=8,
).map("".join)


@settings(max_examples=1500)
@given(_NUMBERS)
@example("0x")
@example("0x1g")
@example("019")
@example(" -12k")
def test_number_is_the_expression(text: str) -> None:
    m = re.compile(config._NUMBER.pattern).fullmatch(text)  # noqa: SLF001
    assert config._number(text) == (m.groups() if m else None)  # noqa: SLF001


@given(st.binary(max_size=6) | st.text(alphabet="09afAFgG", max_size=6).map(str.encode))
def test_hex_id_check_is_the_expression(text: bytes) -> None:
    assert loose.is_hex(text) == bool(re.fullmatch(rb"[0-9a-fA-F]+", text))


@given(st.text(alphabet="AZ_-aé/", max_size=6))
def test_pseudoref_syntax_is_the_expression(name: str) -> None:
    want = name.startswith(("refs/worktree/", "refs/bisect/", "refs/rewritten/")) or bool(
        re.fullmatch(r"[A-Z_-]+", name)
    )
    assert worktree.is_per_worktree(name) == want


@given(st.text(alphabet="AZ_az09H", max_size=6))
def test_revparse_pseudoref_syntax_is_the_expression(name: str) -> None:
    from gitodb.repo import revparse

    want = bool(re.fullmatch(r"[A-Z][A-Z_]*HEAD|[A-Z][A-Z_]*", name))
    assert revparse._pseudoref_syntax(name) == want  # noqa: SLF001


def _links_by_expression(buf: bytes, hexsz: int) -> tuple[bytes, list[bytes], int] | None:
    """The fast path ``parse_commit_links`` had: two expressions."""
    m = re.match(rb"tree ([0-9a-fA-F]{%d})\n((?:parent [0-9a-fA-F]{%d}\n)*)" % (hexsz, hexsz), buf)
    if m is None or m.end() >= len(buf) or buf.startswith(b"parent ", m.end()):
        return None
    parents = re.findall(rb"parent ([0-9a-fA-F]{%d})\n" % hexsz, m.group(2))
    return bytes.fromhex(m.group(1).decode()), [bytes.fromhex(p.decode()) for p in parents], m.end()


_ID = st.sampled_from(["a" * 40, "0123456789abcdefABCD" * 2, "g" * 40, "a" * 39])
_COMMIT_LINE = st.one_of(
    st.builds(lambda i: f"tree {i}\n", _ID),
    st.builds(lambda i: f"parent {i}\n", _ID),
    st.sampled_from(["author x\n", "parent \n", "\n", "tree", "parent"]),
)


@settings(max_examples=800)
@given(st.lists(_COMMIT_LINE, max_size=5).map(lambda lines: "".join(lines).encode()))
def test_commit_links_without_re_as_with_it(buf: bytes) -> None:
    """``parse_commit_links`` reads the usual layout without ``re``, as its expressions
    did; whatever they refused goes to the rule-by-rule reading (the same answer or
    the same error)."""
    from gitodb.errors import ObjectParseError
    from gitodb.objects.commit import parse_commit_links
    from gitodb.objects.format import SHA1

    want = _links_by_expression(buf, 40)
    try:
        got = parse_commit_links(buf, SHA1)
    except ObjectParseError:
        assert want is None
        return
    if want is not None:
        assert got == want

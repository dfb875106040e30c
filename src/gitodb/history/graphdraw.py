"""``--graph``: the text-art history drawn to the left of each commit of a walk.

:class:`GraphDrawer` is a state machine, fed one commit at a time (in the order
the walk prints them) with the parents the graph should draw (Git's
"interesting" parents: those the walk will show, or with ``--boundary`` those
whose child was shown).  Between two commits it hands out the lines Git draws:

- *pre-commit* rows that widen the space around an octopus merge whose columns
  have branch lines to their right;
- the *commit* row: ``*`` (or the ``<``/``>``/``o`` mark) in the commit's column,
  ``-`` and ``.`` for the extra parents of an octopus;
- a *post-merge* row of ``\\`` (and ``|``/``/`` for a merge skewed left, with
  ``_`` when its first parent lies further left);
- *collapsing* rows that move branch lines left (``/``, ``_``) until each is in
  its column; then *padding* rows of ``|`` for the text that follows.

Columns hold the commits expected next; ``mapping`` says, for each character
position of the row being drawn, which column of the next row the branch line
there belongs to.  The ``show_*`` methods return what Git's ``graph_show_*``
functions write, so a command can interleave them with its own text in Git's
order (``gitodb.cli.rev_list``, ``gitodb.cli.log``).

Colours are not drawn: the commands refuse ``--color`` with ``--graph``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from gitodb.history.graph import Node
    from gitodb.history.revwalk import RevWalk

__all__ = ["GraphDrawer", "GraphLog", "graph_colors", "graph_parents", "commit_mark"]

#: Git's default column colours: red, green, yellow, blue, magenta, cyan, then bold
DEFAULT_COLORS = [b"\x1b[%sm" % c for c in (b"31", b"32", b"33", b"34", b"35", b"36")] + [
    b"\x1b[1;%sm" % c for c in (b"31", b"32", b"33", b"34", b"35", b"36")
]


def graph_colors(config: str | None) -> list[bytes]:
    """The column colours ``log.graphColors`` names (comma-separated; an invalid
    one is warned about and skipped, as Git does), else Git's defaults."""
    if config is None:
        return list(DEFAULT_COLORS)
    import sys

    from gitodb.repo.refformat.color import parse_color

    out = []
    for spec in config.split(","):
        code = parse_color(spec)
        if code is None:
            sys.stderr.write(
                f"error: invalid color value: {spec}\n"
                f"warning: ignored invalid color '{spec}' in log.graphColors\n"
            )
        else:
            out.append(code.encode())
    return out


# the states: which kind of row comes next
PADDING, SKIP, PRE_COMMIT, COMMIT, POST_MERGE, COLLAPSING = range(6)

# a merge's post-merge row: the first parent's edge by the merge's layout
_MERGE_CHARS = b"/|\\"


class GraphDrawer:
    """The graph beside a walk's commits; see the module docstring.

    Commits are any hashable ids (the walk's raw ids); only identity matters.
    """

    def __init__(self, colors: Sequence[bytes] | None = None) -> None:
        # colors: one escape sequence per column colour (None: no colour); each
        # line character is followed by a reset
        self.colors = list(colors) if colors else None
        self._extra = 0  # escape bytes in the row being drawn (not on screen)
        self.color = len(self.colors) - 1 if self.colors else 0  # the last handed out
        self.commit: Hashable | None = None
        self.mark = b"*"
        self.parents: Sequence[Hashable] = ()  # the interesting parents, in order
        self.width = 0  # of the widest row for this commit (rows are padded to it)
        self.expansion_row = 0
        self.state = PADDING
        self.prev_state = PADDING
        self.commit_index = 0
        self.prev_commit_index = 0
        # -1 before a merge's first parent is placed; 0: the first parent is to
        # the left (the merge is skewed), 1: it is below
        self.merge_layout = 0
        self.edges_added = 0  # columns the commit adds (-1: its edge joins the last)
        self.prev_edges_added = 0
        self.columns: list[Hashable] = []  # this row's columns
        self.new_columns: list[Hashable] = []  # the next row's
        self.col_colors: list[int] = []  # their colours
        self.new_colors: list[int] = []
        self.mapping: list[int] = []
        self.old_mapping: list[int] = []
        self.mapping_size = 0
        self._new_index: dict[Hashable, int] = {}  # new_columns' positions

    # -- feeding -----------------------------------------------------------------
    def update(self, commit: Hashable, parents: Sequence[Hashable], mark: bytes = b"*") -> None:
        """The next commit, its interesting parents, and the mark drawn for it."""
        self.commit = commit
        self.mark = mark
        self.parents = parents
        self.prev_commit_index = self.commit_index
        self._update_columns()
        self.expansion_row = 0
        # prev_state is left alone: no row of the new state was drawn yet.  A
        # commit whose rows were not all taken is followed by a "..." row.
        if self.state != PADDING:
            self.state = SKIP
        elif self._needs_pre_commit():
            self.state = PRE_COMMIT
        else:
            self.state = COMMIT

    def _update_columns(self) -> None:
        self.columns, self.new_columns = self.new_columns, []
        self.col_colors, self.new_colors = self.new_colors, []
        self._new_index = {}
        columns = self.columns
        commit = self.commit
        nparents = len(self.parents)
        ncols = len(columns)
        size = 2 * (ncols + nparents)
        for m in (self.mapping, self.old_mapping):
            if len(m) < size:
                m.extend([-1] * (size - len(m)))
        mapping = self.mapping
        mapping[:size] = [-1] * size
        self.mapping_size = size
        self.width = 0
        self.prev_edges_added = self.edges_added
        self.edges_added = 0
        # Each column moves on (its commit is still to come) unless it is this
        # commit's, which gives way to the commit's parents; a commit no column
        # waits for starts a column of its own at the right.
        try:
            at = columns.index(commit)
        except ValueError:
            at = ncols
        new = self.new_columns
        index = self._new_index
        colors = self.col_colors if self.colors else None
        new_colors = self.new_colors
        # the lines left of the commit keep their places (none is a parent yet)
        left = columns[:at]
        new.extend(left)
        index.update(zip(left, range(at), strict=True))
        mapping[0 : 2 * at : 2] = range(at)
        if colors is not None:
            new_colors.extend(colors[:at])
        self.width, self.edges_added = 2 * at, 0
        self.commit_index = at
        self.merge_layout = -1
        for p in self.parents:
            # a merge's parents and a new line each get the next colour
            if self.colors and (nparents > 1 or at == ncols):
                self.color = (self.color + 1) % len(self.colors)
            self._insert(p, at)
        if not nparents:
            self.width += 2  # the commit takes its column
        width, edges_added = self.width, self.edges_added
        right = columns[at + 1 :]
        if index.keys().isdisjoint(right):
            # no line to the right is a parent: each keeps a column of its own
            base = len(new)
            new.extend(right)
            index.update(zip(right, range(base, base + len(right)), strict=True))
            mapping[width : width + 2 * len(right) : 2] = range(base, base + len(right))
            width += 2 * len(right)
            if colors is not None:
                new_colors.extend(colors[at + 1 :])
            right = []
        for i, here in enumerate(right, at + 1):
            # a line passing by: it keeps its place, or joins a parent's column
            j = index.get(here)
            if j is None:
                j = index[here] = len(new)
                new.append(here)
                if colors is not None:
                    new_colors.append(colors[i])
            if edges_added > 0 and j == mapping[width - 2]:
                mapping[width - 2] = j
                edges_added = -1
            else:
                mapping[width] = j
                width += 2
        self.width, self.edges_added = width, edges_added
        while self.mapping_size > 1 and mapping[self.mapping_size - 1] < 0:
            self.mapping_size -= 1

    def _insert(self, commit: Hashable, idx: int) -> None:
        """Put a parent of the commit in the next row's columns (once) and map the
        current character position to it; ``idx`` is the commit's column."""
        i = self._new_index.get(commit)
        if i is None:
            i = self._new_index[commit] = len(self.new_columns)
            self.new_columns.append(commit)
            if self.colors:
                try:
                    color = self.col_colors[self.columns.index(commit)]
                except ValueError:
                    color = self.color
                self.new_colors.append(color)
        mapping = self.mapping
        if len(self.parents) > 1 and idx > -1 and self.merge_layout == -1:
            # a merge's first parent: the layout depends on whether it already
            # has a column to the merge's left
            dist = idx - i
            shift = 2 * dist - 3 if dist > 1 else 1
            self.merge_layout = 0 if dist > 0 else 1
            self.edges_added = len(self.parents) + self.merge_layout - 2
            at = self.width + (self.merge_layout - 1) * shift
            self.width += 2 * self.merge_layout
        elif self.edges_added > 0 and i == mapping[self.width - 2]:
            # the last parent joins the column just left of it at once
            at = self.width - 2
            self.edges_added = -1
        else:
            at = self.width
            self.width += 2
        mapping[at] = i

    def _dashed_parents(self) -> int:
        return len(self.parents) + self.merge_layout - 3

    def _needs_pre_commit(self) -> bool:
        return (
            len(self.parents) >= 3
            and self.commit_index < len(self.columns) - 1
            and self.expansion_row < self._dashed_parents() * 2
        )

    def _mapping_correct(self) -> bool:
        for i, target in enumerate(self.mapping[: self.mapping_size]):
            if target >= 0 and target != i >> 1:
                return False
        return True

    def is_finished(self) -> bool:
        """Whether every row of the current commit has been handed out."""
        return self.state == PADDING

    # -- rows ----------------------------------------------------------------------
    def next_line(self) -> tuple[bytes, bool]:
        """The next row (padded to the commit's width) and whether it is the commit's."""
        if self.commit is None:
            return b"", False
        state = self.state
        is_commit = False
        self._extra = 0
        if state == PADDING:
            if self.colors:
                row = b"".join(self._c(c, b"|") + b" " for c in self.new_colors)
            else:
                row = b"| " * len(self.new_columns)
        elif state == SKIP:
            row = b"..."
            self.prev_state, self.state = (
                state,
                (PRE_COMMIT if self._needs_pre_commit() else COMMIT),
            )
        elif state == PRE_COMMIT:
            row = self._pre_commit_row()
        elif state == COMMIT:
            row = self._commit_row()
            is_commit = True
        elif state == POST_MERGE:
            row = self._post_merge_row()
        else:
            row = self._collapsing_row()
        if len(row) - self._extra < self.width:
            row += b" " * (self.width - len(row) + self._extra)
        return row, is_commit

    def _c(self, color: int, ch: bytes) -> bytes:
        """A line character in a column's colour."""
        colors = self.colors
        if not colors:
            return ch
        code = colors[color] + ch + b"\x1b[m"
        self._extra += len(code) - 1
        return code

    def _set_state(self, state: int) -> None:
        self.prev_state, self.state = self.state, state

    def _pre_commit_row(self) -> bytes:
        out = bytearray()
        seen = False
        row = self.expansion_row
        colors = self.col_colors if self.colors else None
        for i, col in enumerate(self.columns):
            color = colors[i] if colors else 0
            if col == self.commit:
                seen = True
                out += self._c(color, b"|") + b" " * row
            elif seen and row == 0:
                # after a merge's post-merge row, the lines right of it stay "\"
                if self.prev_state == POST_MERGE and self.prev_commit_index < i:
                    out += self._c(color, b"\\")
                else:
                    out += self._c(color, b"|")
            elif seen:
                out += self._c(color, b"\\")
            else:
                out += self._c(color, b"|")
            out += b" "
        self.expansion_row += 1
        if not self._needs_pre_commit():
            self._set_state(COMMIT)
        return bytes(out)

    def _commit_row(self) -> bytes:
        columns = self.columns
        n = len(columns)
        at = self.commit_index  # the commit's column (n: a column of its own)
        mark = self.mark + (self._octopus_dashes() if len(self.parents) > 2 else b"")
        edges = self.edges_added
        # a merge skewed right (or an octopus skewed left) has no pre-commit row:
        # a "\" coming from the merge row before is kept
        keep_back = self.prev_state == POST_MERGE and self.prev_edges_added > 0
        back_from = self.prev_commit_index + 1 if keep_back else n
        # after a collapsing row, a line that just moved into place is drawn "/"
        collapsing = self.prev_state == COLLAPSING
        if not self.colors and not collapsing:
            right = n - at - 1 if at < n else 0
            if edges > 1:
                tail = b"\\ " * right
            elif edges == 1:
                plain = min(max(back_from - at - 1, 0), right)
                tail = b"| " * plain + b"\\ " * (right - plain)
            else:
                tail = b"| " * right
            out = b"| " * at + mark + b" " + tail
        else:
            old, mapping = self.old_mapping, self.mapping
            pieces = []
            for i in range(n):
                if i == at:
                    pieces.append(mark)
                    continue
                if i > at and edges > 1:
                    ch = b"\\"
                elif i > at and edges == 1:
                    ch = b"\\" if i >= back_from else b"|"
                elif collapsing and old[2 * i + 1] == i and mapping[2 * i] < i:
                    ch = b"/"
                else:
                    ch = b"|"
                pieces.append(self._c(self.col_colors[i], ch) if self.colors else ch)
            if at == n:
                pieces.append(mark)
            out = b" ".join(pieces) + b" "
        if len(self.parents) > 1:
            self._set_state(POST_MERGE)
        elif self._mapping_correct():
            self._set_state(PADDING)
        else:
            self._set_state(COLLAPSING)
        return out

    def _post_merge_row(self) -> bytes:
        out = bytearray()
        seen = False
        columns = self.columns
        commit = self.commit
        first = self.parents[0]
        first_seen_left = False  # the first parent's column lies left of the merge
        first_color = 0
        nparents = len(self.parents)
        for i in range(len(columns) + 1):
            if i == len(columns):
                if seen:
                    break
                here = commit
            else:
                here = columns[i]
            if here == commit:
                seen = True
                idx = self.merge_layout
                for j in range(nparents):
                    if self.colors:
                        k = self.new_columns.index(self.parents[j])
                        out += self._c(self.new_colors[k], _MERGE_CHARS[idx : idx + 1])
                    else:
                        out.append(_MERGE_CHARS[idx])
                    if idx == 2:
                        if self.edges_added > 0 or j < nparents - 1:
                            out += b" "
                    else:
                        idx += 1
                if self.edges_added == 0:
                    out += b" "
            elif seen:
                out += self._c(self._col_color(i), b"\\" if self.edges_added > 0 else b"|")
                out += b" "
            else:
                out += self._c(self._col_color(i), b"|")
                if self.merge_layout != 0 or i != self.commit_index - 1:
                    out += self._c(first_color, b"_") if first_seen_left else b" "
            if here == first:
                first_seen_left = True
                first_color = self._col_color(i)
        if self._mapping_correct():
            self._set_state(PADDING)
        else:
            self._set_state(COLLAPSING)
        return bytes(out)

    def _collapsing_row(self) -> bytes:
        # the row's targets become the previous ones; the new ones are worked out
        self.mapping, self.old_mapping = self.old_mapping, self.mapping
        mapping, old = self.mapping, self.old_mapping
        size = self.mapping_size
        for i in range(size):
            mapping[i] = -1
        horizontal = -1  # where the one horizontal edge of the row is
        horizontal_target = -1
        for i in range(size):
            target = old[i]
            if target < 0:
                continue
            # lines only ever move left, so one of two crossing lines is straight
            if target * 2 == i:
                mapping[i] = target  # in place
            elif mapping[i - 1] < 0:
                mapping[i - 1] = target  # nothing to the left: move one left
                if horizontal == -1:
                    horizontal, horizontal_target = i, target
                    for j in range(target * 2 + 3, i - 2, 2):
                        mapping[j] = target
            elif mapping[i - 1] == target:
                pass  # joins the line to its left, which has the same target
            else:
                # crosses the line to its left (the space left of that is free)
                mapping[i - 2] = target
                if horizontal == -1:
                    horizontal, horizontal_target = i - 1, target
                    for j in range(target * 2 + 3, i - 2, 2):
                        mapping[j] = target
        old[:size] = mapping[:size]
        if mapping[size - 1] < 0:
            size -= 1
            self.mapping_size = size
        out = bytearray()
        used_horizontal = False
        for i in range(size):
            target = mapping[i]
            if target < 0:
                out += b" "
            elif target * 2 == i:
                out += self._c(self._new_color(target), b"|")
            elif target == horizontal_target and i != horizontal - 1:
                # only the first segment of a horizontal edge goes on below
                if i != target * 2 + 3:
                    mapping[i] = -1
                used_horizontal = True
                out += self._c(self._new_color(target), b"_")
            else:
                if used_horizontal and i < horizontal:
                    mapping[i] = -1
                out += self._c(self._new_color(target), b"/")
        if self._mapping_correct():
            self._set_state(PADDING)
        return bytes(out)

    def _col_color(self, i: int) -> int:
        return self.col_colors[i] if self.colors else 0

    def _new_color(self, i: int) -> int:
        return self.new_colors[i] if self.colors else 0

    def _octopus_dashes(self) -> bytes:
        """``-`` and a final ``.`` for each parent beyond the second (fewer for a
        merge skewed left), each in the colour of the line it becomes."""
        dashes = self._dashed_parents()
        if not self.colors:
            return b"--" * (dashes - 1) + b"-." if dashes > 0 else b""
        out = bytearray()
        for i in range(dashes):
            color = self.new_colors[self.mapping[(self.commit_index + i + 2) * 2]]
            out += self._c(color, b"-")
            out += self._c(color, b"." if i == dashes - 1 else b"-")
        return bytes(out)

    def padding_line(self) -> bytes:
        """Git's ``graph_padding_line``: a row that changes no line (on the commit's
        row, the columns before it; otherwise simply the next row)."""
        if self.state != COMMIT:
            return self.next_line()[0]
        out = bytearray()
        self._extra = 0
        wide = len(self.parents) > 2
        for i, col in enumerate(self.columns):
            out += self._c(self._col_color(i), b"|")
            out += b" " * ((len(self.parents) - 2) * 2) if wide and col == self.commit else b" "
        if len(out) - self._extra < self.width:
            out += b" " * (self.width - len(out) + self._extra)
        self.prev_state = PADDING
        return bytes(out)

    # -- what Git's graph_show_* functions write -----------------------------------
    def show_commit(self) -> bytes:
        """The rows before the commit's and the commit's own (no newline after it)."""
        if self.is_finished():
            return self.padding_line()
        out = []
        while True:
            row, is_commit = self.next_line()
            out.append(row)
            if is_commit:
                break
            out.append(b"\n")
            if self.is_finished():
                break
        return b"".join(out)

    def show_oneline(self) -> bytes:
        """The next row, to put before a line of text (no newline)."""
        return self.next_line()[0]

    def show_padding(self) -> bytes:
        """A padding row (no newline)."""
        return self.padding_line()

    def show_remainder(self) -> tuple[bytes, bool]:
        """The commit's rows still to come, joined by newlines (none after the
        last), and whether there were any."""
        if self.is_finished():
            return b"", False
        out = []
        while True:
            out.append(self.next_line()[0])
            if self.is_finished():
                break
            out.append(b"\n")
        return b"".join(out), True

    def show_commit_msg(self, text: bytes) -> bytes:
        """``text`` with a row before each line but the first, then the rows left
        (ending with a newline if ``text`` does)."""
        out = []
        start = 0
        end = len(text)
        while start < end:
            nl = text.find(b"\n", start)
            if nl < 0:
                out.append(text[start:])
                break
            out.append(text[start : nl + 1])
            start = nl + 1
            if start < end:
                out.append(self.show_oneline())
        if not self.is_finished():
            terminated = text.endswith(b"\n")
            if not terminated:
                out.append(b"\n")
            out.append(self.show_remainder()[0])
            if terminated:
                out.append(b"\n")
        return b"".join(out)


def graph_parents(walk: RevWalk, node: Node) -> list[bytes]:
    """The parents of ``node`` the graph draws (Git's interesting parents): those
    the walk will show and, with ``--boundary``, those a shown commit has as a
    parent; with ``--first-parent``, the first parent only."""
    from gitodb.history.graph import CHILD_SHOWN

    boundary = walk.boundary
    out: list[bytes] = []
    for p in node.parents:
        if (boundary and p.flags & CHILD_SHOWN) or walk.would_show(p):
            out.append(p.id)
        if walk.first_parent:
            break
    return out


def commit_mark(node: Node, left_right: bool) -> bytes:
    """The commit's character: ``o`` on the boundary, ``<``/``>`` with
    ``--left-right``, else ``*``."""
    from gitodb.history.graph import BOUNDARY, SYMMETRIC_LEFT

    if node.flags & BOUNDARY:
        return b"o"
    if left_right:
        return b"<" if node.flags & SYMMETRIC_LEFT else b">"
    return b"*"


class GraphLog:
    """``log --graph``: each entry's text with the graph rows, in the order Git's
    ``show_log`` writes them (``use_terminator``: each entry ends with a newline,
    as ``oneline`` and ``tformat:`` do; otherwise a newline separates entries)."""

    def __init__(
        self,
        walk: RevWalk,
        use_terminator: bool,
        left_right: bool = False,
        colors: Sequence[bytes] | None = None,
    ) -> None:
        self.walk = walk
        self.drawer = GraphDrawer(colors)
        self.use_terminator = use_terminator
        self.left_right = left_right
        self.shown_one = False
        self.missing_newline = False

    def entry(self, node: Node, head: bytes, message: bytes, empty_format: bool = False) -> bytes:
        """The bytes for ``node``: ``head`` is the header (``commit <id>`` and a
        newline, ``<id> `` for oneline, empty for a user format), ``message`` what
        the format gives."""
        drawer = self.drawer
        drawer.update(node.id, graph_parents(self.walk, node), commit_mark(node, self.left_right))
        out = []
        if self.shown_one and not self.use_terminator:
            if not self.missing_newline:
                out.append(drawer.show_padding())
            out.append(b"\n")
        self.shown_one = True
        out.append(drawer.show_commit())
        out.append(head)
        if head.endswith(b"\n"):
            out.append(drawer.show_oneline())
        self.missing_newline = not message.endswith(b"\n")
        out.append(drawer.show_commit_msg(message))
        if self.use_terminator and not empty_format:
            if not self.missing_newline:
                out.append(drawer.show_padding())
            out.append(b"\n")
        return b"".join(out)

"""Type stub for the native core (src/gitodb/_native/*.c)."""

from array import array
from collections.abc import Callable, Sequence
from mmap import mmap
from typing import Any, overload

SHA1DC_DV_COUNT: int
SHA1DC_UBC_COUNT: int

class CollisionError(ValueError): ...

class sha1dc:
    name: str
    digest_size: int
    block_size: int
    @property
    def collision(self) -> bool: ...
    def __init__(
        self,
        data: bytes | bytearray | memoryview = ...,
        *,
        safe_hash: bool = ...,
        detect: bool = ...,
        detect_all: bool = ...,
        usedforsecurity: bool = ...,
    ) -> None: ...
    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...
    def copy(self) -> sha1dc: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def result(self) -> tuple[bytes, bool]: ...

def set_collision_error(cls: Callable[[str], BaseException], /) -> None: ...
def sha1dc_kernel() -> str: ...
def use_sha1dc_kernel(name: str, /) -> None: ...

# -- the delta-base cache (src/gitodb/_native/cache.c) ------------------------------
class DeltaCache:
    limit: int
    size: int
    entries: dict[int, tuple[int, bytes]]
    def __init__(self, limit: int = ...) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object) -> bool: ...
    def get(self, key: int, /) -> tuple[int, bytes] | None: ...
    def put(self, key: int, type_num: int, data: bytes, /) -> None: ...
    def pop(self, key: int, /) -> tuple[int, bytes] | None: ...
    def discard_if(self, drop: Callable[[int], bool], /) -> None: ...
    def clear(self) -> None: ...
    def new_pack_key(self) -> int: ...

class PendingBases:
    cache: DeltaCache
    pending: dict[int, int]
    def __init__(self, cache: DeltaCache, pending: dict[int, int], /) -> None: ...
    def get(self, key: int, /) -> tuple[int, bytes] | None: ...
    def put(self, key: int, type_num: int, data: bytes, /) -> None: ...

# -- the pack loops (src/gitodb/_native/pack.c) -----------------------------------
_Buffer = bytes | bytearray | memoryview | mmap | array[Any]

def apply_delta(base: _Buffer, delta: _Buffer, /) -> bytes: ...
def delta_sizes(delta: _Buffer, /) -> tuple[int, int, int]: ...
def parse_entry_header(
    buf: _Buffer, offset: int, path: str | None = ..., /
) -> tuple[int, int, int]: ...
def parse_ofs_distance(buf: _Buffer, offset: int, path: str | None = ..., /) -> tuple[int, int]: ...
def rev_order(offsets: _Buffer, /) -> bytes: ...
def gather_u64(values: _Buffer, order: _Buffer, /) -> bytes: ...
def scan_headers(
    buf: _Buffer,
    sorted_offsets: _Buffer,
    rev: _Buffer,
    data_end: int,
    rawsz: int,
    path: str | None,
    /,
) -> tuple[bytearray, bytearray, bytes, bytes, bytes]: ...
def check_lines(
    oids: list[bytes] | tuple[_Buffer, int, int, int, int],
    types: _Buffer,
    sizes: _Buffer,
    positions: _Buffer | None,
    /,
) -> bytes: ...
def find_oid(
    table: _Buffer, start: int, stride: int, rawsz: int, lo: int, hi: int, oid: _Buffer, /
) -> int: ...
def pack_headers(
    idx: _Buffer,
    layout: tuple[int, int, int, int, int, int, int, int, int],
    pack: _Buffer,
    data_end: int,
    oids: list[bytes] | _Buffer,
    types: _Buffer,
    sizes: _Buffer,
    want_size: bool = True,
    /,
) -> int: ...
def packed_refs_table(
    data: _Buffer, hexsz: int, /
) -> tuple[bytes, bytes, bytes, bytes, bytes] | bool | None: ...
def ref_table_overlay(
    table: tuple[bytes, bytes, bytes, bytes, bytes],
    rawsz: int,
    names: list[bytes],
    ids: list[bytes | None],
    /,
) -> tuple[bytes, bytes, bytes, bytes, bytes]: ...
def format_ref_table(
    plan: tuple[tuple[int, bytes], ...],
    table: tuple[bytes, bytes, bytes, bytes, bytes],
    rawsz: int,
    lo: int,
    hi: int,
    reverse: bool,
    types: _Buffer,
    sizes: _Buffer,
    omit_empty: bool,
    /,
) -> bytes: ...
def packed_refs_plain(
    data: _Buffer, hexsz: int, ref_type: type[Any], /
) -> dict[str, Any] | None: ...
def packed_refs_lines_plain(data: _Buffer, start: int, hexsz: int, /) -> bool: ...
def ref_block_records(
    buf: _Buffer,
    pos: int,
    end: int,
    hash_size: int,
    min_update_index: int,
    record_type: type[Any],
    target: bytes,
    /,
) -> list[Any] | None: ...
def ref_blocks_table(
    buf: _Buffer, spans: list[tuple[int, int]], hash_size: int, /
) -> tuple[tuple[bytes, bytes, bytes, bytes, bytes], list[bytes], list[bytes]] | None: ...
def format_refs(
    plan: tuple[tuple[int, bytes], ...],
    names: list[str] | list[bytes],
    oids: list[bytes],
    types: _Buffer,
    sizes: _Buffer,
    peeled: list[tuple[bytes, int, int] | None] | None,
    omit_empty: bool,
    /,
) -> bytes: ...
def mark_present(
    table: _Buffer,
    fan_start: int,
    start: int,
    stride: int,
    rawsz: int,
    oids: _Buffer,
    marks: bytearray,
    tag: int,
    positions: _Buffer | None,
    /,
) -> int: ...
def first_unordered_u64(values: _Buffer, /) -> int: ...
def first_at_least_u32(values: _Buffer, limit: int, /) -> int: ...
def walk_pack(
    buf: _Buffer,
    sorted_offsets: _Buffer,
    k: int,
    data_end: int,
    inflate: Callable[[memoryview, int], bytes] | None,
    cache: Any,
    key_base: int,
    max_items: int,
    max_bytes: int,
    id_table: tuple[Any, int, int, int, int],
    rev: _Buffer,
    /,
) -> tuple[int, int, list[tuple[bytes, int, int, bytes | None]]]: ...
def ofs_base_counts(
    buf: _Buffer, sorted_offsets: _Buffer, data_end: int, key_base: int, /
) -> dict[int, int]: ...

# -- idorder.c: every object of a pack in id order (PackFile.iter_objects_id_order) ------
def delta_bases(buf: _Buffer, sorted_offsets: _Buffer, data_end: int, /) -> bytes: ...

class IdOrderWalk:
    def __init__(
        self,
        buf: _Buffer,
        sorted_offsets: _Buffer,
        data_end: int,
        inflate: Callable[[memoryview, int], bytes] | None,
        bases: _Buffer,
        id_table: tuple[Any, int, int, int, int],
        rev: _Buffer,
        limit: int,
        /,
    ) -> None: ...
    def next(
        self, max_items: int, max_bytes: int, /
    ) -> list[tuple[bytes, int, int, bytes | None]]: ...
    def records(
        self, max_items: int, max_bytes: int, /
    ) -> tuple[list[bytes], tuple[bytes, int] | None]: ...
    @property
    def size(self) -> int: ...
    @property
    def limit(self) -> int: ...

# -- heads.c: present only when zlib's header and library were found at build time ------
ZLIB_VERSION: str | None
ZLIB_RUNTIME_VERSION: str | None

def delta_result_sizes(
    buf: _Buffer,
    kinds: _Buffer,
    starts: _Buffer,
    ends: _Buffer,
    sizes: _Buffer,
    rev: _Buffer = ...,
    /,
) -> list[int]: ...

# -- the history walks (src/gitodb/_native/histwalk.inc, driven by gitodb.history.native) --
class OdbReader:
    def read(self, oid: bytes, /) -> tuple[int, bytes]: ...
    def objects_text(
        self,
        uninteresting_trees: list[bytes],
        pending: list[tuple[bytes, str, bytes]],
        names: bool,
        contains: Callable[[bytes], bool],
        /,
    ) -> tuple[int, bytes]: ...
    @overload
    def ls_tree(
        self,
        tree_data: bytes,
        recursive: bool,
        show_trees: bool,
        trees_only: bool,
        name_only: bool,
        nul: bool,
        quote_fully: bool,
        max_depth: int = ...,
        /,
    ) -> bytes | None: ...
    @overload
    def ls_tree(
        self,
        tree_data: bytes,
        recursive: bool,
        show_trees: bool,
        trees_only: bool,
        name_only: bool,
        nul: bool,
        quote_fully: bool,
        max_depth: int,
        write: Callable[[bytes], object],
        /,
    ) -> tuple[bool, int]: ...
    def close(self) -> None: ...

# (tables, minimum length); a table: (buffer, fan-out at or -1, ids at, stride, count)
AbbrevSpec = tuple[list[tuple[Any, int, int, int, int]], int]

def abbrev_lengths(spec: AbbrevSpec, rawsz: int, ids: list[bytes] | bytes, /) -> bytes: ...

class CommitWalk:
    def next(
        self, n: int, /
    ) -> list[tuple[bytes, tuple[bytes, ...], int, bytes, bytes | None]]: ...
    def text(
        self,
        parents: bool,
        want_trees: bool,
        topo: bool,
        want_text: bool,
        abbrev: AbbrevSpec | None = None,
        /,
    ) -> tuple[int, bytes, list[bytes] | None]: ...
    def format(
        self,
        parts: list[bytes | int],
        end: bytes,
        sep: bytes,
        fallback: Callable[[bytes, bytes | None], bytes],
        abbrev: AbbrevSpec | None = None,
        /,
    ) -> tuple[int, bytes]: ...

def odb_reader(
    packs: list[Any],  # (pack buffer, data end, cache key base, v2 index buffer, count)
    rawsz: int,
    inflate: Callable[[memoryview, int], bytes],
    native: tuple[str, str] | None,  # (compress.native_inflate(), its library)
    cache: Any,  # the delta-base cache: get(key) and put(key, type, data)
    fallback: Callable[[bytes, bool], tuple[int, bytes] | None],
    bad_tree: Callable[[bytes], None],
    cache_budget: int = ...,  # bytes of its own entries it leaves in the cache (0: no bound)
    /,
) -> OdbReader: ...
def commit_walk(
    reader: OdbReader,
    starts: list[bytes],
    first_parent: bool,
    keep_raw: bool,
    commit_fallback: Callable[[bytes], tuple[list[bytes], int, bytes, bytes | None]],
    graph: tuple[Any, int, int, int, int, int, int] | None,
    /,
) -> CommitWalk: ...
def graph_contains(
    layout: tuple[Any, int, int, int, int, int, int], rawsz: int, ids: list[bytes], /
) -> bytes: ...
def graph_count(
    layout: tuple[Any, int, int, int, int, int, int],
    rawsz: int,
    starts: list[bytes],
    first_parent: bool,
    /,
) -> int | None: ...
def parse_headers(
    data: bytes, /
) -> tuple[list[tuple[bytes, bytes | None]], bytes | None, bool]: ...
def tree_pairs(
    old: _Buffer, new: _Buffer, rawsz: int, same: bool = False, /
) -> list[tuple[bytes | None, bytes, bytes | None, bytes | None, bytes | None]] | None: ...

# -- the line diff (src/gitodb/_native/linediff.c) -----------------------------------
def diff_lines(
    a: Sequence[bytes], b: Sequence[bytes], indent_heuristic: bool, minimal: bool, /
) -> list[tuple[int, int, int, int]]: ...
def diff_buffers(
    old: bytes,
    new: bytes,
    indent_heuristic: bool,
    minimal: bool,
    context: int = ...,
    inter_hunk: int = ...,
    /,
) -> Any: ...

# -- the bulk tables' columns (src/gitodb/_native/bulkcols.c) ------------------------
# A string column: (int32 offsets, data, validity bitmap or None, not-UTF-8 flag).
_StrCol = tuple[bytes, bytes, bytes | None, bool]
# An int64 column: (values, validity bitmap or None).
_IntCol = tuple[bytes, bytes | None]

def commit_columns(
    raws: list[bytes], rawsz: int, message: bool, /
) -> (
    tuple[
        bytes,
        _StrCol,
        _StrCol,
        _IntCol,
        _StrCol,
        _StrCol,
        _StrCol,
        _IntCol,
        _StrCol,
        _StrCol,
        _StrCol | None,
    ]
    | None
): ...

class ReachWalk:
    def __init__(
        self,
        text: bytes,
        rawsz: int,
        tips: Sequence[tuple[bytes, int]],
        nbits: int,
        names: Sequence[str] | None = None,
    ) -> None: ...
    def next(
        self, max_rows: int, max_items: int, /
    ) -> tuple[int, bytes, bytes, bytes, bytes, bytes, bytes] | None: ...
    def skip(self, rows: int, /) -> int: ...
    def counts(self) -> bytes: ...
    def __len__(self) -> int: ...

def ls_tree_columns(
    text: bytes, rawsz: int, /
) -> tuple[int, _StrCol, tuple[bytes, bytes], tuple[bytes, bytes], bytes, bytes]: ...
def pack_columns(
    buf: Any,
    data_end: int,
    so: array[int],
    rev: array[int],
    ids: Any,
    id_start: int,
    id_stride: int,
    rawsz: int,
    types_by_p: bytes | bytearray,
    sizes_by_p: array[int],
    start: int,
    row0: int,
    first: int,
    last: int,
    depth_by_k: array[int],
    out_ids: bytearray,
    out_kinds: bytearray,
    out_sizes: array[int],
    out_bases: bytearray,
    out_base_valid: bytearray,
    out_depths: array[int],
    /,
) -> int: ...

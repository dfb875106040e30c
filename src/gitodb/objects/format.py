"""Object formats: the hash function that names objects (SHA-1 or SHA-256)."""

from __future__ import annotations

from gitodb.errors import ObjectFormatError, RepositoryError
from gitodb.lazymod import lazy_module
from gitodb.types import Hasher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gitodb.objects import sha1dc
else:
    # SHA-1DC when a SHA-1 is first computed: a ref listing hashes nothing
    sha1dc = lazy_module("gitodb.objects.sha1dc", globals(), "sha1dc")


class ObjectFormat:
    """One of Git's object formats (``extensions.objectFormat``); there are two instances."""

    __slots__ = ("name", "rawsz", "hexsz", "reftable_id", "pack_hash_id", "empty_tree")

    def __init__(
        self,
        name: str,
        rawsz: int,
        hexsz: int,
        reftable_id: bytes,
        pack_hash_id: int,
        empty_tree: str,
    ) -> None:
        self.name = name  # "sha1" or "sha256", as Git spells it
        self.rawsz = rawsz  # bytes in a binary id
        self.hexsz = hexsz  # characters in a hex id
        self.reftable_id = reftable_id  # hash id in a reftable v2 header
        self.pack_hash_id = pack_hash_id  # id in .rev and midx headers: 1 sha1, 2 sha256
        # the id of the empty tree, which Git reads as existing whether stored or not
        self.empty_tree = bytes.fromhex(empty_tree)

    def __repr__(self) -> str:
        return f"ObjectFormat({self.name!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # There are two instances, compared by identity: unpickle to the same one.
        return format_by_name, (self.name,)

    def new_hasher(self, data: bytes | bytearray | memoryview = b"") -> Hasher:
        """Return a fresh hashlib-like object for this format.

        SHA-1 is SHA-1DC (``gitodb.objects.sha1dc``): ``digest()`` raises
        ``ObjectCollisionError`` on data that completes a known collision attack.
        """
        hasher: Hasher = self.hasher_factory()(data)
        return hasher

    def hasher_factory(self) -> Callable[..., Any]:
        """The constructor ``new_hasher`` calls (bind it once in per-object loops)."""
        if self.name == "sha1":
            return sha1dc.sha1_factory()
        import hashlib  # imported on use: SHA-1 repositories never need it

        return getattr(hashlib, self.name)  # type: ignore[no-any-return]

    @property
    def null_oid(self) -> bytes:
        """The all-zero binary id."""
        return b"\0" * self.rawsz

    @property
    def null_hex(self) -> str:
        """The all-zero hex id."""
        return "0" * self.hexsz


SHA1 = ObjectFormat("sha1", 20, 40, b"sha1", 1, "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
SHA256 = ObjectFormat(
    "sha256",
    32,
    64,
    b"s256",
    2,
    "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
)

_BY_NAME = {"sha1": SHA1, "sha256": SHA256}


def format_by_name(name: str) -> ObjectFormat:
    """Return the object format Git calls ``name`` ("sha1" or "sha256")."""
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise RepositoryError(f"unknown object format '{name}'") from None


def as_oid(fmt: ObjectFormat, value: str | bytes | bytearray | memoryview) -> bytes:
    """A binary id from ``value``: raw bytes (``rawsz`` long) or full hex (str or bytes).

    Raises ``ObjectFormatError`` for anything else.
    """
    if isinstance(value, str):
        text = value
    else:
        raw = bytes(value)
        if len(raw) == fmt.rawsz:
            return raw
        text = raw.decode("ascii", "replace")
    if len(text) == fmt.hexsz:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    raise ObjectFormatError(f"not a {fmt.name} object id: {value!r}")

"""Which SHA-1 names objects: SHA-1 with collision detection, as Git uses.

Git hashes every object, pack and index with SHA-1DC and dies when a block
completes a known collision attack (``fatal: SHA-1 appears to be part of a
collision attack: <hex>``).  gitodb does the same: ``sha1_hasher()`` returns a
hashlib-like object whose ``digest()`` raises ``ObjectCollisionError``.

Implementations, in order of preference:

- ``gitodb._native.sha1dc`` — the native core (C), GIL released on large inputs;
- ``gitodb.objects.sha1dc_ref.Sha1DCRef`` — the pure-Python reference, used when
  the native core is not built, with the same unavoidable-bit-condition filter
  (derived once per process, about 0.4 s); correct but slow (about 0.5 MB/s,
  a seven-hundredth of the native core), so it is only fit for small repositories;
- plain SHA-1 from ``hashlib`` (no detection), only when ``GITODB_SHA1=plain``.

Git chooses its SHA-1 when it is built (``make OPENSSL_SHA1=1`` and friends);
a Python package has no build step its users run, so the equivalent here is a
process-wide environment variable, read once, that an operator sets (not a
config key, which a repository could carry and use to switch detection off).
"""

from __future__ import annotations

import os

from gitodb.errors import ConfigError, ObjectCollisionError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gitodb.objects.sha1dc_ref import Sha1DCRef

ENV_VAR = "GITODB_SHA1"
CHOICES = ("sha1dc", "plain")

_native_sha1dc: Callable[..., Any] | None
try:
    from gitodb import _native
except ImportError:  # the native core is not built
    _native_sha1dc = None
else:
    # Without the built extension, the source directory imports as an empty
    # namespace package: only the hasher's presence says the core is there.
    _native_sha1dc = getattr(_native, "sha1dc", None)
    if _native_sha1dc is not None:
        _native.set_collision_error(ObjectCollisionError)


def _ref_hasher() -> type[Sha1DCRef]:
    """The pure-Python fallback hasher class (its module is imported only when used)."""
    global _ref_class
    if _ref_class is not None:
        return _ref_class
    from gitodb.objects.sha1dc_ref import Sha1DCRef

    class _RefHasher(Sha1DCRef):
        """The pure-Python SHA-1DC with Git's behaviour: a collision makes digest() raise."""

        def __init__(
            self,
            data: bytes | bytearray | memoryview = b"",
            *,
            safe_hash: bool = False,
            detect: bool = True,
            ubc: bool = True,
        ) -> None:
            super().__init__(data, safe_hash=safe_hash, detect=detect, ubc=ubc)

        def copy(self) -> _RefHasher:
            other = _RefHasher(safe_hash=self.safe_hash, detect=self.detect, ubc=self.ubc)
            other._ihv, other._buf, other._length = self._ihv, self._buf, self._length
            other.collision = self.collision
            return other

        def digest(self) -> bytes:
            digest, hit = self.result()
            if hit:
                raise ObjectCollisionError(digest.hex())
            return digest

    _ref_class = _RefHasher
    return _ref_class


_ref_class: type[Sha1DCRef] | None = None


def __getattr__(name: str) -> Any:
    # ``_RefHasher``: the fallback class, for the tests that compare it with the core
    if name == "_RefHasher":
        return _ref_hasher()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_factory: Callable[..., Any] | None = None
_name = ""


def native_available() -> bool:
    """True if the native core (``gitodb._native``) is built and importable."""
    return _native_sha1dc is not None


def _choose() -> tuple[Callable[..., Any], str]:
    choice = os.environ.get(ENV_VAR, "sha1dc") or "sha1dc"
    if choice not in CHOICES:
        raise ConfigError(f"bad {ENV_VAR} value '{choice}' (expected one of: {', '.join(CHOICES)})")
    if choice == "plain":
        import hashlib

        return hashlib.sha1, _hashlib_name("sha1")
    if _native_sha1dc is not None:
        return _native_sha1dc, "SHA1_DC"
    from gitodb.errors import warn_native_core_missing

    warn_native_core_missing(
        "gitodb's native core (gitodb._native) is not built: SHA-1 with collision "
        "detection runs in pure Python, many times slower; install a binary wheel or "
        "build gitodb with a C compiler"
    )
    return _ref_hasher(), "SHA1_DC (pure Python)"


def _hashlib_name(algo: str) -> str:
    # hashlib's constructors are OpenSSL's when CPython links it (openssl_sha1).
    import hashlib

    ctor = getattr(hashlib, algo)
    return "OpenSSL" if ctor.__name__.startswith("openssl_") else f"hashlib {algo}"


def sha1_factory() -> Callable[..., Any]:
    """The SHA-1 constructor in use (``ctor(data=b"")`` → hashlib-like object)."""
    global _factory, _name
    if _factory is None:
        _factory, _name = _choose()
    return _factory


def sha1_hasher(data: bytes | bytearray | memoryview = b"") -> Any:
    """A fresh SHA-1 hasher (SHA-1DC unless ``GITODB_SHA1=plain``)."""
    return sha1_factory()(data)


def sha1_name() -> str:
    """The SHA-1 in use, as ``git version --build-options`` names it (``SHA1_DC``)."""
    sha1_factory()
    return _name


def build_options() -> list[tuple[str, str]]:
    """The ``SHA-1:`` and ``SHA-256:`` lines of ``version --build-options``.

    gitodb adds which compression kernel its native SHA-1DC runs on, when in use.
    """
    lines = [("SHA-1", sha1_name())]
    if _name == "SHA1_DC":
        from gitodb import _native

        lines.append(("SHA-1DC kernel", _native.sha1dc_kernel()))
    return lines + [("SHA-256", _hashlib_name("sha256"))]

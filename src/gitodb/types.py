"""Type aliases and protocols shared by every layer (the top layer: imports nothing).

``Buffer`` is what a parser or writer accepts as bytes; ``Hasher`` is what an object
format's ``new_hasher()`` returns; ``Progress`` is the callback a long library call
reports its progress through.

``NamedTuple``, ``Protocol`` and ``cast`` are ``typing``'s for the type checker; at run time they
are the light equivalents below, so that no command imports ``typing`` (~6 ms, a tenth
of a short command's start-up).  Modules write ``from gitodb.types import NamedTuple``
and keep their other ``typing`` names under ``if TYPE_CHECKING:`` (a local
``TYPE_CHECKING = False``, which type checkers read as true).
"""

from __future__ import annotations

import mmap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from functools import cached_property as cached_property
    from typing import Any
    from typing import NamedTuple as NamedTuple
    from typing import Protocol as Protocol
    from typing import cast as cast
else:

    def cast(typ, value):  # noqa: ARG001 - typing.cast: the type is for the checker
        """``value`` itself (``typing.cast`` without importing ``typing``)."""
        return value

    #: A protocol is for the type checker: at run time a plain base class
    #: (nothing in gitodb checks ``isinstance`` against one).
    Protocol = object

    # typing.NamedTuple's behaviour (a tuple subclass whose fields are the class
    # body's annotations, with its defaults, then the body's other attributes),
    # without importing typing or collections: ``collections`` alone is ~1.6 ms of
    # a 35 ms command's start-up (with keyword, operator and reprlib), more than
    # all of a short command's own work on the refs.  Annotations stay the strings
    # ``from __future__ import annotations`` makes them.
    try:
        from _collections import _tuplegetter  # CPython's field descriptor, built in
    except ImportError:  # pragma: no cover - another interpreter

        def _tuplegetter(index, doc):
            return property(lambda self: self[index], doc=doc)

    _SPECIAL = frozenset(
        {"__module__", "__name__", "__qualname__", "__annotations__", "__classcell__"}
    )
    _PROHIBITED = frozenset(
        {
            "__new__",
            "__init__",
            "__slots__",
            "__getnewargs__",
            "_fields",
            "_field_defaults",
            "_make",
            "_replace",
            "_asdict",
            "_source",
        }
    )

    class _NamedTupleBase(tuple):
        """The methods every NamedTuple class shares (``collections.namedtuple``'s)."""

        __slots__ = ()
        _fields: tuple[str, ...] = ()

        @classmethod
        def _make(cls, iterable):
            """A new instance from a sequence or iterable of the fields' values."""
            result = tuple.__new__(cls, iterable)
            if len(result) != len(cls._fields):
                raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
            return result

        def _replace(self, /, **changes):
            """A new instance with the named fields replaced by new values."""
            result = self._make(map(changes.pop, self._fields, self))
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return result

        def _asdict(self):
            """A dict of the field names and their values."""
            return dict(zip(self._fields, self, strict=True))

        def __repr__(self):
            fields = ", ".join(
                f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True)
            )
            return f"{type(self).__name__}({fields})"

        def __getnewargs__(self):
            # pickling calls __new__ with the fields (a plain tuple of them)
            return tuple(self)

    _tuple_new = tuple.__new__
    _function = type(cast)
    # __new__ of each number of fields, compiled with this module: a class renames
    # the parameters to its fields (``code.replace``, under a microsecond) instead of
    # compiling its own (``eval``, ~30-100 us a class, a millisecond of a command)
    _NEW_BY_ARITY = (
        lambda _cls: _tuple_new(_cls, ()),
        lambda _cls, a: _tuple_new(_cls, (a,)),
        lambda _cls, a, b: _tuple_new(_cls, (a, b)),
        lambda _cls, a, b, c: _tuple_new(_cls, (a, b, c)),
        lambda _cls, a, b, c, d: _tuple_new(_cls, (a, b, c, d)),
        lambda _cls, a, b, c, d, e: _tuple_new(_cls, (a, b, c, d, e)),
        lambda _cls, a, b, c, d, e, f: _tuple_new(_cls, (a, b, c, d, e, f)),
        lambda _cls, a, b, c, d, e, f, g: _tuple_new(_cls, (a, b, c, d, e, f, g)),
        lambda _cls, a, b, c, d, e, f, g, h: _tuple_new(_cls, (a, b, c, d, e, f, g, h)),
    )

    def _tuple_new_function(typename, fields, module):
        """``__new__(_cls, <fields>)`` of the NamedTuple class ``typename``."""
        globals_ = {"_tuple_new": _tuple_new, "__name__": module}
        if len(fields) < len(_NEW_BY_ARITY):
            code = _NEW_BY_ARITY[len(fields)].__code__.replace(
                co_varnames=("_cls", *fields),
                co_name="__new__",
                co_qualname=f"{typename}.__new__",
            )
            return _function(code, globals_)
        params = ", ".join(fields)
        return eval(  # noqa: S307 - the source is built from identifiers checked first
            f"lambda _cls, {params}: _tuple_new(_cls, ({params},))", globals_
        )

    def _named_tuple_class(typename, fields, defaults, ns):
        """The tuple subclass ``typename`` with ``fields`` (the last ones defaulted)."""
        for name in fields:
            if not name.isidentifier() or name.startswith("_"):
                raise ValueError(f"{typename}: bad field name {name!r}")
        # __new__ with the fields as named parameters keeps construction as fast as
        # collections.namedtuple's (which compiles the same lambda)
        params = ", ".join(fields)
        new = _tuple_new_function(typename, fields, ns["__module__"])
        new.__name__ = "__new__"
        new.__qualname__ = f"{typename}.__new__"
        new.__doc__ = f"Create new instance of {typename}({params})"
        if defaults:
            new.__defaults__ = tuple(defaults)
        body = {
            "__slots__": (),
            "__new__": new,
            "__doc__": ns.get("__doc__") or f"{typename}({params})",
            "__module__": ns["__module__"],
            "__qualname__": ns.get("__qualname__", typename),
            "__match_args__": fields,
            "_fields": fields,
            "_field_defaults": dict(
                zip(fields[len(fields) - len(defaults) :], defaults, strict=True)
            ),
        }
        for index, name in enumerate(fields):
            body[name] = _tuplegetter(index, f"Alias for field number {index}")
        return type(typename, (_NamedTupleBase,), body)

    class _NamedTupleMeta(type):
        def __new__(mcls, typename, bases, ns):  # noqa: N804 - a metaclass's __new__
            annotations = ns.get("__annotations__", {})
            fields = tuple(annotations)
            defaults = [ns[name] for name in fields if name in ns]
            if defaults and fields[-len(defaults) :] != tuple(n for n in fields if n in ns):
                raise TypeError(f"{typename}: a field without a default follows one with")
            cls = _named_tuple_class(typename, fields, defaults, ns)
            cls.__annotations__ = dict(annotations)
            for key, value in ns.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in fields and key != "__doc__":
                    setattr(cls, key, value)
            return cls

    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})

    class cached_property:  # noqa: N801 - functools' name
        """``functools.cached_property`` without importing ``functools`` (with
        ``collections``): the first ``obj.name`` calls the function and stores the
        value in ``obj.__dict__``, where later reads find it (``del`` or popping it
        from ``__dict__`` computes it again)."""

        def __init__(self, func):
            self.func = func
            self.attrname = None
            self.__doc__ = func.__doc__
            self.__module__ = func.__module__

        def __set_name__(self, owner, name):
            self.attrname = name

        def __get__(self, instance, owner=None):
            if instance is None:
                return self
            value = instance.__dict__[self.attrname] = self.func(instance)
            return value


__all__ = [
    "Buffer",
    "Hasher",
    "NamedTuple",
    "Progress",
    "Protocol",
    "Record",
    "cached_property",
    "cast",
]

#: Anything a reader or writer takes as bytes without copying it first.
Buffer = bytes | bytearray | memoryview | mmap.mmap


class Hasher(Protocol):
    """A hashlib-like hash in progress (``hashlib.sha256()``, SHA-1DC's hasher)."""

    def update(self, data: Buffer, /) -> None:
        """Add ``data`` to what is hashed."""

    def digest(self) -> bytes:
        """The hash of everything added so far."""

    def hexdigest(self) -> str:
        """``digest()`` in lowercase hex."""


class Progress(Protocol):
    """The progress protocol of long library calls (index-pack, verify, checks).

    Called as ``progress(title, done, total, finished)``: ``title`` names the phase
    as Git's progress line does (``"Indexing objects"``, ``"Resolving deltas"``...),
    ``done`` counts the units finished so far out of ``total`` (0 when unknown), and
    ``finished`` is True once, on the phase's last call.  A plain function with that
    signature satisfies it::

        def show(title: str, done: int, total: int, finished: bool) -> None:
            print(f"{title}: {done}/{total}", "done" if finished else "")
    """

    def __call__(self, title: str, done: int, total: int, finished: bool) -> None:
        """Report that ``done`` of ``total`` units of ``title`` are finished."""


class Record:
    """Base of a small mutable record: ``repr`` and ``==`` over its ``__slots__``, as a
    dataclass has them (a subclass lists its fields in ``__slots__`` and writes its
    ``__init__``).

    The records on every command's path are plain classes, not dataclasses: importing
    ``dataclasses`` (with ``inspect``, ``ast``, ``dis``, ``tokenize``) and generating each
    class's methods cost more than the rest of a short command's start-up.  Immutable
    records are ``typing.NamedTuple``.
    """

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as a dataclass

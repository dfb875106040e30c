"""``gitodb.types``' run-time ``NamedTuple``, ``Protocol`` and ``cast`` behave as
``typing``'s for what gitodb uses them for (they exist so that no command imports
``typing``; see ``tests/test_startup_imports.py``)."""

from __future__ import annotations

import pickle
import typing

import pytest

from gitodb import types


class Light(types.NamedTuple):
    """A record."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()

    def doubled(self) -> int:
        return self.size * 2

    @property
    def label(self) -> str:
        return f"{self.name}:{self.size}"


class Typed(typing.NamedTuple):
    """A record."""

    name: str
    size: int = 0
    tags: tuple[str, ...] = ()

    def doubled(self) -> int:
        return self.size * 2

    @property
    def label(self) -> str:
        return f"{self.name}:{self.size}"


def test_not_typing_at_run_time() -> None:
    assert types.NamedTuple is not typing.NamedTuple
    assert types.Protocol is object


@pytest.mark.parametrize("cls", [Light, Typed])
def test_named_tuple_matches_typing(cls: type) -> None:
    a = cls("x", 3)
    assert a == ("x", 3, ())
    assert a.name == "x" and a.size == 3 and a.tags == ()
    assert a.doubled() == 6 and a.label == "x:3"
    assert repr(a) == f"{cls.__name__}(name='x', size=3, tags=())"
    assert a._replace(size=4) == cls("x", 4)
    assert a._asdict() == {"name": "x", "size": 3, "tags": ()}
    assert cls._fields == ("name", "size", "tags")
    assert cls._field_defaults == {"size": 0, "tags": ()}
    assert cls.__doc__ == "A record."
    assert cls.__module__ == __name__ and cls.__qualname__ == cls.__name__
    assert list(cls.__annotations__) == ["name", "size", "tags"]
    assert hash(a) == hash(("x", 3, ()))
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(TypeError):
        cls()  # name has no default
    with pytest.raises(AttributeError):
        a.size = 5  # type: ignore[misc]


def test_named_tuple_refuses_what_typing_refuses() -> None:
    with pytest.raises(TypeError):

        class Bad(types.NamedTuple):
            a: int = 0
            b: int

    with pytest.raises(AttributeError):

        class Worse(types.NamedTuple):
            a: int

            def _replace(self) -> None:  # type: ignore[override]
                pass


def test_cast_is_the_identity() -> None:
    value = object()
    assert types.cast(int, value) is value


def test_cached_property_computes_once_and_can_be_reset() -> None:
    """``types.cached_property`` (``functools``' without importing it) stores the value
    in the instance's ``__dict__``, as ``Repository.close()`` relies on."""
    import functools

    calls: list[str] = []

    class Light:
        @types.cached_property
        def value(self) -> int:
            """The doc."""
            calls.append("light")
            return 42

    class Real:
        @functools.cached_property
        def value(self) -> int:
            """The doc."""
            calls.append("real")
            return 42

    for cls in (Light, Real):
        obj = cls()
        assert (obj.value, obj.value) == (42, 42)
        assert obj.__dict__ == {"value": 42}
        obj.__dict__.pop("value")
        assert obj.value == 42
        obj.value = 7  # type: ignore[misc]
        assert obj.value == 7
        assert cls.__dict__["value"].__doc__ == "The doc."
        assert isinstance(cls.value, type(cls.__dict__["value"]))
    assert calls == ["light", "light", "real", "real"]

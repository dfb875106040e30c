"""Choosing a backend: environment, CLI option, API; clear errors; routing."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitodb import compress
from gitodb.cli.main import main
from gitodb.compress import backends, selection
from gitodb.errors import BackendUnavailableError

INSTALLED = [n for n in backends.BACKENDS if backends.load(n) is not None]


@pytest.fixture(autouse=True)
def _restore_backend():
    yield
    compress.set_backend(None)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GITODB_ZLIB_BACKEND"}
    env.update(extra)
    return env


PROBE = (
    "from gitodb import compress; "
    "print(compress.active_backend(), compress.active_backend('inflate'), "
    "compress.active_backend('crc32'))"
)


@pytest.mark.parametrize("name", INSTALLED)
def test_environment_selects(name: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=_env(GITODB_ZLIB_BACKEND=name),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [name, name, name]


def test_environment_default_is_auto() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=_env(), capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "auto"
    assert out[1] == selection.route("auto").backend("inflate").name


def test_environment_unknown_name_is_an_error() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", "version", "--build-options"],
        env=_env(GITODB_ZLIB_BACKEND="zstd"),
        capture_output=True,
        text=True,
    )
    assert p.returncode == 128
    assert p.stderr == (
        "fatal: unknown zlib backend 'zstd' (installed: " + ", ".join(["auto", *INSTALLED]) + ")\n"
    )


@pytest.mark.parametrize("name", INSTALLED)
def test_cli_option_selects(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([f"--zlib-backend={name}", "version", "--build-options"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"zlib-backend: {name}" in lines
    assert compress.active_backend() == name
    assert any(line.startswith(f"crc32 and crc32_combine: {name} (selected") for line in lines)


def test_cli_option_beats_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITODB_ZLIB_BACKEND", "zlib")
    compress.set_backend(None)
    assert compress.active_backend() == "zlib"
    assert main(["--zlib-backend", "auto", "version"]) == 0
    assert compress.active_backend() == "auto"


def test_cli_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--zlib-backend=gzip", "version"]) == 128
    err = capsys.readouterr().err
    assert err.startswith("fatal: unknown zlib backend 'gzip' (installed: auto, zlib")


@pytest.mark.parametrize("name", INSTALLED)
def test_api_selects_and_rebinds(name: str) -> None:
    compress.set_backend(name)
    b = backends.load(name)
    assert compress.active_backend() == name
    assert compress.inflate is b.inflate  # module attribute bound straight to the backend
    for op in selection.OPERATIONS:
        routed = compress.active_backend(op)
        if selection.can_do(b, op) is None:
            assert routed == name
        else:
            assert routed != name
            assert selection.can_do(backends.load(routed), op) is None
    data = b"gitodb " * 100
    assert compress.inflate(zlib.compress(data), len(data)) == data


def test_api_none_returns_to_default() -> None:
    compress.set_backend("zlib")
    compress.set_backend(None)
    assert compress.active_backend() == os.environ.get("GITODB_ZLIB_BACKEND", "auto")


def test_unknown_name_keeps_current_backend() -> None:
    compress.set_backend("zlib")
    with pytest.raises(BackendUnavailableError, match="unknown zlib backend 'nope'"):
        compress.set_backend("nope")
    assert compress.active_backend() == "zlib"


@pytest.mark.parametrize("missing", ["isal", "libdeflate", "zlib-ng"])
def test_uninstalled_backend(missing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends._loaded, missing, None)  # as if not installed
    assert missing not in compress.available_backends()
    with pytest.raises(BackendUnavailableError) as e:
        compress.set_backend(missing)
    msg = str(e.value)
    assert f"zlib backend '{missing}' is not installed" in msg
    assert backends.install_hint(missing) in msg
    assert "installed: auto, zlib" in msg and f", {missing}" not in msg
    compress.set_backend("auto")  # auto skips it: never routes to a missing backend
    for op in selection.OPERATIONS:
        assert compress.active_backend(op) != missing


def test_only_stdlib(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("zlib-ng", "isal", "libdeflate"):
        monkeypatch.setitem(backends._loaded, name, None)
    compress.set_backend("auto")
    assert {compress.active_backend(op) for op in selection.OPERATIONS} == {"zlib"}
    assert compress.available_backends() == ["zlib"]


@pytest.mark.skipif("libdeflate" not in INSTALLED, reason="libdeflate not installed")
def test_libdeflate_routes_streaming_elsewhere() -> None:
    compress.set_backend("libdeflate")
    routes = compress.routing().routes
    assert routes["inflate-stream"].backend.name != "libdeflate"
    assert "libdeflate cannot stream; next best" in routes["inflate-stream"].reason
    assert routes["deflate-stream"].backend.name != "libdeflate"
    inf = compress.new_inflater()
    assert inf.decompress(zlib.compress(b"abc")) == b"abc" and inf.eof


@pytest.mark.skipif("isal" not in INSTALLED, reason="isal not installed")
def test_isal_levels_route_elsewhere() -> None:
    compress.set_backend("isal")
    route = compress.routing().routes["deflate"]
    assert route.backend.name == "isal" and route.level_fallback is not None
    assert "Git levels -1, 0, 4, 5, 6, 7, 8, 9 on" in route.reason
    data = bytes(range(256)) * 40
    for level in range(-1, 10):
        assert zlib.decompress(compress.deflate(data, level)) == data


@pytest.mark.parametrize("name", INSTALLED)
def test_header_read_stops_before_damage(name: str) -> None:
    # A loose object damaged after its header: Git reads the header and fails
    # later, so the header's inflater must not decode past what it was asked
    # for (ISA-L does; its header reads go elsewhere).
    body = b"".join(b"base line %d\n" % i for i in range(200))
    damaged = bytearray(zlib.compress(b"blob %d\0" % len(body) + body, 1))
    damaged[len(damaged) // 2] ^= 0xFF
    compress.set_backend(name)
    head = compress.new_inflater("inflate-head").decompress(bytes(damaged), 32)
    assert head.startswith(b"blob 2690\0")
    if name == "isal":
        route = compress.routing().routes["inflate-head"]
        assert route.backend.name != "isal" and "ISA-L decodes" in route.reason


@given(
    st.lists(
        st.sampled_from([b"libdeflate", b" ", b"v", b"-", b"1", b"23", b".", b"x", b"\0"]),
        max_size=10,
    ).map(b"".join)
)
def test_libdeflate_version_scan_is_the_expression(data: bytes) -> None:
    """The version scan of the libdeflate backend (no ``re`` at its load) finds what
    the expression it replaces finds."""
    import re

    libdeflate = pytest.importorskip("gitodb.compress.backends.libdeflate")
    m = re.search(rb"libdeflate[ v-]*(\d+\.\d+(?:\.\d+)?)", data)
    assert libdeflate.version_in(data) == (m.group(1).decode() if m else None)

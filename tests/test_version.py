"""``gitodb version [--build-options]``, modelled on ``git version``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import gitodb
from gitodb import compress
from gitodb.cli.main import main
from gitodb.compress import backends, info, selection


@pytest.fixture(autouse=True)
def _restore_backend():
    yield
    compress.set_backend(None)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["version"], capsys) == (0, f"gitodb version {gitodb.__version__}\n", "")
    assert run(["--version"], capsys) == (0, f"gitodb version {gitodb.__version__}\n", "")
    # like git, extra arguments are ignored
    assert run(["version", "extra"], capsys)[1] == f"gitodb version {gitodb.__version__}\n"


def test_bad_option(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(["version", "--bogus"], capsys)
    assert rc == 129 and out == ""
    assert err == (
        "error: unknown option `bogus'\nusage: gitodb version [--build-options]\n\n"
        "    --build-options       also print build options\n\n"
    )
    rc, out, err = run(["version", "-h"], capsys)
    assert (rc, err) == (129, "") and out.startswith("usage: gitodb version [--build-options]")


def test_build_options(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["version", "--build-options"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == f"gitodb version {gitodb.__version__}"
    assert lines[1].startswith(f"python: {sys.version.split()[0]}")
    keys = dict(line.split(": ", 1) for line in lines[1:])
    for name in backends.BACKENDS:
        b = backends.load(name)
        if b is None:
            assert keys[f"backend {name}"] == f"not installed ({backends.install_hint(name)})"
        else:
            assert keys[f"backend {name}"].startswith(f"available, library {b.library_version}")
            assert keys[f"backend {name} inflate_prefix reuse"] == b.reuse_note
    assert keys["zlib-backend"] == compress.active_backend()
    for op in selection.OPERATIONS:
        route = compress.routing().routes[op]
        assert keys[selection.OPERATION_TITLES[op]] == f"{route.backend.name} ({route.reason})"
    feats = info.cpu_features()
    if feats is not None:
        for flag, present in feats.items():
            assert (flag in keys["cpu-features"].split("(missing:")[0]) == present


def test_library_versions(capsys: pytest.CaptureFixture[str]) -> None:
    import zlib

    assert backends.load("zlib").library_version == zlib.ZLIB_RUNTIME_VERSION
    if backends.load("zlib-ng") is not None:
        from zlib_ng import zlib_ng

        assert backends.load("zlib-ng").library_version == zlib_ng.ZLIBNG_RUNTIME_VERSION
    if backends.load("isal") is not None:
        import isal

        assert backends.load("isal").library_version == isal.ISAL_VERSION


def test_build_options_not_installed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(backends._loaded, "isal", None)
    compress.set_backend("auto")
    out = run(["version", "--build-options"], capsys)[1]
    assert "backend isal: not installed (pip install 'gitodb[isal]')\n" in out


def test_cpu_features_from_cpuinfo(tmp_path) -> None:
    fake = tmp_path / "cpuinfo"
    fake.write_text("model name\t: Test CPU 9000\nflags\t\t: fpu sse4_2 avx2 pclmulqdq\n")
    assert info.cpu_model(str(fake)) == "Test CPU 9000"
    assert info.cpu_features(str(fake)) == {
        "sse4_2": True,
        "pclmulqdq": True,
        "avx2": True,
        "avx512f": False,
        "vpclmulqdq": False,
    }
    assert info.cpu_features(str(tmp_path / "missing")) is None


@pytest.mark.e2e
def test_python_m_gitodb_reports_environment_backend() -> None:
    """Through the whole CLI; CI reruns it once per GITODB_ZLIB_BACKEND."""
    env = dict(os.environ)
    expected = env.get("GITODB_ZLIB_BACKEND") or "auto"
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", "version", "--build-options"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"\nzlib-backend: {expected}\n" in p.stdout


def test_native_core_reported_and_warned_when_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gitodb.errors import NativeCoreMissingWarning
    from gitodb.objects import sha1dc
    from gitodb.pack import delta

    rc, out, _ = run(["version", "--build-options"], capsys)
    built = sha1dc.native_available() and delta.native_available()
    assert ("native core: loaded (" in out) == built
    monkeypatch.setattr(sha1dc, "_native_sha1dc", None)
    monkeypatch.setattr(delta, "_c_apply_delta", None)
    monkeypatch.setattr(sha1dc, "_factory", None)
    with pytest.warns(NativeCoreMissingWarning, match="native core"):
        assert sha1dc.sha1_hasher(b"abc").hexdigest() == (
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        )
    monkeypatch.setattr(sha1dc, "_factory", None)
    rc, out, err = run(["version", "--build-options"], capsys)
    assert rc == 0 and err == ""  # the CLI's stderr stays Git's
    assert "SHA-1: SHA1_DC (pure Python)" in out

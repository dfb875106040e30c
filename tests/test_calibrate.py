"""``gitodb calibrate``: measured here, stored in the user's cache, followed by ``auto``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitodb import compress
from gitodb.compress import calibrate, selection
from helpers import run_cli


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("GITODB_ZLIB_BACKEND", raising=False)
    compress.reload_calibration()
    yield tmp_path
    monkeypatch.undo()
    compress.reload_calibration()
    compress.set_backend(None)


def test_calibrate_stores_and_auto_follows(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(cache_dir, "calibrate", "--budget=0.5") == 0
    out = capsys.readouterr().out
    path = cache_dir / "gitodb" / "calibration.json"
    assert f"calibration: {path}" in out
    record = json.loads(path.read_text())
    assert set(record["ranking"]) == set(selection.OPERATIONS)
    assert set(record["backends"]) == set(selection.installed())
    compress.set_backend("auto")
    for op in selection.OPERATIONS:
        route = compress.routing().routes[op]
        assert route.reason.startswith("auto, calibrated ")
        first = next(
            n
            for n in record["ranking"][op]
            if selection.can_do(compress.backends.load(n), op) is None
        )
        assert route.backend.name == first
    assert run_cli(cache_dir, "version", "--build-options") == 0
    assert "auto ranking: calibrated " in capsys.readouterr().out
    # A named backend is not affected.
    compress.set_backend("zlib")
    assert compress.routing().routes["inflate"].reason == "selected"


def test_a_calibration_for_other_libraries_is_ignored(
    cache_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = calibrate.measure(0.2)
    record["backends"] = {**record["backends"], "zlib": "0.0.1"}
    calibrate.save(record)
    assert calibrate.load() is None
    compress.reload_calibration()
    assert compress.routing().routes["inflate"].reason.startswith("auto: ")
    assert run_cli(cache_dir, "calibrate", "--show") == 0
    assert "no usable calibration" in capsys.readouterr().out
    (cache_dir / "gitodb" / "calibration.json").write_text("{not json")
    assert calibrate.load() is None


def test_remove_and_usage(cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calibrate.save(calibrate.measure(0.2))
    compress.reload_calibration()
    assert compress.routing().routes["crc32"].reason.startswith("auto, calibrated ")
    assert run_cli(cache_dir, "calibrate", "--remove") == 0
    assert not (cache_dir / "gitodb" / "calibration.json").exists()
    assert compress.routing().routes["crc32"].reason.startswith("auto: ")
    capsys.readouterr()
    for argv in (
        ["--bogus"],
        ["--budget=x"],
        ["--budget"],
        ["--budget=0"],
        ["extra"],
    ):
        assert run_cli(cache_dir, "calibrate", *argv) == 129, argv
        assert capsys.readouterr().err.startswith("error: ")
    # Git's wording and status for two modes at once (die_for_incompatible_opt)
    assert run_cli(cache_dir, "calibrate", "--show", "--remove") == 128
    assert (
        capsys.readouterr().err
        == "fatal: options '--show' and '--remove' cannot be used together\n"
    )

"""Content conversions (eol, ident, filter drivers, textconv) in hash-object and cat-file,
byte for byte against ``git``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.objects.eol import CrlfAction, TextStat, crlf_to_git, ident_to_git, ident_to_worktree
from helpers import git_env

pytestmark = pytest.mark.e2e

CONTENTS = {
    "lf.txt": b"one\ntwo\n",
    "crlf.txt": b"one\r\ntwo\r\n",
    "mixed.txt": b"one\r\ntwo\nthree\r\n",
    "lonecr.txt": b"one\rtwo\n",
    "nul.txt": b"one\0\ntwo\n",
    "auto.dat": b"a\r\nb\r\n",
    "autolf.dat": b"a\nb\n",
    "id.idt": b"x $Id$ y\n$Id: old stuff $\n$Id: two words here $\n$Id: broken\n$\n",
    "up.drv": b"Hello there\n",
    "fail.bad": b"content\n",
    "plain": b"a\r\nb\n",
    "sub/lf.txt": b"x\ny\n",
}
ATTRS = b"""\
*.txt text
*.dat text=auto
crlf.txt eol=crlf
mixed.txt eol=lf
*.idt ident
*.drv filter=up diff=up
*.bad filter=bad diff=bad
sub/*.txt eol=crlf
"""
CONFIGS = [
    [],
    ["core.autocrlf=true"],
    ["core.autocrlf=input"],
    ["core.eol=crlf"],
    ["core.autocrlf=true", "core.safecrlf=false"],
]
DRIVERS = [
    "filter.up.clean=sed s/H/h/",
    "filter.up.smudge=sed s/h/H/",
    "diff.up.textconv=tr a-z A-Z <",
    "filter.bad.clean=exit 3",
    "filter.bad.smudge=false",
    "diff.bad.textconv=false",
]


def _env(tmp_path: Path) -> dict[str, str]:
    env = git_env()
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    env["GIT_ATTR_NOSYSTEM"] = "1"
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> tuple:
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=env)
    return p.returncode, p.stdout, p.stderr


def _both(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> tuple:
    theirs = _run(["git", *args], cwd, env, stdin)
    ours = _run([sys.executable, "-m", "gitodb", *args], cwd, env, stdin)
    assert ours == theirs, (args, ours, theirs)
    return ours


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("conv")
    env = _env(tmp)
    r = tmp / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=env)
    (r / "sub").mkdir()
    for name, data in CONTENTS.items():
        (r / name).write_bytes(data)
    (r / ".gitattributes").write_bytes(ATTRS)
    for kv in DRIVERS:
        k, v = kv.split("=", 1)
        subprocess.run(["git", "config", k, v], cwd=r, check=True, env=env)
    # commit the bytes as they are, so cat-file has blobs with CRLF and $Id$ in them
    subprocess.run(["git", "add", "."], cwd=r, check=True, env=env)
    for name in CONTENTS:
        oid = subprocess.run(
            ["git", "hash-object", "-w", "--no-filters", name],
            cwd=r,
            capture_output=True,
            check=True,
            env=env,
        ).stdout.strip()
        subprocess.run(
            ["git", "update-index", "--cacheinfo", f"100644,{oid.decode()},{name}"],
            cwd=r,
            check=True,
            env=env,
        )
    subprocess.run(["git", "commit", "-qm", "m"], cwd=r, check=True, env=env)
    return r


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(c) or "default")
def test_hash_object_converts_like_git(work: Path, tmp_path: Path, config: list[str]) -> None:
    env = _env(tmp_path)
    cfg = [a for kv in config for a in ("-c", kv)]
    names = sorted(CONTENTS)
    _both([*cfg, "hash-object", *names], work, env)
    _both([*cfg, "hash-object", "--no-filters", *names], work, env)
    _both([*cfg, "hash-object", "--stdin-paths"], work, env, "\n".join(names).encode() + b"\n")
    for name in names:
        _both([*cfg, "hash-object", "--path", name, "--stdin"], work, env, b"p\r\nq\n")
    _both([*cfg, "hash-object", "--stdin"], work, env, b"p\r\nq\n")
    # from a subdirectory, the path is the top's
    _both([*cfg, "hash-object", "lf.txt", "../crlf.txt"], work / "sub", env)


def test_hash_object_write_checks_safecrlf(work: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    # -w warns where a checkout would not give the same file back; true refuses
    for cfg in (["-c", "core.autocrlf=input"], ["-c", "core.eol=crlf"]):
        _both([*cfg, "hash-object", "-w", "crlf.txt", "lf.txt", "mixed.txt"], work, env)
    status, _out, err = _both(
        ["-c", "core.safecrlf=true", "hash-object", "-w", "mixed.txt"], work, env
    )
    assert status == 128 and b"CRLF would be replaced by LF in mixed.txt" in err


def test_required_filter_failure_is_fatal(work: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    status, _out, err = _both(
        ["-c", "filter.bad.required=true", "hash-object", "fail.bad"], work, env
    )
    assert status == 128 and err.endswith(b"fatal: fail.bad: clean filter 'bad' failed\n")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(c) or "default")
def test_cat_file_filters_and_textconv_like_git(
    work: Path, tmp_path: Path, config: list[str]
) -> None:
    env = _env(tmp_path)
    cfg = [a for kv in config for a in ("-c", kv)]
    for name in sorted(CONTENTS):
        _both([*cfg, "cat-file", "--filters", f"HEAD:{name}"], work, env)
        _both([*cfg, "cat-file", "--textconv", f"HEAD:{name}"], work, env)
    blob = _run(["git", "rev-parse", "HEAD:lf.txt"], work, env)[1].decode().strip()
    for path in ("crlf.txt", "x.drv", "sub/y.txt", "none"):
        _both([*cfg, "cat-file", "--filters", f"--path={path}", blob], work, env)
        _both([*cfg, "cat-file", "--textconv", f"--path={path}", blob], work, env)
    # batch: the path follows the name; the header keeps the stored size
    lines = "".join(f"HEAD:{n} {n}\n" for n in sorted(CONTENTS)) + f"HEAD x.txt\n{blob}\n"
    _both([*cfg, "cat-file", "--batch", "--filters"], work, env, lines.encode())
    _both([*cfg, "cat-file", "--batch", "--textconv"], work, env, lines.encode())
    _both([*cfg, "cat-file", "--batch-check", "--filters"], work, env, lines.encode())


def test_cat_file_transform_errors(work: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    status, _o, err = _both(["cat-file", "--filters", "HEAD"], work, env)
    assert status == 128 and b"<object>:<path> required" in err
    _both(["cat-file", "--textconv", "HEAD^{tree}"], work, env)
    _both(["cat-file", "--textconv", "HEAD:"], work, env)
    _both(["cat-file", "--filters", "HEAD:nonexistent"], work, env)
    status, _o, err = _both(["cat-file", "--textconv", "HEAD:fail.bad"], work, env)
    assert status == 128 and err.endswith(b"fatal: unable to read files to diff\n")


def test_text_stats_and_ident_units() -> None:
    st = TextStat.gather(b"a\r\nb\nc\rd\0\x1a")
    assert (st.crlf, st.lonelf, st.lonecr, st.nul) == (1, 1, 1, 1)
    assert st.is_binary()
    assert not TextStat.gather(b"plain text\n" * 10).is_binary()
    assert crlf_to_git(b"a\r\nb\n", CrlfAction.TEXT_INPUT, crlf_out=False) == b"a\nb\n"
    assert crlf_to_git(b"a\r\nb\rc\n", CrlfAction.AUTO, crlf_out=True) == b"a\r\nb\rc\n"
    assert ident_to_git(b"$Id: abc $ and $Id$\n") == b"$Id$ and $Id$\n"
    assert ident_to_worktree(b"$Id$\n", "ab" * 20) == b"$Id: " + b"ab" * 20 + b" $\n"


def _ours(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> tuple:
    return _run([sys.executable, "-m", "gitodb", *args], cwd, env, stdin)


def test_attribute_source_tree(work: Path, tmp_path: Path) -> None:
    # Git 2.55: --attr-source, GIT_ATTR_SOURCE and attr.tree name the tree attributes come
    # from; a bare repository has none without one (2.39 on PATH lacks attr.tree: the
    # expected bytes are 2.55's)
    env = _env(tmp_path)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, env=env)
    crlf = (0, b"one\r\ntwo\r\n", b"")
    plain = (0, b"one\ntwo\n", b"")
    args = ["-c", "core.eol=crlf", "cat-file", "--filters", "HEAD:lf.txt"]
    assert _ours(args, bare, env) == plain
    assert _ours(["--attr-source=HEAD", *args], bare, env) == crlf
    assert _ours(["-c", "attr.tree=HEAD", *args], bare, env) == crlf
    assert _ours(args, bare, {**env, "GIT_ATTR_SOURCE": "HEAD"}) == crlf
    empty_tree = _run(["git", "hash-object", "-t", "tree", "-w", "--stdin"], bare, env)[1]
    tree = empty_tree.decode().strip()
    assert _ours(["-c", "attr.tree=HEAD", "--attr-source", tree, *args], bare, env) == plain
    # a bad attr.tree is ignored, a bad --attr-source is fatal
    assert _ours(["-c", "attr.tree=nope", *args], bare, env) == plain
    assert _ours(["--attr-source=nope", *args], bare, env) == (
        128,
        b"",
        b"fatal: bad --attr-source or GIT_ATTR_SOURCE\n",
    )
    # in a work tree, --attr-source replaces the checked-out .gitattributes
    _run(["git", "hash-object", "-t", "tree", "-w", "--stdin"], work, env)
    assert _ours(["--attr-source", "HEAD", *args], work, env) == crlf
    assert _ours(["--attr-source", tree, *args], work, env) == plain

"""Config levels, command-line settings and includes, against ``git config`` on PATH.

Each test sets up files and environment, then asks both Git and gitodb for the
values of a key (all of them, in order) or for the error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitodb.errors import ConfigError
from gitodb.reftable.reader import TableReader
from gitodb.repo import Repository
from gitodb.repo.config_levels import load_config
from helpers import git, run_cli

ISOLATED = {"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "XDG_CONFIG_HOME"}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A clean config environment (HOME in tmp); tests add to it and call ``apply``."""
    for k in list(os.environ):
        if k in ISOLATED or k.startswith("GIT_CONFIG"):
            monkeypatch.delenv(k)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(tmp_path / "system"))
    return {}


def _set(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], **values: str) -> None:
    for k, v in values.items():
        env[k] = v
        monkeypatch.setenv(k, v)


def git_values(repo: Path | None, key: str, *args: str, cwd: Path | None = None) -> list[str]:
    """``git config --get-all key`` in ``repo`` with the current environment."""
    e = {k: v for k, v in os.environ.items()}
    proc = subprocess.run(
        ["git", *args, "config", "--get-all", key],
        cwd=cwd or repo,
        env=e,
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.decode().splitlines()


def git_error(repo: Path, *args: str) -> tuple[int, str]:
    proc = subprocess.run(
        ["git", *args, "rev-parse", "--git-dir"],
        cwd=repo,
        env=dict(os.environ),
        capture_output=True,
        check=False,
    )
    return proc.returncode, proc.stderr.decode()


def gitodb_error(repo: Path, capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capfd.readouterr()
    status = run_cli(repo, *args, "show-ref", "--head", "-q")
    return status, capfd.readouterr().err


def make_repo(tmp_path: Path, *init: str) -> Path:
    repo = tmp_path / "repo"
    git("init", "-q", *init, repo)
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "one")
    return repo


def test_every_level_in_gits_order(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "system").write_text("[t]\n\tv = system\n")
    (tmp_path / "global").write_text("[t]\n\tv = global\n")
    git("-C", repo, "config", "extensions.worktreeConfig", "true")
    git("-C", repo, "config", "--add", "t.v", "local")
    (repo / ".git" / "config.worktree").write_text("[t]\n\tv = worktree\n")
    _set(
        monkeypatch,
        env,
        GIT_CONFIG_GLOBAL=str(tmp_path / "global"),
        GIT_CONFIG_COUNT="2",
        GIT_CONFIG_KEY_0="t.v",
        GIT_CONFIG_VALUE_0="count0",
        GIT_CONFIG_KEY_1="T.V",
        GIT_CONFIG_VALUE_1="",
        GIT_CONFIG_PARAMETERS="'t.v'='new style' 't.v=old style' 't.v'",
    )
    want = git_values(repo, "t.v", "-c", "t.v=dash-c")
    assert want == [
        "system",
        "global",
        "local",
        "worktree",
        "count0",
        "",
        "new style",
        "old style",
        "",
        "dash-c",
    ]
    config = Repository(repo, config_overrides=["t.v=dash-c"]).config
    assert config.get_all("t.v") == want
    assert config.get_raw_all("t.v")[8] is None  # 't.v' alone is a bare key: true


def test_nosystem_and_global_files(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path)
    home = Path(os.environ["HOME"])
    (tmp_path / "system").write_text("[t]\n\tv = system\n")
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text("[t]\n\tv = xdg-default\n")
    (home / ".gitconfig").write_text("[t]\n\tv = home\n")
    assert git_values(repo, "t.v") == ["system", "xdg-default", "home"]
    assert Repository(repo).config.get_all("t.v") == ["system", "xdg-default", "home"]
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "config").write_text("[t]\n\tv = xdg\n")
    _set(monkeypatch, env, XDG_CONFIG_HOME=str(tmp_path / "xdg"), GIT_CONFIG_NOSYSTEM="1")
    assert git_values(repo, "t.v") == ["xdg", "home"]
    assert Repository(repo).config.get_all("t.v") == ["xdg", "home"]
    # outside any repository the same levels are read
    assert load_config().get_all("t.v") == ["xdg", "home"]
    _set(monkeypatch, env, GIT_CONFIG_GLOBAL="")
    assert git_values(repo, "t.v") == []
    assert Repository(repo).config.get_all("t.v") == []


def test_global_config_turns_off_reflogs(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """t0613's setup: test_config_global core.logAllRefUpdates false."""
    repo = make_repo(tmp_path)
    (repo / ".git" / "config").write_text(
        (repo / ".git" / "config").read_text().replace("\tlogallrefupdates = true\n", "")
    )
    Path(os.environ["HOME"], ".gitconfig").write_text("[core]\n\tlogAllRefUpdates = false\n")
    head = git("-C", repo, "rev-parse", "HEAD").decode().strip()
    assert run_cli(repo, "update-ref", "refs/heads/other", head) == 0
    subprocess.run(
        ["git", "-C", repo, "update-ref", "refs/heads/by-git", head],
        env=dict(os.environ),
        check=True,
    )
    assert not (repo / ".git" / "logs" / "refs" / "heads" / "by-git").exists()
    assert not (repo / ".git" / "logs" / "refs" / "heads" / "other").exists()


def _reftable_repo(tmp_path: Path) -> Path:
    """A bare reftable repository with main at one commit and no reflogs.

    The git on PATH may not write reftable: its objects, then an empty reftable
    stack and main written by gitodb.
    """
    work = make_repo(tmp_path)
    head = git("-C", work, "rev-parse", "HEAD").decode().strip()
    repo = tmp_path / "rt"
    (repo / "refs").mkdir(parents=True)
    shutil.copytree(work / ".git" / "objects", repo / "objects")
    (repo / "HEAD").write_text("ref: refs/heads/.invalid\n")
    (repo / "refs" / "heads").write_text("this repository uses the reftable format\n")
    (repo / "reftable").mkdir()
    (repo / "reftable" / "tables.list").write_text("")
    (repo / "config").write_text(
        "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
        "[extensions]\n\trefstorage = reftable\n"
    )
    assert run_cli(repo, "symbolic-ref", "HEAD", "refs/heads/main") == 0
    assert run_cli(repo, "update-ref", "refs/heads/main", head) == 0
    return repo


#: blocks small enough that the refs take several and the table gets indexes
SMALL = ("-c", "reftable.blockSize=100")
#: a reflog entry does not fit in such blocks (Git refuses it too)
NOLOG = ("-c", "core.logAllRefUpdates=false")


def test_reftable_index_objects_false(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as t0613: tables stay apart until pack-refs writes them with its options
    monkeypatch.setenv("GIT_TEST_REFTABLE_AUTOCOMPACTION", "false")
    repo = _reftable_repo(tmp_path)
    stdin = "".join(f"update refs/heads/b{i} refs/heads/main\n" for i in range(10)).encode()
    assert run_cli(repo, *NOLOG, "update-ref", "--stdin", stdin=stdin) == 0

    def obj_pos() -> int:
        tables = (repo / "reftable" / "tables.list").read_text().split()
        assert len(tables) == 1
        data = (repo / "reftable" / tables[0]).read_bytes()
        table = TableReader(data=data)
        assert table.ref_index_pos != 0  # several ref blocks: an object index is due
        return int(table.obj_pos)

    assert run_cli(repo, "-c", "reftable.indexObjects=false", *SMALL, "pack-refs") == 0
    assert obj_pos() == 0
    Path(os.environ["HOME"], ".gitconfig").write_text("[reftable]\n\tindexObjects = false\n")
    assert run_cli(repo, *NOLOG, "update-ref", "refs/heads/x", "refs/heads/main") == 0
    assert run_cli(repo, *SMALL, "pack-refs") == 0
    assert obj_pos() == 0
    Path(os.environ["HOME"], ".gitconfig").write_text("")
    assert run_cli(repo, *NOLOG, "update-ref", "refs/heads/y", "refs/heads/main") == 0
    assert run_cli(repo, *SMALL, "pack-refs") == 0
    assert obj_pos() != 0


def test_include_paths(tmp_path: Path, env: dict[str, str]) -> None:
    repo = make_repo(tmp_path)
    home = Path(os.environ["HOME"])
    (tmp_path / "rel").write_text("[t]\n\tv = relative\n[include]\n\tpath = nested\n")
    (tmp_path / "nested").write_text("[t]\n\tv = nested\n")
    (home / "inhome").write_text("[t]\n\tv = tilde\n")
    (home / ".gitconfig").write_text("[include]\n\tpath = ~/inhome\n\tpath = missing-is-fine\n")
    git("-C", repo, "config", "include.path", "../../rel")
    git("-C", repo, "config", "--add", "t.v", "after")
    want = git_values(repo, "t.v")
    assert want == ["tilde", "relative", "nested", "after"]
    assert Repository(repo).config.get_all("t.v") == want
    # from the command line an absolute include works, a relative one is an error
    assert git_values(repo, "t.v", "-c", f"include.path={tmp_path / 'nested'}")[-1] == "nested"
    cfg = Repository(repo, config_overrides=[f"include.path={tmp_path / 'nested'}"]).config
    assert cfg.get_all("t.v")[-1] == "nested"


def test_include_errors_in_gits_words(
    tmp_path: Path, env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "self").write_text("[include]\n\tpath = self\n")
    original = (repo / ".git" / "config").read_text()
    cases = [
        "[include]\n\tpath = ../../self\n",  # circular: depth limit
        "[include]\n\tpath\n",  # missing value
        "[include]\n\tpath = ~nosuchuser-gitodb/x\n",
        "[t]\n\tv = 1\nbad line\n",
    ]
    for text in cases:
        (repo / ".git" / "config").write_text(original + text)
        want = git_error(repo)
        assert want[0] == 128
        assert gitodb_error(repo, capfd) == want, text
    (repo / ".git" / "config").write_text(original)
    for arg in ("include.path=rel", "include.path", "=x", "foo", "a.b c", "a b.c", "a.", "a.1b"):
        want = git_error(repo, "-c", arg)
        assert want[0] == 128, arg
        assert gitodb_error(repo, capfd, "-c", arg) == want, arg


def test_command_line_environment_errors(
    tmp_path: Path,
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    repo = make_repo(tmp_path)
    cases = [
        {"GIT_CONFIG_COUNT": "x"},
        {"GIT_CONFIG_COUNT": "1x"},
        {"GIT_CONFIG_COUNT": "-1"},
        {"GIT_CONFIG_COUNT": "1"},
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b"},
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "ab", "GIT_CONFIG_VALUE_0": "x"},
        {"GIT_CONFIG_PARAMETERS": "a.b=c"},
        {"GIT_CONFIG_PARAMETERS": "'a.b'x"},
        {"GIT_CONFIG_PARAMETERS": "'a.b'='c'x"},
        {"GIT_CONFIG_NOSYSTEM": "junk"},
    ]
    # Git 2.55's word for it; 2.39 said "config value"
    new_words = {"bad boolean config value": "bad boolean environment value"}
    for case in cases:
        for k in ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"):
            monkeypatch.delenv(k, raising=False)
        monkeypatch.delenv("GIT_CONFIG_PARAMETERS", raising=False)
        monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
        _set(monkeypatch, env, **case)
        status, err = git_error(repo)
        assert status == 128, case
        for old, new in new_words.items():
            err = err.replace(old, new)
        assert gitodb_error(repo, capfd) == (status, err), case


def test_include_if_gitdir(tmp_path: Path, env: dict[str, str]) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "inc").write_text("[t]\n\tv = included\n")
    home = Path(os.environ["HOME"])
    conds = [
        "gitdir:repo/",
        "gitdir:repo/.git",
        "gitdir:REPO/",
        "gitdir/i:REPO/",
        f"gitdir:{tmp_path}/",
        f"gitdir:{tmp_path}/r*/.git",
        "gitdir:./",
        "gitdir:./repo/",
        "gitdir:~/",
        "gitdir:other/",
        "gitdir/i:**/Repo/**",
        "unknown:thing",
    ]
    for cond in conds:
        # in the global file, so that ./ is the home directory, and in a file next to repo
        for where in (home / ".gitconfig", tmp_path / "top"):
            where.write_text(f'[includeIf "{cond}"]\n\tpath = {tmp_path / "inc"}\n')
            (repo / ".git" / "config").write_text(
                (repo / ".git" / "config").read_text().split("[include]")[0]
                + f"[include]\n\tpath = {tmp_path / 'top'}\n"
            )
            if where == home / ".gitconfig":
                (tmp_path / "top").write_text("")
            else:
                (home / ".gitconfig").write_text("")
            want = git_values(repo, "t.v")
            assert Repository(repo).config.get_all("t.v") == want, (cond, where)
    # gitodb gives the same answers as git, and they are not all alike
    (home / ".gitconfig").write_text(f'[includeIf "gitdir:repo/"]\n\tpath = {tmp_path / "inc"}\n')
    assert Repository(repo).config.get_all("t.v") == ["included"]


ONBRANCH = (("topic/one", True), ("topic/", True), ("topic/*", True), ("t*", False))


def _set_include_if(config: Path, cond: str, target: Path) -> None:
    config.write_text(
        config.read_text().split("[includeIf")[0] + f'[includeIf "{cond}"]\n\tpath = {target}\n'
    )


def test_include_if_onbranch(tmp_path: Path, env: dict[str, str]) -> None:
    repo = make_repo(tmp_path, "-b", "topic/one")
    (tmp_path / "inc").write_text("[t]\n\tv = included\n")
    for pattern, hit in ONBRANCH:
        _set_include_if(repo / ".git" / "config", f"onbranch:{pattern}", tmp_path / "inc")
        want = git_values(repo, "t.v")
        assert want == (["included"] if hit else []), pattern
        assert Repository(repo).config.get_all("t.v") == want, pattern
    git("-C", repo, "checkout", "-q", "--detach")
    assert Repository(repo).config.get_all("t.v") == git_values(repo, "t.v") == []


def test_include_if_onbranch_reftable(tmp_path: Path, env: dict[str, str]) -> None:
    repo = _reftable_repo(tmp_path)
    assert run_cli(repo, "symbolic-ref", "HEAD", "refs/heads/topic/one") == 0
    (tmp_path / "inc").write_text("[t]\n\tv = included\n")
    for pattern, hit in ONBRANCH:  # the answers git gives on files (test above)
        _set_include_if(repo / "config", f"onbranch:{pattern}", tmp_path / "inc")
        assert Repository(repo).config.get_all("t.v") == (["included"] if hit else []), pattern


def test_include_if_hasconfig_remote_url(
    tmp_path: Path, env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path)
    home = Path(os.environ["HOME"])
    (tmp_path / "inc").write_text("[t]\n\tv = included\n")
    # the condition is in the global file, the URL in the repository's: found ahead
    for pattern, url, hit in (
        ("https://ex.com/*", "https://ex.com/a/b", False),
        ("https://ex.com/*", "https://ex.com/ab", True),
        ("https://ex.com/**", "https://ex.com/a/b", True),
    ):
        (home / ".gitconfig").write_text(
            f'[includeIf "hasconfig:remote.*.url:{pattern}"]\n\tpath = {tmp_path / "inc"}\n'
        )
        git("-C", repo, "config", "remote.origin.url", url)
        want = git_values(repo, "t.v")
        assert want == (["included"] if hit else [])
        assert Repository(repo).config.get_all("t.v") == want
    # a file included that way may not set a remote URL
    (tmp_path / "inc").write_text('[remote "x"]\n\turl = https://elsewhere\n')
    want = git_error(repo)
    assert want[0] == 128 and "remote URLs cannot be configured" in want[1]
    assert gitodb_error(repo, capfd) == want
    with pytest.raises(ConfigError):
        Repository(repo)


def test_repository_format_is_the_local_file_alone(tmp_path: Path, env: dict[str, str]) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "ext").write_text(
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tfoo = 1\n"
    )
    git("-C", repo, "config", "include.path", str(tmp_path / "ext"))
    assert git_error(repo)[0] == 0
    Repository(repo)  # Git ignores extensions from includes, other levels and -c
    Repository(repo, config_overrides=["extensions.refstorage=bogus"])
    assert git_error(repo, "-c", "extensions.refstorage=bogus")[0] == 0


def test_system_file_is_the_one_git_on_path_reads(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitodb.repo.config_levels import system_config_path

    monkeypatch.delenv("GIT_CONFIG_SYSTEM")
    proc = subprocess.run(
        ["git", "config", "--system", "--show-origin", "--list"],
        env=dict(os.environ),
        capture_output=True,
        check=False,
    )
    out = proc.stdout.decode()
    if proc.returncode == 0 and out:
        path = out.split("\t", 1)[0].removeprefix("file:")
    else:  # fatal: unable to read config file '<path>': No such file or directory
        path = proc.stderr.decode().split("'")[1]
    assert system_config_path() == path
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "true")
    assert system_config_path() is None

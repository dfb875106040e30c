"""gitodb.cli.options: Git's parse-options grammar, messages and exit codes; -h everywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gitodb.cli.main import COMMANDS, main
from gitodb.cli.options import Option, OptionParser, UsageError, as_gitodb_usage, incompatible
from helpers import as_gitodb, git, git_env
from oracle import both


def _parser() -> OptionParser:
    return OptionParser(
        "demo",
        ["[-q] [-n <n>] <arg>...", "--mode-a | --mode-b\n[<more>]"],
        [
            Option("q", "quiet", "count", "be quiet"),
            Option("t", None, "string", "object type", argh="type"),
            Option("w", None, "bool", "write"),
            Option("n", "max-count", "int", "limit", argh="n"),
            Option(None, "stdin", "bool", "read stdin"),
            Option(None, "stdin-paths", "bool", "read paths"),
            Option(None, "no-filters", "bool", "store as is"),
            Option(None, "abbrev", "int", "digits", optional_value=True, default=-1),
            Option(None, "format", "string", "format", argh="format", negatable=False),
            Option(None, "mode-a", "cmdmode", "mode a", dest="mode", const="a"),
            Option("b", "mode-b", "cmdmode", "mode b", dest="mode", const="b"),
            Option(None, "secret", "bool", "hidden one", hidden=True),
            Option(None, None, "group", "other options"),
            Option(None, "a-very-long-option-name", "string", "wraps", argh="value"),
        ],
    )


def parse(*argv: str) -> tuple[SimpleNamespace, list[str]]:
    return _parser().parse(list(argv))


def usage_error(*argv: str) -> UsageError:
    with pytest.raises(UsageError) as e:
        parse(*argv)
    return e.value


def test_grammar() -> None:
    v, args = parse("-qqw", "-tblob", "x", "--max-count=3", "y", "-n", "4", "--stdin")
    assert (v.quiet, v.w, v.t, v.max_count, v.stdin, args) == (2, True, "blob", 4, True, ["x", "y"])
    v, args = parse("-wt", "commit", "--max-count", "7", "--no-quiet")
    assert (v.w, v.t, v.max_count, v.quiet) == (True, "commit", 7, 0)
    v, _ = parse("--stdin-p", "--fil", "--no-no-filters")  # prefixes; --filters negates
    assert (v.stdin_paths, v.no_filters) == (True, False)
    v, _ = parse("--no-filters")
    assert v.no_filters is True
    v, _ = parse("--abbrev")
    assert v.abbrev == -1
    v, args = parse("--abbrev", "5")  # an optional value is stuck
    assert (v.abbrev, args) == (-1, ["5"])
    v, _ = parse("--abbrev=5", "--no-abbrev")
    assert v.abbrev == 0
    v, args = parse("x", "--", "-w", "--stdin")
    assert (v.w, args) == (False, ["x", "-w", "--stdin"])
    v, args = parse("--end-of-options", "--stdin", "-")
    assert (v.stdin, args) == (False, ["--stdin", "-"])
    v, _ = parse("--mode-a", "--mode-a")  # the same mode twice is fine
    assert v.mode == "a"
    v, _ = parse("--max-count= +12")  # strtol: blanks and a sign
    assert v.max_count == 12


@pytest.mark.parametrize(
    "argv, stderr, usage_on",
    [
        (["--bogus"], "error: unknown option `bogus'\n", "stderr"),
        (["-wx"], "error: unknown switch `x'\n", "stderr"),
        (["--stdin=1"], "error: option `stdin' takes no value\n", None),
        (["--no-stdin=1"], "error: option `no-stdin' takes no value\n", None),
        (["-t"], "error: switch `t' requires a value\n", None),
        (["--max-count"], "error: option `max-count' requires a value\n", None),
        (["--max-count=3x"], "error: option `max-count' expects a numerical value\n", None),
        (["-nx"], "error: switch `n' expects a numerical value\n", None),
        (["--no-format"], "error: unknown option `no-format'\n", "stderr"),
        (["--st"], "error: ambiguous option: st (could be --stdin or --stdin-paths)\n", "stdout"),
        (["--mode-a", "-b"], "error: switch `b' is incompatible with --mode-a\n", None),
        (["-b", "--mode-a"], "error: option `mode-a' is incompatible with --mode-b\n", None),
        (["-stdin"], "error: did you mean `--stdin` (with two dashes)?\n", None),
        (["--no-mode-a"], "error: unknown option `no-mode-a'\n", "stderr"),
    ],
)
def test_errors(argv: list[str], stderr: str, usage_on: str | None) -> None:
    e = usage_error(*argv)
    usage = _parser().usage_text()
    assert e.status == 129
    assert e.stderr == stderr + (usage if usage_on == "stderr" else "")
    assert e.stdout == (usage if usage_on == "stdout" else "")


def test_help_layout() -> None:
    text = _parser().usage_text()
    assert text == (
        "usage: gitodb demo [-q] [-n <n>] <arg>...\n"
        "   or: gitodb demo --mode-a | --mode-b\n"
        "                   [<more>]\n"
        "\n"
        "    -q, --quiet           be quiet\n"
        "    -t <type>             object type\n"
        "    -w                    write\n"
        "    -n, --max-count <n>   limit\n"
        "    --stdin               read stdin\n"
        "    --stdin-paths         read paths\n"
        "    --no-filters          store as is\n"
        "    --abbrev[=<n>]        digits\n"
        "    --format <format>     format\n"
        "    --mode-a              mode a\n"
        "    -b, --mode-b          mode b\n"
        "\n"
        "other options\n"
        "    --a-very-long-option-name <value>\n"
        "                          wraps\n"
        "\n"
    )
    for argv in (["-h"], ["x", "-wh"], ["--help"], ["x", "--help"]):
        e = usage_error(*argv)
        assert (e.status, e.stdout, e.stderr) == (129, text, ""), argv
    full = usage_error("--help-all").stdout
    assert "    --secret              hidden one\n" in full and "secret" not in text


def test_disallowed_abbreviations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS", "true")
    assert parse("--stdin")[0].stdin is True
    e = usage_error("--stdin-p")
    assert (e.status, e.stderr) == (
        128,
        "fatal: disallowed abbreviated or ambiguous option 'stdin-p'\n",
    )


def test_incompatible() -> None:
    e = incompatible("-p", "-e")
    assert (e.status, e.stderr) == (128, "fatal: options '-p' and '-e' cannot be used together\n")
    assert incompatible("-a", "-b", "-c").stderr == (
        "fatal: options '-a', '-b', and '-c' cannot be used together\n"
    )


def test_as_gitodb_usage() -> None:
    git_text = (
        "error: x\nusage: git hash-object [-t <type>]\n                       [--stdin]\n"
        "   or: git hash-object --stdin-paths\n\n    -t <type>             type\n"
    )
    assert as_gitodb_usage(git_text) == (
        "error: x\nusage: gitodb hash-object [-t <type>]\n                          [--stdin]\n"
        "   or: gitodb hash-object --stdin-paths\n\n    -t <type>             type\n"
    )


# -- every command answers -h and --help ---------------------------------------------


def _run(capfd: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capfd.readouterr()
    return status, out, err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_dash_h(
    command: str, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not a repository: -h must not need one
    for flag in ("-h", "--help"):
        status, out, err = _run(capfd, command, flag)
        assert status == 129, (command, flag, out, err)
        assert out.startswith(f"usage: gitodb {command}"), (command, flag, out)
        assert "usage: git " not in out and err == ""


def test_top_level_options(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    status, out, err = _run(capfd, "--zlib-backend")
    assert status == 129 and out == ""
    assert err.startswith("no backend given for '--zlib-backend' option\nusage: gitodb [-C")
    for argv, first in (
        (["-C"], "no directory given for '-C' option"),
        (["--git-dir"], "no directory given for '--git-dir' option"),
        (["-c"], "-c expects a configuration string"),
        (["--bogus"], "unknown option: --bogus"),
        (["-Cx"], "unknown option: -Cx"),
        (["--git-d=x", "version"], "unknown option: --git-d=x"),
    ):
        status, out, err = _run(capfd, *argv)
        assert (status, out) == (129, ""), argv
        assert err.startswith(first + "\nusage: gitodb [-C <path>]"), (argv, err)
    status, out, _err = _run(capfd, "-h")
    assert status == 0 and out.startswith("usage: gitodb [-C <path>]") and "commands:" in out
    status, out, _err = _run(capfd, "--zlib-backend", "zlib", "-C", str(tmp_path), "version")
    assert status == 0 and out.startswith("gitodb version ")
    status, out, _err = _run(capfd, "--zlib-backend=zlib", "--version")
    assert status == 0 and out.startswith("gitodb version ")


def test_top_level_missing_value_is_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gitodb", "--zlib-backend"], capture_output=True, env=git_env()
    )
    assert proc.returncode == 129 and b"Traceback" not in proc.stderr


# -- the converted commands against git ------------------------------------------------


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("opts")
    git("init", "-q", path)
    (path / "a").write_text("a\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "a", cwd=path)
    git("repack", "-q", "-a", "-d", cwd=path)
    return path


CASES: dict[str, list[str]] = {
    "ls-tree": [
        "--na HEAD",
        "--abbrev=x HEAD",
        "-h",
        "--no-format HEAD",
        "--form=%(path) HEAD",
        "-l --name-only HEAD",
        "--name-only -l HEAD",
        "--no-abbrev HEAD",
        "-rl HEAD",
        "--abbrev 5 HEAD",
        "--abbrev= HEAD",
        "--abbrev=5x HEAD",
        "-x HEAD",
        "-lx HEAD",
        "--long=3 HEAD",
        "--no-long HEAD",
        "--format",
        "--help-all",
        "HEAD -h",
        "--end-of-options HEAD",
        "-- HEAD",
        "",
        "--obj HEAD",
        "-long HEAD",
        "--abbrev=100 HEAD",
        "--format=%(path) -l HEAD",
    ],
    "merge-base": [
        "-h",
        "--help-all",
        "--al HEAD HEAD",
        "-a",
        "--no-all HEAD HEAD",
        "--oct --ind HEAD",
        "--is HEAD",
        "--fork",
        "--fork-point=x",
        "-ax",
        "--independent --all HEAD",
        "--i HEAD",
        "-all HEAD HEAD",
        "--is-ancestor --all HEAD HEAD",
    ],
    "verify-pack": [
        "",
        "-h",
        "--bogus",
        "-vs",
        "--verb",
        "-x",
        "--no-verbose",
        "--stat",
        "--help-all",
        "--object-format",
        "--object-format=bogus x",
    ],
    "version": ["--bogus", "-h", "--build-options=1", "-x", "--help-all"],
}


@pytest.mark.parametrize("command, args", [(c, a) for c, cases in CASES.items() for a in cases])
def test_converted_commands_parse_like_git(repo: Path, command: str, args: str) -> None:
    theirs, ours = both(repo, command, *args.split())
    assert ours == (theirs[0], as_gitodb(theirs[1]), as_gitodb(theirs[2]))

"""for-each-ref: atoms, modifiers, quoting, sorting and filters, compared with git on PATH.

Where the ``git`` on PATH (2.39) lacks a feature (``--exclude``, ``--omit-empty``,
``:mailmap``, ``--start-after``), the expected bytes are Git 2.55's, written out.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitodb.objects.datefmt import parse_date_mode, relative_date, show_date
from gitodb.objects.mailmap import Mailmap
from gitodb.objects.trailers import TrailerOptions, format_trailers
from gitodb.refs.peel import shorten_ref
from gitodb.refs.wildmatch import wildmatch
from gitodb.repo import Repository
from gitodb.repo.refformat import RefFilter, list_refs, versioncmp
from helpers import git, git_env, run_cli

TRAILERS = (
    b"Reviewed-by: A U Thor <author@example.com>\n"
    b"Signed-off-by: A U Thor <author@example.com>\n"
    b"[ v2 updated patch description ]\n"
    b"Acked-by: A U Thor\n  <author@example.com>\n"
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fer") / "r"
    git("init", "-q", "-b", "main", root)
    (root / ".mailmap").write_text(
        "A Thor <athor@example.com> A U Thor <author@example.com>\n"
        "C Mitter <cmitter@example.com> C O Mitter <committer@example.com>\n"
    )
    (root / "one").write_text("one\n")
    git("add", "one", cwd=root)
    git("commit", "-q", "-m", "Initial", cwd=root)
    git("tag", "-a", "-m", "Tagging it", "testtag", cwd=root)
    git("update-ref", "refs/remotes/origin/main", "main", cwd=root)
    git("remote", "add", "origin", "nowhere", cwd=root)
    git("config", "branch.main.remote", "origin", cwd=root)
    git("config", "branch.main.merge", "refs/heads/main", cwd=root)
    git("remote", "add", "myfork", "elsewhere", cwd=root)
    git("config", "remote.pushdefault", "myfork", cwd=root)
    git("config", "push.default", "current", cwd=root)
    (root / "two").write_text("two\n")
    git("add", "two", cwd=root)
    git("commit", "-q", "-F", "-", cwd=root, input=b"trailers: subject\n\nSome body\n\n" + TRAILERS)
    git(
        "tag",
        "-m",
        "first subject line\nsecond subject line\n\nbody 1\nbody 2",
        "multiline",
        cwd=root,
    )
    git("symbolic-ref", "refs/heads/sym", "refs/heads/main", cwd=root)
    git("update-ref", "refs/mytrees/first", "main^{tree}", cwd=root)
    git("update-ref", "refs/myblobs/first", "main:one", cwd=root)
    for i, email in enumerate(["a", "B", "b", "A"]):
        _tag_with(root, f"multi-{i}", f"{email}@example.com", f"@{100000 * (1 + i % 2)} +0000")
    return root


def _tag_with(root: Path, name: str, email: str, date: str) -> None:
    import subprocess

    env = git_env()
    env.update(GIT_COMMITTER_EMAIL=email, GIT_COMMITTER_DATE=date)
    subprocess.run(
        ["git", "tag", "-m", f"tag {name}", name],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )


def ours(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], *args: str
) -> tuple[int, bytes, bytes]:
    capfdbinary.readouterr()
    code = run_cli(repo, "for-each-ref", *args)
    got = capfdbinary.readouterr()
    return code, got.out, got.err


ATOMS_239 = [
    "refname",
    "refname:short",
    "refname:lstrip=1",
    "refname:lstrip=-1",
    "refname:rstrip=1",
    "refname:rstrip=-2",
    "refname:strip=2",
    "upstream",
    "upstream:short",
    "upstream:lstrip=2",
    "push",
    "push:short",
    "push:rstrip=1",
    "objecttype",
    "objectsize",
    "objectsize:disk",
    "deltabase",
    "objectname",
    "objectname:short",
    "objectname:short=1",
    "objectname:short=10",
    "tree",
    "tree:short",
    "parent",
    "parent:short",
    "numparent",
    "object",
    "type",
    "tag",
    "*objectname",
    "*objecttype",
    "*objectsize",
    "author",
    "authorname",
    "authoremail",
    "authoremail:trim",
    "authoremail:localpart",
    "authordate",
    "committer",
    "committerdate",
    "tagger",
    "taggername",
    "taggeremail",
    "taggerdate",
    "creator",
    "creatordate",
    "subject",
    "subject:sanitize",
    "body",
    "contents",
    "contents:subject",
    "contents:body",
    "contents:signature",
    "contents:size",
    "contents:lines=1",
    "contents:lines=3",
    "trailers",
    "trailers:only",
    "trailers:unfold",
    "trailers:key=Signed-off-by",
    "trailers:key=acked-by,unfold",
    "trailers:separator=%x2C,key=Reviewed-by,key=Signed-off-by:",
    "trailers:key_value_separator=%x2C,key=Reviewed-by",
    "trailers:only=no",
    "trailers:valueonly,key=Signed-off-by",
    "contents:trailers:only",
    "symref",
    "symref:short",
    "symref:lstrip=-1",
    "HEAD",
    "raw",
    "raw:size",
    "*raw",
    "authordate:short",
    "authordate:iso8601",
    "authordate:rfc2822",
    "authordate:raw",
    "authordate:unix",
    "committerdate:format:%Y %m %d %H:%M %z %%",
    "creatordate:default-local",
    "taggerdate:short-local",
    "taggerdate:raw-local",
]


@pytest.mark.parametrize("atom", ATOMS_239)
def test_atom_matches_git(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], atom: str) -> None:
    fmt = f"%({atom})|"
    code, out, _ = ours(repo, capfdbinary, f"--format={fmt}")
    assert code == 0
    assert out == git("for-each-ref", f"--format={fmt}", cwd=repo)


@pytest.mark.parametrize(
    "args",
    [
        ["--sort=-refname"],
        ["--sort=objecttype", "--sort=-objectsize"],
        ["--sort=*objectname"],
        ["--sort=raw"],
        ["--sort=taggeremail", "--sort=taggerdate"],
        ["--sort=version:refname"],
        ["--count=2", "--sort=-creatordate"],
        ["--shell"],
        ["--perl"],
        ["--python"],
        ["--tcl"],
        ["refs/tags/multi-*"],
        ["refs/tags"],
        ["refs/tags/", "refs/heads"],
        ["--points-at=main"],
        ["--points-at=testtag"],
        ["--merged=main~1"],
        ["--no-merged=main~1"],
        ["--contains=main~1"],
        ["--no-contains=main"],
        ["--ignore-case", "refs/heads/MAIN"],
        ["--ignore-case", "--sort=taggeremail", "refs/tags/multi-*"],
        ["--format=%(if:equals=refs/heads/main)%(refname)%(then)yes%(else)no%(end)"],
        ["--format=%(if)%(upstream)%(then)[%(upstream:track)]%(end)%(refname)"],
        ["--shell", "--format=%(align:30,middle)%(refname)%(end)%(refname)"],
        ["--format=%(upstream:track)|%(upstream:trackshort)|%(push:track,nobracket)"],
        ["--format=%(color:bold red)%(refname)%(color:reset) %(color:green)x", "--color"],
        ["--format=%(color:green)%(refname)"],
        ["--format=%(raw)", "--perl"],
        ["--format=%00%(refname)%%%x41"],
    ],
)
def test_options_match_git(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    code, out, _ = ours(repo, capfdbinary, *args)
    assert code == 0
    assert out == git("for-each-ref", *args, cwd=repo)


@pytest.mark.parametrize(
    "args,err",
    [
        (["--format=%(INVALID)"], b"fatal: unknown field name: INVALID\n"),
        (
            ["--format=%(authoremail:mailmaptrim)"],
            b"fatal: unrecognized %(authoremail) argument: trim\n",
        ),
        (
            ["--format=%(committeremail:localpart,,,trim)"],
            b"fatal: unrecognized %(committeremail) argument: ,,trim\n",
        ),
        (["--format=%(HEAD:foo)"], b"fatal: %(HEAD) does not take arguments\n"),
        (["--format=%(subject:foo)"], b"fatal: unrecognized %(subject) argument: foo\n"),
        (["--format=%(refname:foo)"], b"fatal: unrecognized %(refname) argument: foo\n"),
        (
            ["--format=%(trailers:unsupported)"],
            b"fatal: unknown %(trailers) argument: unsupported\n",
        ),
        (["--format=%(trailers:key)"], b"fatal: expected %(trailers:key=<value>)\n"),
        (
            ["--format=%(contents:trailersonly)"],
            b"fatal: unrecognized %(contents) argument: trailersonly\n",
        ),
        (
            ["--format=%(objectname:short=0)"],
            b"fatal: positive value expected '0' in %(objectname:short=0)\n",
        ),
        (["--format=%(authordate:INVALID)"], b"fatal: unknown date format INVALID\n"),
        (["--format=%(then)"], b"fatal: format: %(then) atom used without a %(if) atom\n"),
        (["--format=%(if)x"], b"fatal: format: %(end) atom missing\n"),
        (["--format=%(end)"], b"fatal: format: %(end) atom used without corresponding atom\n"),
        (["--format=%(rest)"], b"fatal: this command reject atom %(rest)\n"),
        (
            ["--format=%(raw)", "--shell"],
            b"fatal: --format=raw cannot be used with --python, --shell, --tcl\n",
        ),
    ],
)
def test_errors_are_fatal_like_git(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str], err: bytes
) -> None:
    code, out, got_err = ours(repo, capfdbinary, *args)
    assert (code, got_err) == (128, err)


def test_usage_and_quoting_errors(
    repo: Path, tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, _ = ours(tmp_path, capfdbinary, "--sort=bogus", "-h")
    assert code == 129 and out.startswith(b"usage: gitodb for-each-ref ")
    code, _, err = ours(repo, capfdbinary, "--perl", "--shell")
    assert code == 129 and err.startswith(b"error: more than one quoting style?\n")
    code, _, err = ours(repo, capfdbinary, "--format=%(x")
    assert code == 129 and err.startswith(b"error: malformed format string %(x\n")
    code, _, err = ours(repo, capfdbinary, "--count=-1")
    assert code == 129 and err.startswith(b"error: invalid --count argument: `-1'\n")


def test_newer_options(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    _, out, _ = ours(
        repo, capfdbinary, "--format=%(refname)", "refs/tags/", "--exclude=refs/tags/multi-*"
    )
    assert out == b"refs/tags/multiline\nrefs/tags/testtag\n"
    _, out, _ = ours(
        repo,
        capfdbinary,
        "--omit-empty",
        "--format=%(if:equals=refs/heads/main)%(refname)%(then)%(refname)%(end)",
    )
    assert out == b"refs/heads/main\n"
    _, out, _ = ours(repo, capfdbinary, "--format=%(refname)", "--start-after=refs/tags/multi-3")
    assert out == b"refs/tags/multiline\nrefs/tags/testtag\n"
    _, out, _ = ours(
        repo,
        capfdbinary,
        "refs/heads/main",
        "--format=%(authorname:mailmap)|%(authoremail:mailmap,trim)|"
        "%(committeremail:localpart,mailmap)",
    )
    assert out == b"A Thor|athor@example.com|cmitter\n"
    _, out, _ = ours(repo, capfdbinary, "--stdin", "--format=%(refname)")
    assert out == b"".join(
        line + b"\n" for line in git("for-each-ref", "--format=%(refname)", cwd=repo).split()
    )


def test_raw_size_sorts_as_number(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    # Git 2.55 (not 2.39) compares %(raw:size) and %(contents:size) as numbers
    for key in ("raw:size", "contents:size"):
        _, out, _ = ours(repo, capfdbinary, f"--sort={key}", f"--format=%({key}) %(refname)")
        rows = [line.split(b" ") for line in out.splitlines()]
        assert rows == sorted(rows, key=lambda r: (int(r[0] or 0), r[1]))


def test_library_api(repo: Path) -> None:
    r = Repository(repo)
    lines = list_refs(
        r, "%(refname:short) %(numparent)", RefFilter(patterns=["refs/heads/"]), sort=["-refname"]
    )
    assert lines == [b"sym 1", b"main 1"]


def test_ambiguous_short_names(tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    git("init", "-q", "-b", "main", tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=tmp_path)
    git("tag", "main", cwd=tmp_path)
    for strict in ("true", "false"):
        git("config", "core.warnambiguousrefs", strict, cwd=tmp_path)
        args = ("--format=%(refname:short)", "refs/heads/main", "refs/tags/main")
        _, out, _ = ours(tmp_path, capfdbinary, *args)
        assert out == git("for-each-ref", *args, cwd=tmp_path)


def test_shorten_ref_rules() -> None:
    refs = {"refs/heads/main", "refs/tags/main", "refs/remotes/origin/HEAD"}
    assert shorten_ref("refs/heads/main", refs.__contains__, strict=True) == "heads/main"
    assert shorten_ref("refs/tags/main", refs.__contains__) == "main"
    assert shorten_ref("refs/remotes/origin/HEAD", refs.__contains__) == "origin"


def test_dates() -> None:
    assert show_date(1151968723, 200, parse_date_mode("default")) == "Tue Jul 4 01:18:43 2006 +0200"
    assert show_date(1151968723, 200, parse_date_mode("rfc")) == "Tue, 4 Jul 2006 01:18:43 +0200"
    assert show_date(1151968723, -130, parse_date_mode("iso-strict")) == "2006-07-03T21:48:43-01:30"
    # Git 2.55 writes a zero zone as Z (2.39: +00:00)
    assert show_date(0, 0, parse_date_mode("iso-strict")) == "1970-01-01T00:00:00Z"
    assert show_date(1151968723, 200, parse_date_mode("format:%s %z")) == "1151968723 +0200"
    assert relative_date(0, 2 * 365 * 86400 + 40 * 86400) == "2 years, 1 month ago"
    assert relative_date(100, 101) == "1 second ago"
    with pytest.raises(Exception, match="unknown date format"):
        parse_date_mode("bogus")


def test_trailers_and_mailmap_units() -> None:
    msg = b"subject\n\nbody\n\n" + TRAILERS
    assert format_trailers(msg, TrailerOptions()) == TRAILERS
    assert format_trailers(msg, TrailerOptions(only=True, unfold=True)) == (
        b"Reviewed-by: A U Thor <author@example.com>\n"
        b"Signed-off-by: A U Thor <author@example.com>\n"
        b"Acked-by: A U Thor <author@example.com>\n"
    )
    assert format_trailers(b"only a subject: line\n", TrailerOptions()) == b""
    m = Mailmap()
    m.read(b"<new@x> <OLD@x>\nNew Name <n@x> Old Name <o@x>\n")
    assert m.map(b"Any", b"old@X") == (b"Any", b"new@x")
    assert m.map(b"old name", b"o@x") == (b"New Name", b"n@x")
    assert m.map(b"Other", b"o@x") == (b"Other", b"o@x")


def test_wildmatch_and_versions() -> None:
    assert wildmatch("refs/tags/v*", "refs/tags/v1", pathname=True)
    assert not wildmatch("refs/*", "refs/tags/v1", pathname=True)
    assert wildmatch("refs/**/v1", "refs/tags/x/v1", pathname=True)
    assert wildmatch("refs/**/v1", "refs/v1", pathname=True)
    assert wildmatch("refs/[a-t]ags/*", "refs/tags/x", pathname=True)
    assert wildmatch("REFS/*", "refs/x", pathname=True, casefold=True)
    assert versioncmp(b"v1.9", b"v1.10") < 0
    assert versioncmp(b"v1.010", b"v1.09") < 0  # leading zeros sort as fractions
    assert sorted(
        [b"v1.10", b"v1.2", b"v1.1"], key=__import__("functools").cmp_to_key(versioncmp)
    ) == [b"v1.1", b"v1.2", b"v1.10"]


def test_describe_matches_git_describe(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    git("init", "-q", "-b", "master", tmp_path)
    for msg in ("one", "two", "three"):
        git("commit", "-q", "--allow-empty", "-m", msg, cwd=tmp_path)
        if msg == "one":
            git("tag", "light", cwd=tmp_path)
        if msg == "two":
            git("tag", "-a", "-m", "t", "v1", cwd=tmp_path)
    git("checkout", "-q", "-b", "side", "HEAD~2", cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "s1", cwd=tmp_path)
    git("tag", "-a", "-m", "s", "sidetag", cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "s2", cwd=tmp_path)
    git("checkout", "-q", "master", cwd=tmp_path)
    git("merge", "-q", "--no-edit", "side", cwd=tmp_path)
    cases = [
        ("", ()),
        ("tags", ("--tags",)),
        ("abbrev=12", ("--abbrev=12",)),
        ("match=v*", ("--match", "v*")),
        ("exclude=v*", ("--exclude", "v*")),
        ("abbrev=0", ("--abbrev=0",)),
    ]
    for arg, flags in cases:
        _, out, _ = ours(
            tmp_path, capfdbinary, f"--format=%(describe{':' + arg if arg else ''})", "refs/heads/"
        )
        want = b""
        for ref in (b"refs/heads/master", b"refs/heads/side"):
            want += git("describe", *flags, ref.decode(), cwd=tmp_path, check=False) or b"\n"
        assert out == want, arg


def test_broken_tag_fails_even_with_stored_peeled_value(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    git("init", "-q", "-b", "main", tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=tmp_path)
    git("tag", "-m", "good", "good", cwd=tmp_path)
    bad = git("cat-file", "tag", "good", cwd=tmp_path).replace(b"type commit", b"type blob")
    oid = git("hash-object", "-w", "-t", "tag", "--stdin", cwd=tmp_path, input=bad).strip()
    git("update-ref", "refs/tags/bad", oid.decode(), cwd=tmp_path)
    # gitodb's pack-refs stores a peeled value for it (as reftable writes do)
    assert run_cli(tmp_path, "pack-refs", "--all") == 0
    assert b"^" in (tmp_path / ".git/packed-refs").read_bytes()
    code, _, err = ours(tmp_path, capfdbinary, "--format=%(*objectname)", "refs/tags/bad")
    assert code == 128 and b"is a commit, not a blob" in err
    code, out, err = ours(tmp_path, capfdbinary, "--format=%(is-base:main) %(refname)")
    assert code == 0 and b"(main) refs/heads/main" in out
    assert err.count(b"\n") == 2 and b"error: bad tag pointer to" in err


@pytest.fixture
def gpg_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh GNUPGHOME; its gpg-agent is stopped afterwards (it would outlive the test)."""
    import shutil
    import subprocess

    if shutil.which("gpg") is None:
        pytest.skip("needs gpg")
    home = tmp_path / "gpghome"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    yield home
    subprocess.run(
        ["gpgconf", "--kill", "gpg-agent"],
        env={**os.environ, "GNUPGHOME": str(home)},
        capture_output=True,
    )


def test_signature_atoms_match_git_log(
    tmp_path: Path, gpg_home: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    import subprocess

    home = gpg_home
    env = {**git_env(), "GNUPGHOME": str(home)}
    subprocess.run(
        [
            "gpg",
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "T U <t@example.com>",
            "default",
            "default",
            "never",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    repo = tmp_path / "r"
    git("init", "-q", "-b", "main", repo)

    def g(*args: str) -> bytes:
        return subprocess.run(
            ["git", *args], cwd=repo, env=env, check=True, capture_output=True
        ).stdout

    g("-c", "user.signingkey=t@example.com", "commit", "-q", "-S", "--allow-empty", "-m", "s")
    g("tag", "signed")
    raw = g("cat-file", "commit", "HEAD").replace(b"\n\ns\n", b"\n\nforged\n")
    forged = subprocess.run(
        ["git", "hash-object", "-w", "-t", "commit", "--stdin"],
        cwd=repo,
        env=env,
        input=raw,
        check=True,
        capture_output=True,
    ).stdout
    g("tag", "forged", forged.decode().strip())
    g("commit", "-q", "--allow-empty", "-m", "plain")
    g("tag", "plain")
    fmt = (
        "%(signature:grade)|%(signature:key)|%(signature:signer)|%(signature:fingerprint)|"
        "%(signature:primarykeyfingerprint)|%(signature:trustlevel)"
    )
    _, out, _ = ours(repo, capfdbinary, f"--format={fmt}", "refs/tags/")
    plain, signed = (
        g("log", "-1", "--format=%G?|%GK|%GS|%GF|%GP|%GT", t) for t in ("plain", "signed")
    )
    _, key, signer, *_rest = signed.split(b"|")
    # a bad signature: key and signer known, no fingerprints (git 2.39's log aborts here)
    assert out == b"B|" + key + b"|" + signer + b"|||undefined\n" + plain + signed
    assert signed.startswith(b"G|")


def test_type_and_size_atoms_read_only_the_header(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    # A commit whose body Git cannot parse: %(objecttype)/%(objectsize) need only its
    # header, so Git lists it; an atom that needs the parsed commit fails on it.
    repo = tmp_path / "r"
    git("init", "-q", repo)
    bad = (
        git(
            "hash-object",
            "-t",
            "commit",
            "--literally",
            "-w",
            "--stdin",
            cwd=repo,
            input=b"tree nonsense\n\nbroken\n",
        )
        .strip()
        .decode()
    )
    (repo / ".git/refs/heads/bad").write_text(bad + "\n")  # update-ref refuses it
    for fmt in ([], ["--format=%(objectsize) %(objecttype) %(refname)"]):
        proc = subprocess.run(
            ["git", "for-each-ref", *fmt], cwd=repo, capture_output=True, env=git_env()
        )
        assert proc.returncode == 0
        assert ours(repo, capfdbinary, *fmt) == (0, proc.stdout, b"")
    code, _out, err = ours(repo, capfdbinary, "--format=%(tree)")
    assert code != 0 and b"parse_object_buffer failed" in err

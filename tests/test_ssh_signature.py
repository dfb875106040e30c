"""``%(signature…)`` of SSH-signed commits, against ``git log``'s ``%G?``/``%GK``... (git on PATH).

Git 2.39 has no ``%(signature)`` atoms but the same check behind ``%G?``, ``%GK``,
``%GS``, ``%GF``, ``%GP``, ``%GT`` and ``%GG``; Git 2.55's for-each-ref printed the
same (t6300 test 423).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import git, run_cli

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")

FER = (
    "%(signature:grade)%0a%(signature:key)%0a%(signature:signer)%0a%(signature:fingerprint)"
    "%0a%(signature:primarykeyfingerprint)%0a%(signature:trustlevel)"
)
LOG = "%G?%n%GK%n%GS%n%GF%n%GP%n%GT"


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
    )


@pytest.fixture
def signed(tmp_path: Path) -> Path:
    _keygen(tmp_path / "key1", "k1")
    _keygen(tmp_path / "key2", "k2")
    pub = (tmp_path / "key1.pub").read_text()
    (tmp_path / "allowed").write_text(f'"principal with number 1" {pub}')
    repo = tmp_path / "repo"
    git("init", "-q", repo)
    git("-C", repo, "config", "gpg.format", "ssh")
    git("-C", repo, "config", "gpg.ssh.allowedSignersFile", tmp_path / "allowed")
    git("-C", repo, "config", "user.signingkey", tmp_path / "key1")
    git("-C", repo, "commit", "-q", "--allow-empty", "-S", "-m", "known key")
    git("-C", repo, "tag", "known")
    git("-C", repo, "config", "user.signingkey", tmp_path / "key2")
    git("-C", repo, "commit", "-q", "--allow-empty", "-S", "-m", "unknown key")
    git("-C", repo, "tag", "unknown")
    raw = git("-C", repo, "cat-file", "commit", "known").replace(b"known key", b"forged")
    forged = git("-C", repo, "hash-object", "-w", "-t", "commit", "--stdin", input=raw)
    git("-C", repo, "update-ref", "refs/tags/forged", forged.decode().strip())
    return repo


@pytest.mark.parametrize("tag", ["known", "unknown", "forged"])
def test_ssh_signature_atoms_like_git(
    signed: Path, capfd: pytest.CaptureFixture[str], tag: str
) -> None:
    want = git("-C", signed, "log", "-1", f"--format={LOG}", tag).decode()
    want_output = git("-C", signed, "log", "-1", "--format=%GG", tag).decode()
    capfd.readouterr()
    assert run_cli(signed, "for-each-ref", f"--format={FER}", f"refs/tags/{tag}") == 0
    assert capfd.readouterr().out == want
    assert run_cli(signed, "for-each-ref", "--format=%(signature)", f"refs/tags/{tag}") == 0
    # both end with the output's own newline and then the one after each entry
    assert capfd.readouterr().out == want_output
    assert want.split("\n")[0] == {"known": "G", "unknown": "U", "forged": "B"}[tag]


def test_ssh_signature_needs_allowed_signers(
    signed: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    git("-C", signed, "config", "--unset", "gpg.ssh.allowedSignersFile")
    want = subprocess.run(
        ["git", "-C", str(signed), "log", "-1", "--format=%G?", "known"],
        capture_output=True,
        check=True,
        env=__import__("helpers").git_env(),
    )
    capfd.readouterr()
    assert run_cli(signed, "for-each-ref", "--format=%(signature:grade)", "refs/tags/known") == 0
    out, err = capfd.readouterr()
    assert (out, err) == (want.stdout.decode(), want.stderr.decode())

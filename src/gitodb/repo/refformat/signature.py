"""``%(signature…)``: checking a commit's OpenPGP/X.509 signature with gpg, as Git does.

The signed payload is the commit without its ``gpgsig`` header, rebuilt by the
object model; ``gpg --keyid-format=long --status-fd=1 --verify <sig> -`` reads it,
and its ``[GNUPG:]`` status lines give the result (Git's ``parse_gpg_output``).
SSH signatures are not checked (``GitodbError``).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

from gitodb.errors import GitodbError
from gitodb.objects.commit import Commit
from gitodb.objects.headers import serialize_headers

TRUST_LEVELS = ("undefined", "never", "marginal", "fully", "ultimate")
#: status word -> (result, takes the user id after the key id)
_STATUS = {
    "GOODSIG": ("G", True),
    "BADSIG": ("B", True),
    "ERRSIG": ("E", False),
    "EXPSIG": ("X", True),
    "EXPKEYSIG": ("Y", True),
    "REVKEYSIG": ("R", True),
}


@dataclass
class SignatureCheck:
    """What checking one signature found (Git's ``struct signature_check``)."""

    result: str = "N"
    key: str = ""
    signer: str = ""
    fingerprint: str = ""
    primary_key_fingerprint: str = ""
    trust_level: int = 0
    output: bytes = b""

    @property
    def grade(self) -> str:
        """``%G?``: G, U (good but not trusted), B, E, X, Y, R or N."""
        if self.result == "G" and self.trust_level < TRUST_LEVELS.index("marginal"):
            return "U"
        return self.result


def parse_status(status: str) -> SignatureCheck:
    """A ``SignatureCheck`` from gpg's ``--status-fd`` lines."""
    sc = SignatureCheck()
    exclusive = 0
    for line in status.split("\n"):
        if not line.startswith("[GNUPG:] "):
            continue
        word, _, rest = line[9:].partition(" ")
        if word in _STATUS:
            exclusive += 1
            if exclusive > 1:  # several signatures: Git refuses to judge them
                return SignatureCheck(result="E", output=sc.output)
            sc.result, with_uid = _STATUS[word]
            key, _, uid = rest.partition(" ")
            sc.key = key
            if with_uid and uid:
                sc.signer = uid
        elif word.startswith("TRUST_"):
            level = word[6:].lower()
            if level not in TRUST_LEVELS:
                return SignatureCheck(result="E", output=sc.output)
            sc.trust_level = TRUST_LEVELS.index(level)
        elif word == "VALIDSIG":
            fields = rest.split(" ")
            sc.fingerprint = fields[0]
            sc.primary_key_fingerprint = fields[9] if len(fields) > 9 else ""
    return sc


def _program(config: Any, kind: str) -> str:
    if kind == "x509":
        return str(config.get("gpg.x509.program") or "gpgsm")
    return str(config.get("gpg.openpgp.program") or config.get("gpg.program") or "gpg")


def check_commit(commit: Commit, config: Any) -> SignatureCheck:
    """Check ``commit``'s ``gpgsig`` (``gpgsig-sha256`` in SHA-256 repositories)."""
    key = b"gpgsig-sha256" if commit.fmt.hexsz == 64 else b"gpgsig"
    sig = commit.block.get(key)
    if sig is None:
        return SignatureCheck()
    signature = sig + b"\n"
    block = commit.block
    payload = serialize_headers(
        [h for h in block.headers if h[0] != key], block.message, block.terminated
    )
    if signature.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        raise GitodbError("%(signature) of SSH signatures is not supported by gitodb")
    kind = "x509" if signature.startswith(b"-----BEGIN SIGNED MESSAGE-----") else "openpgp"
    args = ["--keyid-format=long"] if kind == "openpgp" else []
    fd, path = tempfile.mkstemp(prefix=".git_vtag_tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(signature)
        try:
            proc = subprocess.run(
                [_program(config, kind), *args, "--status-fd=1", "--verify", path, "-"],
                input=payload,
                capture_output=True,
                check=False,
            )
        except OSError as e:
            raise GitodbError(f"cannot run {_program(config, kind)}: {e.strerror}") from None
    finally:
        os.unlink(path)
    sc = parse_status(proc.stdout.decode("utf-8", "replace"))
    sc.output = proc.stderr
    return sc


def signature_value(sc: SignatureCheck, option: str) -> bytes:
    """The text of ``%(signature[:<option>])`` for a checked signature."""
    if option == "":
        return sc.output
    text = {
        "grade": sc.grade,
        "signer": sc.signer,
        "key": sc.key,
        "fingerprint": sc.fingerprint,
        "primarykeyfingerprint": sc.primary_key_fingerprint,
        "trustlevel": TRUST_LEVELS[sc.trust_level],
    }[option]
    return text.encode("utf-8", "surrogateescape")

"""``%(signature…)``: checking a commit's OpenPGP/X.509 signature with gpg, as Git does.

The signed payload is the commit without its ``gpgsig`` header, rebuilt by the
object model; ``gpg --keyid-format=long --status-fd=1 --verify <sig> -`` reads it,
and its ``[GNUPG:]`` status lines give the result (Git's ``parse_gpg_output``).

SSH signatures go to ``ssh-keygen`` (``gpg.ssh.program``) as Git sends them:
``-Y find-principals`` in ``gpg.ssh.allowedSignersFile``, then ``-Y verify`` as
each principal found, or ``-Y check-novalidate`` when none is (a good signature
of an unknown key: grade U); the first line of its output gives the result
(Git's ``parse_ssh_output``), all of it is ``%(signature)``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
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
        # Git asks ssh-keygen about the key as of the commit's date (payload_timestamp)
        return check_ssh(signature, payload, config, commit.commit_date)
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


def _run(argv: list[str], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, check=False)
    except OSError as e:
        raise GitodbError(f"cannot run {argv[0]}: {e.strerror}") from None


def _stripspace(text: bytes) -> bytes:
    """Git's ``strbuf_stripspace``: trailing blanks off each line, blank runs squeezed."""
    out: list[bytes] = []
    for line in text.split(b"\n"):
        line = line.rstrip(b" \t\r\v\f")
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return b"".join(line + b"\n" for line in out)


def check_ssh(signature: bytes, payload: bytes, config: Any, timestamp: int) -> SignatureCheck:
    """Check an SSH signature of ``payload`` like Git's ``verify_ssh_signed_buffer``."""
    from gitodb.repo.config_include import interpolate_path

    program = str(config.get("gpg.ssh.program") or "ssh-keygen")
    allowed = config.get("gpg.ssh.allowedsignersfile")
    if allowed:
        allowed = interpolate_path(allowed) or allowed
    if not allowed:
        from gitodb.errors import report

        report(
            "error",
            "gpg.ssh.allowedSignersFile needs to be configured and exist for ssh "
            "signature verification",
        )
        return SignatureCheck()
    revocation = config.get("gpg.ssh.revocationfile")
    # ssh-keygen reads YYYYMMDDHHMMSS as local time
    when = (
        [time.strftime("-Overify-time=%Y%m%d%H%M%S", time.localtime(timestamp))]
        if timestamp
        else []
    )
    fd, path = tempfile.mkstemp(prefix=".git_vtag_tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(signature)
        found = _run([program, "-Y", "find-principals", "-f", allowed, "-s", path, *when], None)
        if found.returncode and b"usage:" in found.stderr:
            raise GitodbError(
                "ssh-keygen -Y find-principals/verify is needed for ssh signature "
                "verification (available in openssh version 8.2p1+)"
            )
        principals = [p.rstrip(b"\r") for p in found.stdout.split(b"\n") if p.rstrip(b"\r")]
        if found.returncode or not principals:
            run = _run([program, "-Y", "check-novalidate", "-n", "git", "-s", path, *when], payload)
        else:
            extra: list[str] = []
            if revocation:
                if os.path.exists(revocation):
                    extra = ["-r", revocation]
                else:
                    from gitodb.errors import report

                    report(
                        "warning",
                        f"ssh signing revocation file configured but not found: {revocation}",
                    )
            for principal in principals:
                argv = [program, "-Y", "verify", "-n", "git", "-f", allowed]
                argv += ["-I", principal.decode("utf-8", "surrogateescape"), "-s", path]
                run = _run([*argv, *when, *extra], payload)
                if run.returncode == 0 and run.stdout.startswith(b"Good"):
                    break
    finally:
        os.unlink(path)
    output = _stripspace(run.stdout) + found.stderr + _stripspace(run.stderr)
    sc = parse_ssh_output(output)
    return sc


def parse_ssh_output(output: bytes) -> SignatureCheck:
    """Git's ``parse_ssh_output``: the first line says good (with principal or not) or bad."""
    sc = SignatureCheck(result="B", trust_level=TRUST_LEVELS.index("never"), output=output)
    line = output.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
    known = 'Good "git" signature for '
    unknown = 'Good "git" signature with '
    if line.startswith(known):
        rest = line[len(known) :]
        cut = rest.rfind(" with ")
        if cut < 0:
            return sc
        sc.result, sc.trust_level, sc.signer = "G", TRUST_LEVELS.index("fully"), rest[:cut]
        rest = rest[cut + 1 :]
    elif line.startswith(unknown):
        sc.result, sc.trust_level = "G", TRUST_LEVELS.index("undefined")
        rest = line[len(unknown) :]
    else:
        return sc
    at = rest.find("key ")
    if at < 0:
        sc.result = "B"
        return sc
    sc.fingerprint = sc.key = rest[at + 4 :]
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

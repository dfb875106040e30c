"""Upstream and push destinations of branches, from ``branch.*`` and ``remote.*`` config.

Git's ``branch_get_upstream`` and ``branch_get_push``: the upstream of
``refs/heads/<b>`` is ``branch.<b>.merge`` mapped through the fetch refspecs of
``branch.<b>.remote`` (itself when the remote is ``.``); the push destination
follows ``branch.<b>.pushRemote``/``remote.pushDefault``, the remote's push
refspecs and ``push.default``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _map_refspec(spec: str, name: str) -> str | None:
    """``name`` through one ``src:dst`` refspec, or None when it does not match."""
    spec = spec.lstrip("+")
    if spec.startswith("^"):
        return None
    src, sep, dst = spec.partition(":")
    if not sep:
        dst = src
    if "*" in src:
        head, _, tail = src.partition("*")
        if len(name) >= len(head) + len(tail) and name.startswith(head) and name.endswith(tail):
            middle = name[len(head) : len(name) - len(tail)]
            return dst.replace("*", middle, 1) if dst else None
        return None
    return (dst or None) if name == src else None


def apply_refspecs(specs: list[str], name: str) -> str | None:
    """The destination of ``name`` under the first refspec that maps it (Git's order)."""
    for spec in specs:
        if spec.startswith("^") and _map_refspec(spec[1:] + ":x", name):
            return None
    for spec in specs:
        got = _map_refspec(spec, name)
        if got is not None:
            return got
    return None


class Tracking:
    """Answers upstream/push questions for branches from one repository's config."""

    def __init__(self, config: Any) -> None:
        self.config = config

    def _get(self, key: str) -> str | None:
        value: str | None = self.config.get(key)
        return value

    def remote_for_branch(self, branch: str) -> tuple[str, bool]:
        """``(remote name, explicit)``: ``branch.<b>.remote``, else ``origin``."""
        remote = self._get(f"branch.{branch}.remote")
        return (remote, True) if remote else ("origin", False)

    def pushremote_for_branch(self, branch: str) -> tuple[str, bool]:
        """``branch.<b>.pushRemote``, ``remote.pushDefault``, else the fetch remote."""
        for key in (f"branch.{branch}.pushremote", "remote.pushdefault"):
            value = self._get(key)
            if value:
                return value, True
        return self.remote_for_branch(branch)

    def upstream(self, branch: str) -> str | None:
        """The remote-tracking ref that ``refs/heads/<branch>`` merges, or None."""
        merge = self._get(f"branch.{branch}.merge")
        remote = self._get(f"branch.{branch}.remote")
        if not merge or not remote:
            return None
        if remote == ".":
            return merge
        return apply_refspecs(self.config.get_all(f"remote.{remote}.fetch"), merge)

    def _tracking_for_push_dest(self, remote: str, dst: str) -> str | None:
        return apply_refspecs(self.config.get_all(f"remote.{remote}.fetch"), dst)

    def push(self, branch: str) -> str | None:
        """The remote-tracking ref of where ``git push`` would push the branch, or None."""
        remote, _explicit = self.pushremote_for_branch(branch)
        refname = f"refs/heads/{branch}"
        push_specs = self.config.get_all(f"remote.{remote}.push")
        if push_specs:
            dst = apply_refspecs(push_specs, refname)
            return self._tracking_for_push_dest(remote, dst) if dst else None
        if self.config.get_bool(f"remote.{remote}.mirror", False):
            return self._tracking_for_push_dest(remote, refname)
        mode = (self._get("push.default") or "simple").lower()
        if mode == "nothing":
            return None
        if mode in ("matching", "current"):
            return self._tracking_for_push_dest(remote, refname)
        up = self.upstream(branch)
        if mode == "upstream":
            return up
        if up is None:
            return None
        cur = self._tracking_for_push_dest(remote, refname)
        return cur if cur == up else None

    def remote_ref(self, branch: str, push: bool) -> str | None:
        """``%(upstream:remoteref)``/``%(push:remoteref)``: the ref name on the remote."""
        if not push:
            return (
                self._get(f"branch.{branch}.merge")
                if self._get(f"branch.{branch}.remote")
                else None
            )
        remote, _ = self.pushremote_for_branch(branch)
        specs = self.config.get_all(f"remote.{remote}.push")
        return apply_refspecs(specs, f"refs/heads/{branch}") if specs else None

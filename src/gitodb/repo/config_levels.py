"""The configuration Git reads, level by level, into one ``Config``.

In Git's order, later values winning:

1. system: ``GIT_CONFIG_SYSTEM``, else ``<prefix>/etc/gitconfig`` (``/etc/gitconfig``
   for a Git installed in ``/usr``); none at all with ``GIT_CONFIG_NOSYSTEM``;
2. global: ``GIT_CONFIG_GLOBAL``, else ``$XDG_CONFIG_HOME/git/config`` (or
   ``~/.config/git/config``) and then ``~/.gitconfig``;
3. local: the repository's ``config``;
4. worktree: ``config.worktree`` of this worktree, with ``extensions.worktreeConfig``;
5. command line: ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``,
   then ``GIT_CONFIG_PARAMETERS`` (what ``git -c`` hands its children), then ``-c``.

Includes are followed at every level (``gitodb.repo.config_include``).  The prefix
is that of the ``git`` on ``PATH``, which is the Git whose system file this is.
"""

from __future__ import annotations

import os

from gitodb.errors import ConfigError
from gitodb.lazyre import lazy
from gitodb.repo.config import Config
from gitodb.repo.config_include import Includes, NeedRemoteUrls, git_prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gitodb.repo.config import Entry

#: strtol's syntax, as Git reads GIT_CONFIG_COUNT (nothing may follow the number)
_COUNT = lazy(r"[ \t\n\v\f\r]*([-+]?[0-9]+)")


def env_bool(name: str, default: bool = False) -> bool:
    """Git's ``git_env_bool``: a boolean environment variable, fatal if it is not one."""
    from gitodb.repo.config import parse_bool

    value = os.environ.get(name)
    if value is None:
        return default
    b = parse_bool(value) if value else False
    if b is None:
        raise ConfigError(f"bad boolean environment value '{value}' for '{name}'")
    return b


def system_config_path() -> str | None:
    """The system config file Git reads, or None (``GIT_CONFIG_NOSYSTEM``)."""
    if env_bool("GIT_CONFIG_NOSYSTEM"):
        return None
    given = os.environ.get("GIT_CONFIG_SYSTEM")
    if given is not None:
        return given
    prefix = git_prefix()
    if prefix is None or prefix == "/usr":
        return "/etc/gitconfig"  # Git's build puts sysconfdir there for prefix /usr
    return os.path.join(prefix, "etc", "gitconfig")


def global_config_paths() -> list[str]:
    """The global files Git reads, in order (``GIT_CONFIG_GLOBAL`` alone if set)."""
    given = os.environ.get("GIT_CONFIG_GLOBAL")
    if given is not None:
        return [given]
    home = os.environ.get("HOME")
    xdg = os.environ.get("XDG_CONFIG_HOME")
    paths = []
    if xdg:
        paths.append(os.path.join(xdg, "git", "config"))
    elif home is not None:
        paths.append(f"{home}/.config/git/config")
    if home is not None:
        paths.append(f"{home}/.gitconfig")
    return paths


def environment_settings() -> list[tuple[str, str | None]]:
    """``GIT_CONFIG_COUNT`` pairs then ``GIT_CONFIG_PARAMETERS``, errors in Git's words."""
    settings: list[tuple[str, str | None]] = []
    count_text = os.environ.get("GIT_CONFIG_COUNT")
    if count_text:
        m = _COUNT.fullmatch(count_text)
        if m is None:
            raise _command_line("bogus count in GIT_CONFIG_COUNT")
        count = int(m.group(1))
        if count < 0 or count > (1 << 31):
            raise _command_line("too many entries in GIT_CONFIG_COUNT")
        for i in range(count):
            key = os.environ.get(f"GIT_CONFIG_KEY_{i}")
            if key is None:
                raise _command_line(f"missing config key GIT_CONFIG_KEY_{i}")
            value = os.environ.get(f"GIT_CONFIG_VALUE_{i}")
            if value is None:
                raise _command_line(f"missing config value GIT_CONFIG_VALUE_{i}")
            settings.append((key, value))
    params = os.environ.get("GIT_CONFIG_PARAMETERS")
    if params:
        settings += parse_config_parameters(params)
    return settings


def _command_line(detail: str) -> ConfigError:
    return ConfigError("unable to parse command-line config", details=[detail])


def _sq_dequote(text: str, i: int) -> tuple[str, int] | None:
    """One shell single-quoted word at ``text[i]``: (word, index after it), None if bad."""
    if i >= len(text) or text[i] != "'":
        return None
    out = []
    i += 1
    while True:
        j = text.find("'", i)
        if j < 0:
            return None
        out.append(text[i:j])
        i = j + 1
        # '\'' and '\!' are a quote and a bang inside the word
        if (
            text[i : i + 1] == "\\"
            and text[i + 1 : i + 2] in ("'", "!")
            and text[i + 2 : i + 3] == "'"
        ):
            out.append(text[i + 1])
            i += 3
            continue
        return "".join(out), i


def parse_config_parameters(text: str) -> list[tuple[str, str | None]]:
    """``GIT_CONFIG_PARAMETERS``: ``'key=value'`` (old) or ``'key'='value'`` words."""
    bogus = "bogus format in GIT_CONFIG_PARAMETERS"
    settings: list[tuple[str, str | None]] = []
    i = 0
    while i < len(text):
        word = _sq_dequote(text, i)
        if word is None:
            raise _command_line(bogus)
        key, i = word
        if i >= len(text) or text[i].isspace():
            k, eq, v = key.partition("=")  # old style: one word
            settings.append((k, v if eq else None))
        elif text[i] == "=":
            i += 1
            if i < len(text) and text[i] == "'":
                value = _sq_dequote(text, i)
                if value is None or (value[1] < len(text) and not text[value[1]].isspace()):
                    raise _command_line(bogus)
                settings.append((key, value[0]))
                i = value[1]
            elif i >= len(text) or text[i].isspace():
                settings.append((key, None))
            else:
                raise _command_line(bogus)
        else:
            raise _command_line(bogus)
        while i < len(text) and text[i].isspace():
            i += 1
    return settings


def command_line_settings(overrides: list[str]) -> list[tuple[str, str | None]]:
    """Every command-line setting in Git's order: environment first, then ``-c``."""
    settings = environment_settings()
    for pair in overrides:
        key, eq, value = pair.partition("=")
        settings.append((key, value if eq else None))
    return settings


def load_config(
    *,
    git_dir: str | None = None,
    local: tuple[str, str] | None = None,
    worktree: tuple[str, str] | None = None,
    overrides: list[str] | None = None,
    head_branch: Callable[[], str | None] | None = None,
    local_entries: list[Entry] | None = None,
) -> Config:
    """Read every level as Git does; ``local``/``worktree`` are ``(path, name in messages)``.

    ``git_dir`` decides ``includeIf.gitdir:``, ``head_branch`` ``includeIf.onbranch:``.
    ``local_entries``: the local file as ``parse_file`` already read it (the
    repository's format comes from it first), so that it is not read again.
    """
    settings = command_line_settings(list(overrides or []))
    levels = _Levels(local, local_entries, worktree, settings)
    remote_urls: list[str] | None = None
    try:
        return _read_all(git_dir, levels, head_branch, remote_urls)
    except NeedRemoteUrls:
        pass
    # A hasconfig:remote.*.url: condition: learn every remote URL first, then read.
    remote_urls = []
    scan = Includes(git_dir, head_branch, remote_urls, scanning=True)
    _read_levels(Config(), scan, levels)
    return _read_all(git_dir, levels, head_branch, remote_urls)


class _Levels:
    """What ``load_config`` reads after the system and global files."""

    __slots__ = ("local", "local_entries", "worktree", "settings")

    def __init__(
        self,
        local: tuple[str, str] | None,
        local_entries: list[Entry] | None,
        worktree: tuple[str, str] | None,
        settings: list[tuple[str, str | None]],
    ) -> None:
        self.local = local
        self.local_entries = local_entries
        self.worktree = worktree
        self.settings = settings


def _read_all(
    git_dir: str | None,
    levels: _Levels,
    head_branch: Callable[[], str | None] | None,
    remote_urls: list[str] | None,
) -> Config:
    config = Config()
    includes = Includes(git_dir, head_branch, remote_urls)
    _read_levels(config, includes, levels)
    return config


def _read_levels(config: Config, includes: Includes, levels: _Levels) -> None:
    system = system_config_path()
    if system:
        config.read_file(system, includes=includes)
    for path in global_config_paths():
        if path:
            config.read_file(path, includes=includes)
    local = levels.local
    if local is not None:
        if levels.local_entries is not None:
            config.add_entries(levels.local_entries, local[0], local[1], includes=includes)
        else:
            config.read_file(local[0], local[1], includes=includes)
    if levels.worktree is not None:
        config.read_file(levels.worktree[0], levels.worktree[1], includes=includes)
    config.apply_settings(levels.settings, includes=includes)

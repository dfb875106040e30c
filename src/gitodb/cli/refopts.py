"""Option parsing with Git's parse-options rules, for the ref commands.

A spec maps each long option to ``(kind, negatable)``; kind is ``no`` (a flag),
``yes`` (takes a value: ``--opt=v`` or ``--opt v``), ``optional`` (only
``--opt=v``) or ``lastarg`` (the next argument is its value unless the option
comes last).  Unique prefixes of long options are accepted, ``--no-<opt>`` negates,
``--`` ends the options, ``-h`` asks for the usage (``Usage(None)``).
"""

from __future__ import annotations

Spec = dict[str, tuple[str, bool]]


class Usage(Exception):
    """Print the usage (``message`` None: ``-h``, to stdout) and exit 129."""

    def __init__(self, message: str | None) -> None:
        super().__init__(message)
        self.message = message


def _find_long(name: str, spec: Spec) -> tuple[str, bool]:
    """The long option ``name`` abbreviates, and whether it was given as ``--no-``."""
    if name in spec:
        return name, False
    if name.startswith("no-") and name[3:] in spec and spec[name[3:]][1]:
        return name[3:], True
    hits = [k for k in spec if k.startswith(name)]
    if len(hits) == 1:
        return hits[0], False
    if name.startswith("no-"):
        negs = [k for k in spec if k.startswith(name[3:]) and spec[k][1]]
        if len(negs) == 1:
            return negs[0], True
    if len(hits) > 1:
        raise Usage(f"ambiguous option: {name} (could be --{hits[0]} or --{hits[1]})")
    raise Usage(f"unknown option `{name}'")


def parse_options(
    argv: list[str], spec: Spec, short: dict[str, str]
) -> tuple[list[tuple[str, str | None, bool]], list[str]]:
    """``([(option, value, negated)], arguments)`` from ``argv``; errors raise ``Usage``."""
    opts: list[tuple[str, str | None, bool]] = []
    args: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            args += argv[i:]
            break
        if a in ("-h", "--help-all", "--help"):
            raise Usage(None)
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            opt, neg = _find_long(name, spec)
            kind = spec[opt][0]
            if neg:
                if eq:
                    raise Usage(f"option `no-{opt}' takes no value")
                opts.append((opt, None, True))
            elif kind == "no":
                if eq:
                    raise Usage(f"option `{opt}' takes no value")
                opts.append((opt, None, False))
            elif kind == "yes":
                if not eq:
                    if i >= len(argv):
                        raise Usage(f"option `{opt}' requires a value")
                    value = argv[i]
                    i += 1
                opts.append((opt, value, False))
            elif kind == "optional":
                opts.append((opt, value if eq else None, False))
            else:
                if not eq and i < len(argv):
                    value = argv[i]
                    i += 1
                    eq = "="
                opts.append((opt, value if eq else None, False))
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                ch = a[j]
                j += 1
                if ch == "h":
                    raise Usage(None)
                if ch not in short:
                    raise Usage(f"unknown switch `{ch}'")
                opt = short[ch]
                kind = spec[opt][0]
                if kind == "optional":
                    rest = a[j:]
                    opts.append((opt, rest or None, False))
                    break
                if kind == "yes":
                    rest = a[j:]
                    if not rest:
                        if i >= len(argv):
                            raise Usage(f"switch `{ch}' requires a value")
                        rest = argv[i]
                        i += 1
                    opts.append((opt, rest, False))
                    break
                opts.append((opt, None, False))
        else:
            args.append(a)
    return opts, args

"""Build hooks that pyproject.toml cannot express: the pure-Python wheel fallback,
and the Windows console script.

The C extension (``gitodb._native``, the native core) is optional in
pyproject.toml: without a working compiler it is skipped and gitodb runs on its
pure-Python reference code.  A wheel built that way holds no binary, so it is tagged
``py3-none-any`` (installable everywhere) instead of for this interpreter and
platform.  ``GITODB_PURE_PYTHON=1`` skips the extensions on purpose (to build the
fallback wheel on a machine that has a compiler); ``GITODB_REQUIRE_NATIVE=1`` (set by
the cibuildwheel configuration) makes a failed compile an error instead, so that no
binary wheel ships without the native core.
"""

from __future__ import annotations

import os
import tempfile

from setuptools import setup
from setuptools.command.build_ext import build_ext

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1 (the wheel package had it)
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]


def _flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


class OptionalBuildExt(build_ext):
    """Build each extension if the compiler can; remember which ones were built."""

    def run(self) -> None:
        self.built: list[str] = []
        if _flag("GITODB_PURE_PYTHON"):
            self.extensions = []
            return
        super().run()
        missing = [e.name for e in self.extensions if e.name not in self.built]
        if missing and _flag("GITODB_REQUIRE_NATIVE"):
            raise SystemExit(
                f"error: GITODB_REQUIRE_NATIVE is set and {', '.join(missing)} "
                "did not build (see the compiler output above)"
            )

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        if ext.name == "gitodb._native" and self._have_zlib():
            # heads.c reads delta heads, and walk.c inflates when zlib is the chosen backend,
            # with zlib's published API when it is there.
            ext.define_macros.append(("GITODB_HAVE_ZLIB", "1"))
            ext.libraries.append("z")
        super().build_extension(ext)  # an optional extension's failure is filtered out
        if os.path.exists(self.get_ext_fullpath(ext.name)):
            self.built.append(ext.name)

    def _have_zlib(self) -> bool:
        """True if zlib's header and library link here (``GITODB_NO_ZLIB=1``: don't)."""
        if _flag("GITODB_NO_ZLIB"):
            return False
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write(
                    "#include <zlib.h>\n"
                    "int main(void) { z_stream s = {0}; return inflateInit(&s) != Z_OK; }\n"
                )
            try:
                objs = self.compiler.compile([src], output_dir=tmp)
                self.compiler.link_executable(objs, "probe", output_dir=tmp, libraries=["z"])
            except Exception:  # no header or no library: heads are read from Python
                return False
        return True


class FallbackBdistWheel(bdist_wheel):
    """A wheel without any built extension is a pure one: ``py3-none-any``."""

    def run(self) -> None:
        self.run_command("build_ext")
        cmd = self.get_finalized_command("build_ext")
        if not getattr(cmd, "built", None):
            self.root_is_pure = True
            # Nothing was compiled: install into purelib like any pure distribution.
            self.distribution.ext_modules = []
        super().run()

    def get_tag(self) -> tuple[str, str, str]:
        if self.root_is_pure:
            return "py3", "none", "any"
        return super().get_tag()


# Windows runs commands through pip's .exe launcher, which only a console script
# gets; elsewhere the plain scripts/gitodb (pyproject.toml's script-files) is the
# command, without the launcher's start-up cost.
_CONSOLE = {"console_scripts": ["gitodb = gitodb.cli.main:main"]} if os.name == "nt" else {}

setup(
    cmdclass={"build_ext": OptionalBuildExt, "bdist_wheel": FallbackBdistWheel},
    entry_points=_CONSOLE,
)

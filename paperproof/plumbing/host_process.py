"""The processes the builder starts on the host (uv, Pagefind, the deleter): out of every checkout, blind to the builder.

A tool reads the configuration of the folder it starts in: uv takes `uv.toml`, `pyproject.toml`'s
`[tool.uv]`, `.python-version` and `.venv/bin/python` from its working directory and its parents, and
runs that interpreter; Pagefind takes `pagefind.yml`; `python -c` puts the folder first on `sys.path`.
`paperproof verify .` starts in the checkout it verifies, so every process the builder starts goes
through `run` or `start` here:

- its working directory is a fresh, empty scratch folder under the system's temporary folder (`scratch`);
- its environment is an allow-list (locale, certificates, proxies, the operator's own `UV_*` settings),
  with `HOME` and `XDG_CONFIG_HOME` at that scratch folder, so no user configuration or credentials file
  is read, and relative `PATH` entries dropped;
- before it executes, a small launcher drops every capability (bounding, inheritable, ambient, and so
  permitted and effective) and sets `no_new_privs`, so that even as root it cannot read another
  process's memory or environment: the builder itself is made non-dumpable (`shield`), which closes
  `/proc/<builder>/environ` and `/mem` to every process of its uid that lacks `CAP_SYS_PTRACE`.
  A launcher that cannot drop `CAP_SYS_PTRACE` as root refuses to start the tool.

Callers still pass explicit interpreters and turn configuration discovery off (`uv --no-config`): the
working directory is one guard, not the only one.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from paperproof.plumbing import interrupts

KEEP = frozenset({
    "PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
})
# The operator's settings of uv (offline, find-links, index, cache): theirs, not a repository's. These would let
# the environment choose uv's configuration or interpreter, which only the caller's arguments do.
KEEP_PREFIXES = ("UV_",)
NOT_KEPT = frozenset({"UV_CONFIG_FILE", "UV_PYTHON", "UV_PROJECT", "UV_WORKING_DIRECTORY", "UV_PROJECT_ENVIRONMENT",
                      "UV_SYSTEM_PYTHON", "UV_BREAK_SYSTEM_PACKAGES", "UV_PYTHON_INSTALL_DIR"})

PR_SET_DUMPABLE = 4
CAP_SYS_PTRACE = 19

# Run as `python -I -S -c LAUNCHER tool args...`: the standard library only, no site, no working folder on the path.
LAUNCHER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for cap in range(64):
    libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP: EINVAL past the last capability, EPERM when not allowed
libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)())
libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
fields = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
bounding, effective = int(fields["CapBnd"], 16), int(fields["CapEff"], 16)
if effective or (os.getuid() == 0 and bounding & (1 << 19)):
    sys.stderr.write("paperproof: cannot drop this process's capabilities (CapBnd %x, CapEff %x); "
                     "the tool was not started\n" % (bounding, effective))
    os._exit(126)
os.execv(sys.argv[1], sys.argv[1:])
"""


def shield() -> None:
    """Make this process non-dumpable: its `/proc` files (environ, mem, maps) belong to root and are closed to
    every process without `CAP_SYS_PTRACE`, which nothing `run` or `start` begins holds. Once, at the start of
    a command, before anything is started."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def environment(extra: Mapping[str, str] | None = None, home: Path | None = None) -> dict[str, str]:
    """The environment a host tool gets: the allow-list, `HOME` at `home` (a scratch folder), `extra` on top."""
    env = {k: v for k, v in os.environ.items()
           if (k in KEEP or k.startswith(KEEP_PREFIXES)) and k not in NOT_KEPT}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p))
    if home is not None:
        env["HOME"] = env["XDG_CONFIG_HOME"] = str(home)
    if "UV_CACHE_DIR" not in env:  # uv's own cache stays where it was, though HOME moved: wheels are fetched once
        env["UV_CACHE_DIR"] = str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uv")
    env.update(extra or {})
    return env


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh, empty folder under the system's temporary folder, removed after."""
    folder = Path(tempfile.mkdtemp(prefix="paperproof-host-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _launch(argv: Sequence[str]) -> list[str]:
    tool = str(argv[0])
    if not os.path.isabs(tool):
        raise ValueError(f"a host tool is started by its absolute path, not {tool!r}")
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, tool, *map(str, argv[1:])]


def _not_stopping() -> None:
    """Once Ctrl-C or SIGTERM ended the command's processes (`interrupts`), a thread still at work starts no
    tool: it would outlive the command, or keep it from ending."""
    if interrupts.stopping.is_set():
        raise KeyboardInterrupt("the command was interrupted: no tool is started")


def run(argv: Sequence[str], folder: Path, *, timeout: float, extra: Mapping[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """Run a host tool to its end in `folder` (from `scratch`), its output captured as text."""
    _not_stopping()
    return subprocess.run(_launch(argv), cwd=folder, env=environment(extra, folder), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def start(argv: Sequence[str], folder: Path, *, extra: Mapping[str, str] | None = None,
          **popen: object) -> subprocess.Popen[bytes]:
    """Start a host tool that outlives this call, in `folder`: an empty folder that lives as long as the tool
    reads files relative to it (it may be removed once the tool has started, and then it reads none). One in a
    session of its own (`start_new_session`, the deleter of a replaced tree) is meant to outlive the command,
    and is started even while an interrupted command unwinds."""
    if not popen.get("start_new_session"):
        _not_stopping()
    return subprocess.Popen(_launch(argv), cwd=folder, env=environment(extra, folder), **popen)  # type: ignore[call-overload]

"""The secrets of the builder's host files, for the last check before anything is published or printed.

A repository cannot read the host from the sandbox, but the builder reads a checkout outside it: a
requirements file that is a link to `~/.netrc` once put its contents into a page's notes. So besides the
environment (`leaks`), the check looks for what the well-known credential files the builder can read
hold: private keys under `~/.ssh` (the base64 body lines of each PEM block), the password of each
`.netrc` machine and `.git-credentials` URL, the values of secret-looking keys (`password`, `token`,
`aws_secret_access_key`, `auth`, `client-key-data`...) in `.pypirc`, `.aws/credentials`, the Docker and
GitHub CLI configurations, the kube config and the like, the whole of a token file (`~/.vault-token`, the
Hugging Face token), and the password hashes of `/etc/shadow` and the host's SSH keys where readable.

Only values are taken, never key names, host names or user names: a page may well say `github.com`.
What is read is bounded: a file's real path must stay inside the home folder (or be the system file
itself), it must be a regular file (never a FIFO, which would block, or a device) of at most
`FILE_BYTES`, and at most `MAX_VALUES` values are kept. A file that cannot be read is skipped.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import pwd
import re
import stat
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Literal

FILE_BYTES = 1 << 20
MAX_SSH_FILES = 64  # entries of ~/.ssh looked at
MAX_VALUES = 10_000
MIN_LENGTH = 8

# What a file holds, besides the passwords of URLs (`https://user:secret@host`) and private-key PEM blocks:
# "config" (values of secret-looking keys: INI, YAML, TOML, JSON, .npmrc), "netrc" (the word after `password`
# or `account`), "records" (colon-separated: a shadow hash, else a .pgpass line's last field), "token" (each
# line is a secret), "key" (nothing else).
Kind = Literal["config", "netrc", "records", "token", "key"]
HOME_FILES: dict[str, Kind] = {
    ".netrc": "netrc", "_netrc": "netrc", ".pgpass": "records",
    **dict.fromkeys((".git-credentials", ".config/git/credentials", ".pypirc", ".aws/credentials",
                     ".aws/config", ".docker/config.json", ".config/gh/hosts.yml", ".config/hub", ".kube/config",
                     ".npmrc", ".yarnrc.yml", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
                     ".my.cnf", ".s3cfg", ".boto", ".config/rclone/rclone.conf", ".kaggle/kaggle.json",
                     ".terraform.d/credentials.tfrc.json", ".config/gcloud/application_default_credentials.json",
                     ".azure/accessTokens.json"), "config"),
    **dict.fromkeys((".vault-token", ".huggingface/token", ".cache/huggingface/token", ".config/huggingface/token"),
                    "token"),
}
SYSTEM_FILES = ("/etc/shadow", "/etc/gshadow")
SYSTEM_KEYS = "/etc/ssh"  # ssh_host_*_key

_SECRET_KEY = re.compile(r"pass|secret|token|auth|key|credential|private|session|cookie|api", re.IGNORECASE)
_NOT_SECRET_KEY = re.compile(r"cert|(file|path|dir|command|cmd|helper|type|url|host|user(name)?|login|email|region|"
                             r"expir\w*)$", re.IGNORECASE)
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----(.*?)-----END \1-----", re.DOTALL)
# Applied to a stripped line: the value runs to its end, so no trailing `\s*` is tried against each of its lengths.
_ASSIGNMENT = re.compile(r"""(?:-\s+)?["']?([A-Za-z0-9_.:/@-]+?)["']?\s*(?:=|:(?=\s|$))\s*(.*)""")
_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:([^\s/@]+)@")
_NETRC_WORDS = ("password", "passwd", "account")
_BOILERPLATE = {"true", "false", "null", "none", "yes", "no", "required", "optional"}


def values_of(text: str, kind: Kind = "config") -> list[str]:
    """The secret-looking values `text` holds (the contents of one credential file of `kind`), in order, once
    each."""
    found = [line for line in _pem_lines(text) if len(line) >= MIN_LENGTH]
    if kind == "token":
        found.extend(line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_LENGTH)
    elif kind != "key":
        named: Iterable[str] = {"netrc": _netrc_values, "records": _record_values}.get(kind, _config_values)(text)
        found.extend(v for v in (*named, *_USERINFO.findall(text)) if _worth_looking_for(v))
    return list(dict.fromkeys(found))


def _config_values(text: str) -> Iterator[str]:
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    yield from _json_values(document) if isinstance(document, (dict, list)) else _line_values(text)


def _netrc_values(text: str) -> Iterator[str]:
    """`machine h login u password p`, on one line or several."""
    words = text.split()
    for index, word in enumerate(words[:-1]):
        if word in _NETRC_WORDS:
            yield words[index + 1]


def _record_values(text: str) -> Iterator[str]:
    """Colon-separated records: `/etc/shadow`'s second field when it is a hash (`$id$...`, locked or not), else
    the last field (`.pgpass`: host:port:database:user:password)."""
    for line in text.splitlines():
        fields = line.strip().split(":")
        if len(fields) >= 5 and not line.lstrip().startswith("#"):
            hashed = fields[1].lstrip("!")
            yield hashed if hashed.startswith("$") else fields[-1]


def _pem_lines(text: str) -> Iterator[str]:
    """The body lines of each private-key PEM block (also where a JSON string holds it with `\\n`s)."""
    for _, body in _PEM.findall(text.replace("\\n", "\n")):
        for line in body.splitlines():
            line = line.strip()
            if line and ":" not in line:  # `Proc-Type: 4,ENCRYPTED`, `DEK-Info: ...` are headers
                yield line


def _json_values(document: object) -> Iterator[str]:
    stack: list[tuple[str, object]] = [("", document)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((str(k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((key, v) for v in reversed(value))
        elif isinstance(value, str) and _secret_key(key):
            yield from _value_and_decoded(value)


def _line_values(text: str) -> Iterator[str]:
    """`key = value`, `key: value` (INI, YAML, TOML, .npmrc), a JSON object as the value (rclone's `token`)."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";", "[")):
            continue
        assignment = _ASSIGNMENT.match(stripped)
        if assignment and _secret_key(assignment.group(1)):
            value = assignment.group(2).strip().strip("\"'")
            if value.startswith("{"):
                try:
                    yield from _json_values({assignment.group(1): json.loads(value)})
                    continue
                except ValueError:
                    pass
            yield from _value_and_decoded(value)


def _secret_key(key: str) -> bool:
    name = key.rsplit("/", 1)[-1].rsplit(":", 1)[-1]  # `//registry.npmjs.org/:_authToken`
    return bool(_SECRET_KEY.search(name)) and not _NOT_SECRET_KEY.search(name)


def _value_and_decoded(value: str) -> Iterator[str]:
    """The value, and the key lines of a PEM it is the base64 of (a kube config's `client-key-data`)."""
    yield value
    if len(value) >= 64 and re.fullmatch(r"[A-Za-z0-9+/=\s]+", value):
        try:
            decoded = base64.b64decode(value, validate=False).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError):
            return
        yield from (line for line in _pem_lines(decoded) if len(line) >= MIN_LENGTH)


def _worth_looking_for(value: str) -> bool:
    return (len(value) >= MIN_LENGTH and value.lower() not in _BOILERPLATE and not value.startswith(("/", "~", "${", "$("))
            and not (value.startswith("<") and value.endswith(">")))


def read_capped(path: str, inside: str | None) -> bytes | None:
    """The bytes of `path` when its real path is inside `inside` (or is `path` itself, for a system file),
    it is a regular file and at most `FILE_BYTES`; None otherwise. Never blocks on a FIFO."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return None
    if inside is None:
        if real != path:
            return None
    elif not real.startswith(inside.rstrip("/") + "/"):
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > FILE_BYTES:
            return None
        data = os.read(fd, FILE_BYTES + 1)
        return None if len(data) > FILE_BYTES else data
    except OSError:
        return None
    finally:
        os.close(fd)


def homes() -> list[str]:
    """The builder's home folders: `$HOME`, and its user's home in the password database when that differs."""
    found = []
    if os.environ.get("HOME"):
        found.append(os.environ["HOME"])
    try:
        found.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    return list(dict.fromkeys(os.path.realpath(h) for h in found if h and os.path.isabs(h)))


def credential_files(home_folders: Iterable[str]) -> Iterator[tuple[str, str | None, Kind]]:
    """(path, the folder its real path must stay in or None for a system file, what it holds) of every file
    looked at."""
    for home in home_folders:
        for rel, kind in HOME_FILES.items():
            yield os.path.join(home, rel), home, kind
        ssh = os.path.join(home, ".ssh")
        try:
            with os.scandir(ssh) as entries:
                names = sorted(e.name for e in entries)[:MAX_SSH_FILES]
        except OSError:
            names = []
        for name in names:
            if not name.endswith(".pub") and name not in ("known_hosts", "known_hosts.old", "config",
                                                          "authorized_keys", "environment"):
                yield os.path.join(ssh, name), home, "key"
    for path in SYSTEM_FILES:
        yield path, None, "records"
    try:
        with os.scandir(SYSTEM_KEYS) as entries:
            keys = sorted(e.name for e in entries if e.name.startswith("ssh_host_") and e.name.endswith("_key"))
    except OSError:
        keys = []
    for name in keys:
        yield os.path.join(SYSTEM_KEYS, name), None, "key"


def host_values(home_folders: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """(value, the file it is in) for every secret of the host's credential files this process can read."""
    return list(_host_values(tuple(homes()) if home_folders is None else home_folders))


@lru_cache(maxsize=4)
def _host_values(home_folders: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for path, inside, kind in credential_files(home_folders):
        data = read_capped(path, inside)
        if data is None:
            continue
        for value in values_of(data.decode("utf-8", errors="replace"), kind):
            found.setdefault(value, path)
            if len(found) >= MAX_VALUES:
                return tuple(found.items())
    return tuple(found.items())


__all__ = ["host_values", "values_of"]

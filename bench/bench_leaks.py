"""What the last check before publishing costs (`build.leaks`): reading back every file a build wrote.

Writes a tree shaped like the site (files of about 5 KB, 100 to a folder) with the build's own
`write_file`, then scans it, side by side in one run: for the secrets of an environment of four
secret-looking variables the way the check did before it read host files (each form looked for in turn
with `in`), then with the one-read scan (`leaks._Scan`) for the same secrets, and both ways for those plus the
secrets of a typical developer's home folder (an RSA-4096 and an Ed25519 private key, `.netrc`,
`.git-credentials`, `.pypirc`, AWS, Docker, GitHub CLI and kube credentials: 64 values); and each scan alone,
on the same pages in memory (the tree check is mostly reading files):

    .venv/bin/python bench/bench_leaks.py [--files 50000] [--dir /dev/shm/x]
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paperproof.build import host_secrets  # noqa: E402
from paperproof.build.leaks import Secrets  # noqa: E402
from paperproof.plumbing.files import write_file  # noqa: E402

ENVIRON = {"GITHUB_TOKEN": "ghp_" + "a1" * 18, "HF_TOKEN": "hf_" + "b2" * 15,
           "AWS_SECRET_ACCESS_KEY": "c3" * 20, "DB_PASSWORD": "d4" * 8}


def _home(folder: Path, rng: random.Random) -> None:
    """A home folder with the credential files a developer's machine holds (random values, real shapes)."""
    def b64(n: int) -> str:
        return base64.b64encode(rng.randbytes(n)).decode()

    def pem(kind: str, size: int) -> str:
        body = b64(size)
        return (f"-----BEGIN {kind}-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
                + f"\n-----END {kind}-----\n")

    files = {
        ".ssh/id_rsa": pem("RSA PRIVATE KEY", 2350), ".ssh/id_ed25519": pem("OPENSSH PRIVATE KEY", 300),
        ".ssh/id_rsa.pub": "ssh-rsa " + b64(400) + " me@host\n",
        ".netrc": f"machine api.example.org login me password {b64(24)}\n",
        ".git-credentials": f"https://me:ghp_{b64(27)}@github.com\n",
        ".pypirc": f"[pypi]\nusername = __token__\npassword = pypi-{b64(60)}\n",
        ".aws/credentials": f"[default]\naws_access_key_id = AKIA{b64(12)}\naws_secret_access_key = {b64(30)}\n",
        ".docker/config.json": json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": b64(24)}}}),
        ".config/gh/hosts.yml": f"github.com:\n    user: me\n    oauth_token: gho_{b64(27)}\n",
        ".kube/config": f"users:\n- name: me\n  user:\n    token: {b64(40)}\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


class _Before(Secrets):
    """The check as it was: each form of each secret looked for in turn with `in` (with `host`: as it would be
    had the host's secrets been added that way)."""

    def __init__(self, environ: dict[str, str], host: list[tuple[str, str]] | None = None) -> None:
        super().__init__({})
        self.forms = [(form.encode(), name) for name, value in [*sorted(environ.items()), *(host or [])]
                      for form in sorted({value, html.escape(value), json.dumps(value)[1:-1]})]

    def find(self, data: bytes) -> str | None:
        for form, name in self.forms:
            if form in data:
                return name
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-leaks-"))
    rng = random.Random(0)
    words = [("".join(rng.choice("abcdefghij<>/= ") for _ in range(8))) for _ in range(512)]
    pages = [(" ".join(rng.choice(words) for _ in range(rng.randint(300, 900)))).encode() for _ in range(64)]
    try:
        started = time.perf_counter()
        for i in range(args.files):
            folder = work / f"d{i // 100:05d}"
            if i % 100 == 0:
                folder.mkdir()
            write_file(folder / f"f{i % 100}.html", pages[i % len(pages)])
        written = time.perf_counter() - started
        size = sum(len(pages[i % len(pages)]) for i in range(args.files))
        home = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-leaks-home-"))
        _home(home, rng)
        host = host_secrets.host_values((os.fspath(home),))
        shutil.rmtree(home)
        checks = {"before: environment": _Before(ENVIRON), "before's way: environment and home": _Before(ENVIRON, host),
                  "after: environment": Secrets(ENVIRON), "after: environment and home": Secrets(ENVIRON, host)}
        timings = {}
        for label, secrets in checks.items():
            started = time.perf_counter()
            read = secrets.check_tree(work)
            checked = time.perf_counter() - started
            started = time.perf_counter()
            for page in pages:  # the same pages in memory: the scan alone, without reading files
                secrets.find(page)
            timings[label] = (checked, len(secrets.forms), read, time.perf_counter() - started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    in_memory = sum(map(len, pages))
    print(f"files: {args.files:,}, {size / 1e6:.1f} MB; {len(host)} values taken from the home folder's files")
    print(f"write with write_file: {written:.2f} s ({args.files / written:,.0f} files/s)")
    for label, (scanned, forms, read, alone) in timings.items():
        print(f"{label:<35} {forms:>4} forms: {scanned:.2f} s ({read / scanned:,.0f} files/s, "
              f"{size / 1e6 / scanned:.0f} MB/s), check / write {scanned / written:.2f}, "
              f"at 2,226,005 files about {2_226_005 / (read / scanned):.0f} s; "
              f"the scan alone {in_memory / 1e6 / alone:,.0f} MB/s")


if __name__ == "__main__":
    main()

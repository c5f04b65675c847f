"""The images of a README that a repository's page shows: files of its own checkout, copied into the site.

A page loads nothing from a host we do not serve: an image from anywhere else is a badge that can claim a
verdict, or a pixel that tells its server who read the page. So a README's image is shown only when it is
a file inside the checkout, read through the checkout's guard (`catalogue.checkout.read_bytes`: no link
out, no FIFO, one name, `IMAGE_BYTES` at most), and only when its bytes are a PNG, JPEG, GIF or WebP
image, whatever its name says. SVG is refused: opened from our own host (its address is on the page),
an SVG is a document that runs its scripts there, and a sanitiser for SVG and its CSS is a large surface
to trust for a few diagrams; a refused or remote image is a plain link instead (`render.sanitise`).

The copy is named by the SHA-256 of its bytes under the repository's folder, so the same checkout gives
the same site. Which files a README may show is found in the build's process, from the README's text
(`candidates`), so that their hashes are in the repository's digest; the render process reads each image
the sanitised page keeps again, and copies it only when its hash is still the one the digest holds.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from paperproof.catalogue import checkout

IMAGE_BYTES = 2 << 20  # one image
README_IMAGE_BYTES = 8 << 20  # all the images of one README
MAX_IMAGES = 32
FOLDER = "readme/"  # under the repository's page: /repo/<slug>/readme/<sha256>.<type>

_CANDIDATE = re.compile(r"""[^\s"'<>()\[\]`]+\.(?:png|jpe?g|gif|webp)(?=[\s"'<>()\[\]`?#]|$)""", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class ReadmeImage(NamedTuple):
    """A file of the checkout (`path`, relative) that the README may show, and the name of its copy."""

    path: str
    name: str


def readme_path(src: str) -> str | None:
    """The checkout's file an image source names (`./img/a%20b.png?raw=1` -> `img/a b.png`), or None when it is
    a URL or leaves the checkout."""
    src = src.strip().split("#", 1)[0].split("?", 1)[0]
    if not src or _SCHEME.match(src) or src.startswith("//") or "\\" in src:
        return None
    path = posixpath.normpath(unquote(src).lstrip("/"))
    if path in (".", "..") or path.startswith("../") or "\x00" in path:
        return None
    return path


def image_type(data: bytes) -> str | None:
    """The file type of a raster image by its first bytes ("png", "jpg", "gif", "webp"), else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def candidates(readme: str) -> list[str]:
    """The checkout files the README's text could show as images, once each, in the order it names them."""
    found: dict[str, None] = {}
    for match in _CANDIDATE.finditer(readme):
        path = readme_path(match.group())
        if path is not None:
            found.setdefault(path)
    return list(found)


def copy_name(data: bytes) -> str | None:
    kind = image_type(data)
    return None if kind is None else f"{hashlib.sha256(data).hexdigest()}.{kind}"


def readme_images(root: Path, readme: str) -> tuple[ReadmeImage, ...]:
    """The images of the checkout at `root` that its README may show: at most `MAX_IMAGES`, `README_IMAGE_BYTES`
    in all, each read through the checkout's guard and a raster image by its bytes."""
    images: list[ReadmeImage] = []
    total = 0
    for path in candidates(readme):
        if len(images) >= MAX_IMAGES:
            break
        try:
            data = checkout.read_bytes(root, path, IMAGE_BYTES)
        except checkout.Refused:
            continue
        name = copy_name(data)
        if name is None or total + len(data) > README_IMAGE_BYTES:
            continue
        total += len(data)
        images.append(ReadmeImage(path, name))
    return tuple(images)


def read_image(root: Path, image: ReadmeImage) -> bytes | None:
    """The bytes of `image` when the checkout still holds them (its hash unchanged since `readme_images`)."""
    try:
        data = checkout.read_bytes(root, image.path, IMAGE_BYTES)
    except checkout.Refused:
        return None
    return data if copy_name(data) == image.name else None


__all__ = ["FOLDER", "ReadmeImage", "candidates", "read_image", "readme_images", "readme_path"]

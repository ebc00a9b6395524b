"""Which value of a pool's ``image`` column a grader's browser may show, checked before anything renders it.

A ``data:image/...;base64,...`` URI is shown: the picture travels inside the
page, nothing is fetched. An ``http(s)`` URL makes every grader's browser ask
that server for it when the item is shown, telling it who graded which item
and when; so it is shown only when an admin has turned external images on for
the project (``EXTERNAL_IMAGES_SETTING``), knowing what it reveals. Anything
else (a file path, ``https://`` with no host, a broken IPv6 address, another
scheme) is never handed to the image widget, which would raise, or look for
a file on the server, before the grade buttons render.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

EXTERNAL_IMAGES_SETTING = "external_images"
"""Project setting: True lets graders' browsers load http(s) image URLs (off by default)."""
MAX_URL_CHARS = 2048
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/=\s]+)", re.ASCII)
"""A base64 data URI of a raster image (SVG may name external resources, so it is not among them)."""


@dataclass(frozen=True)
class ShownImage:
    """``url`` to hand to the image widget, or None with ``note`` (plain text) saying why it is not shown."""

    url: str | None
    note: str = ""


def _valid_data_image(value: str) -> bool:
    match = DATA_IMAGE.fullmatch(value)
    if match is None:
        return False
    try:
        base64.b64decode("".join(match.group(2).split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _valid_web_url(value: str) -> bool:
    if len(value) > MAX_URL_CHARS or any(c.isspace() or not c.isprintable() for c in value):
        return False
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:  # e.g. 'http://[::1' (an unclosed IPv6 address)
        return False
    return parts.scheme in ("http", "https") and bool(host)


def shown_image(value: object, external_images: bool) -> ShownImage:
    """What to show for an item's ``image`` value; http(s) URLs only when the project allows ``external_images``."""
    text = "" if value is None else str(value).strip()
    if not text:
        return ShownImage(None)
    if text.lower().startswith("data:"):
        if _valid_data_image(text):
            return ShownImage(text)
        return ShownImage(None, "Image not shown: not a base64 PNG, JPEG, GIF or WebP data URI.")
    if text.lower().startswith(("http://", "https://")):
        if not _valid_web_url(text):
            return ShownImage(None, "Image not shown: the URL is malformed.")
        if not external_images:
            return ShownImage(
                None,
                "Image not shown: external images are off for this project (an admin can turn them on in the "
                "project's grading settings).",
            )
        return ShownImage(text)
    return ShownImage(None, "Image not shown: only data:image URIs and, when allowed, http(s) URLs are displayed.")

"""The committed screenshots: every one the README links is there, each is a page at
1,280 px or 390 px at most 2,000 px tall and small enough to commit, and the script's
recompression keeps every pixel. (`make screenshots` itself takes minutes: it is run by
hand when the pages change.)"""

from __future__ import annotations

import re
import struct
import sys
import zlib
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"

def _script():
    path = str(ROOT / "scripts" / "screenshots")  # no .py: it is a command
    loader = SourceFileLoader("screenshots", path)
    module = module_from_spec(spec_from_file_location("screenshots", path, loader=loader))
    sys.modules["screenshots"] = module  # its dataclasses look their module up there
    loader.exec_module(module)
    return module


screenshots = _script()


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, rest = [], data[8:]
    while rest:
        length, kind = struct.unpack(">I4s", rest[:8])
        body, (crc,) = rest[8:8 + length], struct.unpack(">I", rest[8 + length:12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        out.append((kind, body))
        rest = rest[12 + length:]
    return out


def png(parts: list[tuple[bytes, bytes]]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(
        struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body)) for kind, body in parts)


def pixels(data: bytes) -> bytes:
    return zlib.decompress(b"".join(body for kind, body in chunks(data) if kind == b"IDAT"))


def test_the_readme_links_every_screenshot_and_each_link_is_there():
    linked = set(re.findall(r"\(docs/screenshots/([\w-]+\.png)\)", (ROOT / "README.md").read_text()))
    assert linked == {p.name for p in SHOTS.glob("*.png")}
    assert len(linked) >= 16


def test_each_screenshot_is_a_page_at_a_tested_width_and_small_enough_to_commit():
    for shot in sorted(SHOTS.glob("*.png")):
        kind, header = chunks(shot.read_bytes())[0]
        width, height = struct.unpack(">II", header[:8])
        assert kind == b"IHDR" and shot.stem.endswith(f"-{width}") and width in screenshots.VIEWPORTS, shot.name
        assert height <= screenshots.MAX_HEIGHT, shot.name
        assert shot.stat().st_size <= screenshots.MAX_BYTES, shot.name


def test_recompressing_keeps_every_pixel_in_a_smaller_file():
    shot = chunks((SHOTS / "login-390.png").read_bytes())
    fast = zlib.compress(pixels(png(shot)), 1)
    # As a fast encoder writes it: deflated quickly, in several IDAT chunks.
    header, trailer = shot[0], shot[-1]
    split = png([header, (b"IDAT", fast[:1000]), (b"IDAT", fast[1000:]), trailer])
    packed = screenshots.recompress_png(split)
    assert pixels(packed) == pixels(png(shot))
    assert [kind for kind, _ in chunks(packed)] == [b"IHDR", b"IDAT", b"IEND"]
    assert len(packed) < len(split)

"""QR codes read back by zbar (Debian's zbar-tools), a decoder that is not the project's: the SVG's dark runs
(`M x,y h n v1 h-n z`, the form QRCode.svg writes) drawn into a greyscale image and given to zbarimg."""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path


def decode_svg(svg: str, scale: int = 4) -> str:
    side = int(re.search(r'viewBox="0 0 (\d+) \d+"', svg).group(1)) * scale
    pixels = bytearray(b"\xff" * side * side)
    path = re.search(r' d="([^"]*)"', svg).group(1)
    for x, y, length in re.findall(r"M(\d+),(\d+)h(\d+)v1h-\d+z", path):
        x, y, length = int(x), int(y), int(length)
        for row in range(y * scale, (y + 1) * scale):
            start = row * side + x * scale
            pixels[start:start + length * scale] = b"\x00" * (length * scale)
    with tempfile.TemporaryDirectory() as directory:
        image = Path(directory) / "code.pgm"
        image.write_bytes(f"P5\n{side} {side}\n255\n".encode() + bytes(pixels))
        result = subprocess.run(["zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", str(image)],
                                capture_output=True, timeout=30)
    assert result.returncode == 0, f"zbarimg read no code: {result.stderr.decode()}"
    return result.stdout.decode().rstrip("\n")

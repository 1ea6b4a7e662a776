#!/usr/bin/env python3
"""How many pixels of a PNG screenshot have each given colour (tests/e2e/matrix.sh).

    png_colors.py FILE.png RRGGBB...

Prints "WIDTH HEIGHT DISTINCT" and then "RRGGBB COUNT" per colour asked for.
Decodes 8-bit RGB and RGBA, non-interlaced (what Chromium writes), with the
standard library only; anything else is exit 2 with the reason.
"""

import struct
import sys
import zlib


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def decode(path: str):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                line[i] = (line[i] + paeth(a, b, c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main() -> int:
    try:
        width, height, bpp, rows = decode(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error) as e:
        print(f"{sys.argv[1]}: {e}")
        return 2
    counts = {}
    for line in rows:
        for i in range(0, len(line), bpp):
            rgb = line[i:i + 3]
            counts[rgb] = counts.get(rgb, 0) + 1
    print(width, height, len(counts))
    for hexcolour in sys.argv[2:]:
        print(hexcolour, counts.get(bytes.fromhex(hexcolour), 0))
    return 0


if __name__ == "__main__":
    sys.exit(main())

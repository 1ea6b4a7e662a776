#!/usr/bin/env python3
"""Bench results as a picture (issue 63 item 7): `collgrad-check bench --json`
files in, one SVG out, standard library only.

    scripts/bench-plot.py OUT.svg BENCH.json [BENCH.json ...]

Two panels against the message size (log scale, nccl-tests' sizes): the
differentiable collective's bus bandwidth (solid) beside the raw transport's
(dashed), and the ratio of forward + backward to the raw forward +
transpose (1 = no overhead). One colour per collective (and world, dtype,
rules or transport where the files differ in them). Exit 0 written; 2 a file
unreadable or without rows (said on stderr)."""

import json
import math
import sys
from typing import Dict, List, Sequence, Tuple
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
PANEL_W, PANEL_H, MARGIN, GAP = 420, 300, 60, 70


def series(paths: Sequence[str]) -> Dict[str, List[dict]]:
    """label -> the rows of one line, by size; the label names only what differs between lines."""
    rows: List[dict] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            got = json.load(f).get("rows") or []
        if not got:
            raise ValueError(f"{path}: no rows (was it written by `collgrad-check bench --json`?)")
        rows += got
    keys = ("collective", "world", "dtype", "rules", "transport")
    varying = [k for k in keys if len({r.get(k) for r in rows}) > 1] or ["collective"]
    out: Dict[str, List[dict]] = {}
    for r in rows:
        label = ", ".join(str(r.get(k)) if k == "collective" else f"{k} {r.get(k)}" for k in varying)
        out.setdefault(label, []).append(r)
    for line in out.values():
        line.sort(key=lambda r: r["bytes"])
    return out


def size_words(n: float) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return f"{n:g}"


class Panel:
    """One plot: log2 sizes across, a value axis up (linear from 0, or log10)."""

    def __init__(self, x0: float, title: str, unit: str, xs: Sequence[float], ys: Sequence[float], log_y: bool):
        self.x0, self.title, self.unit, self.log_y = x0, title, unit, log_y
        self.lx = (math.log2(min(xs)), math.log2(max(xs)))
        if self.lx[0] == self.lx[1]:
            self.lx = (self.lx[0] - 1, self.lx[1] + 1)
        positive = [y for y in ys if y > 0] or [1.0]
        if log_y:
            lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
            self.ly = (lo, hi if hi > lo else lo + 1)
        else:
            self.ly = (0.0, max(positive) * 1.1)

    def at(self, x: float, y: float) -> Tuple[float, float]:
        fx = (math.log2(x) - self.lx[0]) / (self.lx[1] - self.lx[0])
        v = math.log10(max(y, 10.0 ** self.ly[0])) if self.log_y else y
        fy = (v - self.ly[0]) / (self.ly[1] - self.ly[0])
        return self.x0 + fx * PANEL_W, MARGIN + (1 - fy) * PANEL_H

    def frame(self, sizes: Sequence[int]) -> List[str]:
        x1, y1 = self.x0 + PANEL_W, MARGIN + PANEL_H
        out = [f'<rect x="{self.x0}" y="{MARGIN}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#888"/>',
               f'<text x="{self.x0 + PANEL_W / 2}" y="{MARGIN - 12}" text-anchor="middle" '
               f'font-weight="bold">{escape(self.title)}</text>',
               f'<text x="{self.x0 + PANEL_W / 2}" y="{y1 + 38}" text-anchor="middle">message size (bytes)</text>',
               f'<text transform="translate({self.x0 - 45},{MARGIN + PANEL_H / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(self.unit)}</text>']
        for s in sorted(set(sizes)):
            x, _ = self.at(s, 1.0)
            out.append(f'<line x1="{x:.1f}" y1="{y1}" x2="{x:.1f}" y2="{y1 + 5}" stroke="#888"/>')
            out.append(f'<text x="{x:.1f}" y="{y1 + 18}" text-anchor="middle" font-size="11">{size_words(s)}</text>')
        ticks = ([10.0 ** e for e in range(int(self.ly[0]), int(self.ly[1]) + 1)] if self.log_y
                 else [self.ly[1] * i / 4 for i in range(5)])
        for t in ticks:
            _, y = self.at(2.0 ** self.lx[0], t)
            out.append(f'<line x1="{self.x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{self.x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t:.3g}</text>')
        return out

    def line(self, points: Sequence[Tuple[float, float]], colour: str, dashed: bool, name: str) -> str:
        at = " ".join(f"{x:.1f},{y:.1f}" for x, y in (self.at(px, py) for px, py in points))
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        return (f'<polyline data-series="{escape(name)}" points="{at}" fill="none" stroke="{colour}" '
                f'stroke-width="2"{dash}/>')


def svg(lines: Dict[str, List[dict]]) -> str:
    rows = [r for line in lines.values() for r in line]
    sizes = [r["bytes"] for r in rows]
    bw = Panel(MARGIN, "bus bandwidth: solid differentiable, dashed raw", "GB/s", sizes,
               [v for r in rows for v in (r["busbw_gbs"], r["raw_busbw_gbs"])], log_y=False)
    ratio = Panel(MARGIN + PANEL_W + GAP, "(fwd + bwd) / (raw fwd + transpose)", "ratio", sizes,
                  [r["ratio"] for r in rows], log_y=True)
    width = 2 * PANEL_W + GAP + 2 * MARGIN
    height = MARGIN + PANEL_H + 60 + 18 * len(lines)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    out += bw.frame(sizes) + ratio.frame(sizes)
    for i, (label, line) in enumerate(lines.items()):
        colour = COLOURS[i % len(COLOURS)]
        out.append(bw.line([(r["bytes"], r["busbw_gbs"]) for r in line], colour, False, f"{label} busbw"))
        out.append(bw.line([(r["bytes"], r["raw_busbw_gbs"]) for r in line], colour, True, f"{label} raw busbw"))
        out.append(ratio.line([(r["bytes"], r["ratio"]) for r in line], colour, False, f"{label} ratio"))
        y = MARGIN + PANEL_H + 60 + 18 * i
        out.append(f'<line x1="{MARGIN}" y1="{y - 4}" x2="{MARGIN + 24}" y2="{y - 4}" stroke="{colour}" '
                   f'stroke-width="2"/>')
        first = line[0]
        out.append(f'<text x="{MARGIN + 30}" y="{y}">{escape(label)} (W={first["world"]}, {first["dtype"]}, '
                   f'rules {escape(str(first["rules"]))}, {escape(str(first["transport"]))})</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2:
        print("usage: scripts/bench-plot.py OUT.svg BENCH.json [BENCH.json ...]", file=sys.stderr)
        return 2
    try:
        text = svg(series(argv[1:]))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"bench-plot: {e}", file=sys.stderr)
        return 2
    with open(argv[0], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

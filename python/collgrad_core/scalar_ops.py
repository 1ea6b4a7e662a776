"""The case language's scalar arithmetic (rank, world, 2 * rank + 1, ...):
float64 with IEEE results where Python would raise (x / 0, a negative base
to a fractional power, fmod by 0), and comparisons and logic as 0.0 or 1.0,
as the C interpreter computes them (harness/interp/interp_expr.c)."""

import math
from typing import Callable, Dict


def _ieee_div(a: float, b: float) -> float:
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _ieee_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except ValueError:
        return math.nan
    except OverflowError:
        return math.inf


def _ieee_mod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


SCALAR_OPS: Dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _ieee_div, "**": _ieee_pow, "%": _ieee_mod,
    "==": lambda a, b: float(a == b), "!=": lambda a, b: float(a != b),
    "<": lambda a, b: float(a < b), "<=": lambda a, b: float(a <= b),
    ">": lambda a, b: float(a > b), ">=": lambda a, b: float(a >= b),
    "&&": lambda a, b: float(a != 0 and b != 0), "||": lambda a, b: float(a != 0 or b != 0),
}

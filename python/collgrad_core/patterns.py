"""Naming a wrong gradient by the shape of its error.

Given what a rank observed for one tensor and the truths the finite
differences give (per-rank, replicated, own-loss), say which known mistake
it matches: observed = c x truth for c in {W, 1/W, a group's size and its
inverse, a mesh dimension's size and its inverse, 0, -1} or, failing those,
any constant c on every element, right under replicated semantics only (#58005), only
the rank's own loss reaching it (GatherLayer), or a gradient that is nan or
inf where the truth is finite. Each pattern names the public
issues that show it; anything else is "no known pattern" with the largest
difference, so a person can start from numbers.
"""

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple

Close = Callable[[Sequence[float], Sequence[float]], bool]

REPLICATED = ("right under replicated semantics only: this rank got d L_0/d x, as if the loss were one "
              "function every rank holds a copy of, where per-rank semantics sums every rank's loss "
              "(pytorch #58005, seeds/002)")
OWN_LOSS = ("only this rank's own loss reaches it: the backward drops the other ranks' losses "
            "(GatherLayer-style: seeds/003, SimCLR's GatherLayer; torch.distributed.nn's PRODUCT "
            "backward at W=2, pytorch #58005)")
ZERO = ("x 0: no gradient path through the communication (a c10d collective has no autograd formula, "
        "or the result was computed on a discarded copy; pytorch #152127), or around it (a reentrant "
        "torch.utils.checkpoint whose inputs require no grad)")
TIMES_W = ("x W: summed where it should be averaged, or reduced twice (pytorch #160285's expert "
           "gradients, DeepSpeed #5248, Megatron-LM #7452)")
OVER_W = "x 1/W: averaged where it should be summed, or divided by the world twice"
NEGATED = "x -1: the sign is flipped"
PARTIAL = ("partial: the ranks' gradients of this replicated tensor sum to the truth, so each rank holds only "
           "its own part: the gradient all-reduce is missing or reduces a discarded copy (Megatron's copy_to "
           "with an identity backward, an all_reduce of grad.contiguous())")

# The same findings in JAX's words (collgrad_jax's check): no c10d, DTensor or checkpoint on JAX code
JAX_WORDS = {
    REPLICATED: ("right under replicated semantics only: this device got d L_0/d x, as if every device's loss "
                 "were device 0's, where the global loss sums every device's loss"),
    OWN_LOSS: ("only this device's own loss reaches it: the backward drops the other devices' losses (a "
               "custom_vjp whose backward keeps its own block of an all_gather's cotangent instead of "
               "psum_scatter-ing it)"),
    ZERO: ("x 0: no gradient path through the communication (a custom_vjp whose backward returns zeros or drops "
           "the cotangent, a jax.lax.stop_gradient, a value computed outside the differentiated function)"),
    TIMES_W: ("x W: summed where it should be averaged, or reduced twice (a psum in a custom_vjp's backward "
              "where shard_map's own transpose already sums)"),
    PARTIAL: ("partial: the devices' gradients of this replicated input sum to the truth, so each device holds "
              "only its own part: the psum of the cotangent is missing (a custom_vjp without it, a replicated "
              "input's transpose under check_vma=False)"),
}
NOT_FINITE_CAUSES = {
    "pytorch": "torch.where or a mask over a branch whose gradient is nan, a sqrt or log at 0, 0 * inf",
    "jax": "jnp.where over a branch whose gradient is nan (the where/sqrt trap), a sqrt or log at 0, 0 * inf",
}
DIVERGED_CAUSES = {
    "pytorch": ("so each rank's optimizer moves its copy apart: a Replicate DTensor used through to_local() "
                "without grad_placements=[Partial()] (torchtitan #2387, #2217), or a gradient sync that skips "
                "some copies"),
    "jax": ("so the copies of the one input move apart: a gradient left per device where shard_map's transpose "
            "or a psum should have reduced it over the axis"),
}


def words(text: str, framework: str) -> str:
    """A finding as the framework's users say it."""
    return JAX_WORDS.get(text, text) if framework == "jax" else text


def alike(a: Sequence[float], b: Sequence[float], close: Close) -> bool:
    """Whether two gradients are the same: close where finite, and the same
    non-finite value where not (nan is unequal to itself, so close() alone
    would call two nan gradients different)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if math.isfinite(x) and math.isfinite(y):
            if not close([x], [y]):
                return False
        elif not (x == y or (math.isnan(x) and math.isnan(y))):
            return False
    return True


def _zero_on(candidate: Sequence[float], truth: Sequence[float]) -> bool:
    """A candidate that is zero wherever the truth is not explains nothing a
    zero gradient does not: "x 0" names it."""
    return all(c == 0.0 for c, t in zip(candidate, truth) if t != 0.0)


DIVERGED = "replicas diverge"


def diverged(copies: Sequence[Tuple[int, Sequence[float]]], framework: str = "pytorch") -> str:
    """The finding for copies of one replicated tensor whose gradients differ,
    naming each holder's value where the first two copies differ most."""
    g0 = copies[0][1]
    g1 = next((g for _, g in copies[1:] if list(g) != list(g0)), copies[1][1])
    at = max(range(len(g0)), key=lambda i: abs(g0[i] - g1[i])) if g0 else 0
    who = "device" if framework == "jax" else "rank"
    values = ", ".join(f"{who} {k} {g[at]:.6g}" for k, g in copies) if g0 else ""
    return (f"{DIVERGED}: the copies of this one logical tensor got different gradients (element {at}: {values}), "
            + DIVERGED_CAUSES[framework])


def copies(held: Sequence[Tuple[int, Sequence[float]]], truth: Sequence[float], close: Close,
           framework: str = "pytorch") -> List[str]:
    """What the copies of one replicated tensor show together, where some
    copy's gradient is wrong: gradients that differ between the copies (each
    holder's optimizer then moves its copy apart), and copies that sum to the
    truth (each one part of it). `held`: (holder, its gradient) per copy."""
    found: List[str] = []
    first = held[0][1]
    if any(not alike(g, first, close) for _, g in held[1:]):
        found.append(diverged(held, framework))
    if close([sum(vals) for vals in zip(*(g for _, g in held))], truth):
        found.append(words(PARTIAL, framework))
    return found


def close_within(atol: float, rtol: float) -> Close:
    """gradcheck's comparison, element by element: |a - b| <= atol + rtol |b|."""
    def close(a: Sequence[float], b: Sequence[float]) -> bool:
        return all(abs(x - y) <= atol + rtol * abs(y) for x, y in zip(a, b))
    return close


FACTOR = ("a constant factor on every element: a scale applied once too often or missing (a loss divided, "
          "or not, by a microbatch, accumulation or batch count: pipelining's scale_grads, gradient "
          "accumulation; an integer factor is a count)")


def _constant_factor(observed: Sequence[float], truth: Sequence[float], close: Close) -> Optional[float]:
    """c with observed = c x truth on every element, where at least two truth
    elements are nonzero (one element alone always has some factor)."""
    if sum(1 for t in truth if t != 0.0) < 2:
        return None
    c = sum(o * t for o, t in zip(observed, truth)) / sum(t * t for t in truth)
    if not math.isfinite(c) or abs(c - 1.0) < 1e-6 or not close(observed, _scaled(c, truth)):
        return None
    return c


def accumulated(k: int) -> str:
    """The reading of a factor k where the step called backward k times."""
    return f"x {k}: the step called backward {k} times (microbatches), so {k} is its accumulation count: {FACTOR}"


POOLED = "(pooled: the factor this check's other tensors show, where this tensor has too few elements to show one)"


def pool_factors(checks: Sequence[Any], close: Close) -> None:
    """A constant factor needs two nonzero truth elements to show (one element
    alone always has some factor): a wrong tensor of one element (an FSDP
    shard of one row, a bias) that is off by the factor its check's other
    wrong tensors show is named by their reading, marked pooled."""
    known: List[Tuple[float, str]] = []
    for c in checks:
        if c.ok or not c.patterns or c.patterns[0].startswith("no known"):
            continue
        f = _constant_factor(c.observed, c.truth, close)
        if f is not None and not any(abs(f - g) <= 1e-6 * abs(g) for g, _ in known):
            known.append((f, c.patterns[0]))
    for c in checks:
        if c.ok or not c.patterns or not c.patterns[0].startswith("no known") or not any(t != 0 for t in c.truth):
            continue
        for f, text in known:
            if close(c.observed, _scaled(f, c.truth)):
                c.patterns = [f"{text} {POOLED}"]
                break


def key(text: str) -> str:
    """A pattern's short name, for the report's diagnosis.matches."""
    fixed = {REPLICATED: "replicated_only", OWN_LOSS: "own_loss", ZERO: "zero", TIMES_W: "times_world",
             OVER_W: "over_world", NEGATED: "negated", PARTIAL: "partial"}
    fixed.update({JAX_WORDS[t]: k for t, k in list(fixed.items()) if t in JAX_WORDS})
    if text in fixed:
        return fixed[text]
    if text.startswith(DIVERGED):
        return "replicas_diverge"
    if text.endswith(POOLED):
        return key(text[:-len(POOLED) - 1])
    if text.endswith(FACTOR):
        return "constant_factor"
    if text.startswith("no known pattern"):
        return "unknown"
    if text.startswith("not finite"):
        return "non_finite"
    if "mesh dimension" in text:
        return "over_mesh_dim" if text.startswith("x 1/") else "times_mesh_dim"
    return "over_group" if text.startswith("x 1/") else "times_group"


def _dims_text(names: Sequence[str]) -> str:
    return f"mesh dimension '{names[0]}'" if len(names) == 1 else f"mesh dimensions {', '.join(names)} (equal sizes)"


def _scaled(c: float, t: Sequence[float]) -> List[float]:
    return [c * v for v in t]


def name(observed: Sequence[float], truth: Sequence[float], close: Close, world: int,
         groups: Sequence[int], replicated: Optional[Sequence[float]] = None,
         own: Optional[Sequence[float]] = None, dims: Sequence[Tuple[str, int, bool]] = (),
         framework: str = "pytorch", accumulation: int = 0) -> List[str]:
    """Every known pattern `observed` matches (most specific first), or one
    "no known pattern" line. `dims`: the tensor's DTensor mesh as (name,
    size, whether the tensor is Replicate there), so a factor of one
    dimension's size names that dimension (of equal sizes, the Replicate ones:
    where a replica's gradient is reduced). `framework`: whose words (words()).
    `accumulation`: how many times a step called backward; a factor of that
    count is read as it first, before a world or group size that equals it."""
    return [words(t, framework) for t in _name(observed, truth, close, world, groups, replicated, own, dims,
                                               framework, accumulation)]


def _name(observed: Sequence[float], truth: Sequence[float], close: Close, world: int, groups: Sequence[int],
          replicated: Optional[Sequence[float]], own: Optional[Sequence[float]],
          dims: Sequence[Tuple[str, int, bool]], framework: str, accumulation: int = 0) -> List[str]:
    bad = next((i for i, o in enumerate(observed) if not math.isfinite(o)), None)
    if bad is not None:  # nan compares false with everything: no scaling can name it
        return [f"not finite: the gradient is {observed[bad]!r} at element {bad}, where finite differences "
                f"give {truth[bad]:.6g}: a nan or inf in the backward that the forward does not show "
                f"({NOT_FINITE_CAUSES[framework]})"]
    found: List[str] = []
    if replicated is not None and close(observed, replicated) and not _zero_on(replicated, truth):
        found.append(REPLICATED)
    if (own is not None and not close(own, truth) and close(observed, own) and not _zero_on(own, truth)
            and not (found and replicated is not None and close(own, replicated))):
        found.append(OWN_LOSS)
    scale = max((abs(v) for v in truth), default=0.0)
    if scale > 0 and not close(truth, _scaled(0.0, truth)):
        candidates = [(0.0, ZERO), (float(world), TIMES_W), (1.0 / world, OVER_W)]
        if accumulation > 1:   # the count the program shows, before a size that may only coincide with it
            candidates.insert(1, (float(accumulation), accumulated(accumulation)))
        named = set()
        for _, g, _ in dims:  # a 1-D mesh of the whole world too: "x W" then names its dimension
            if 1 < g <= world and g not in named:
                named.add(g)
                same = [d for d, size, _ in dims if size == g]
                rep = [d for d, size, r in dims if size == g and r]
                where = _dims_text(rep or same)
                candidates.append((float(g), f"x {g}: the size of {where}: the gradient reduced over it once "
                                             "too often (a sync the plan already made), or summed where its "
                                             "mean is due"))
                candidates.append((1.0 / g, f"x 1/{g}: divided by the size of {where} where a sum is due "
                                            "(a mean over ranks that hold parts of one loss)"))
        for g in sorted(set(groups) - named):
            if 1 < g < world:
                candidates.append((float(g), f"x {g}: a group's size (the function made a group of {g} ranks): "
                                             "reduced over that group where it should not be, or twice"))
                candidates.append((1.0 / g, f"x 1/{g}: divided by a group's size ({g} ranks) where it should not be"))
        candidates.append((-1.0, NEGATED))
        for c, text in candidates:
            if world == 1 and c in (float(world), 1.0 / world) and text in (TIMES_W, OVER_W):
                continue
            if close(observed, _scaled(c, truth)):
                found.append(text)
    if found:
        return found
    factor = _constant_factor(observed, truth, close)
    if factor is not None:
        return [f"x {factor:.6g}: {FACTOR}"]
    worst, at = -1.0, 0
    for i, (o, t) in enumerate(zip(observed, truth)):
        if abs(o - t) > worst:
            worst, at = abs(o - t), i
    return [f"no known pattern: the largest difference is at element {at}: observed {observed[at]:.6g}, "
            f"truth {truth[at]:.6g}"]

"""check_vma, as written and flipped.

jax.shard_map's check_vma (JAX's varying-manual-axes typing) changes how a
collective transposes: with it on, a psum of a value the devices hold alike
transposes to a pbroadcast and an input a device does not vary over gets its
cotangent summed; with it off, shard_map's transpose divides and sums around
the body instead. The same code can so get different gradients, or be
refused, one way or the other. The device process replaces jax.shard_map
by a wrapper that records each call's check_vma and, while `flipped` is on,
calls JAX's with the opposite value; a shard_map reached by another name
(jax.experimental.shard_map) is run as written.
"""

from typing import Any, Callable, List, Optional


class _Switch:
    flipped = False
    written: List[bool] = []
    original: Optional[Callable[..., Any]] = None


def install() -> None:
    """Wrap jax.shard_map (once), before the user's module imports it."""
    import jax

    if _Switch.original is not None:
        return
    original = jax.shard_map
    _Switch.original = original

    def shard_map(f: Any = None, /, **kwargs: Any) -> Any:
        written = bool(kwargs.get("check_vma", True))
        _Switch.written.append(written)
        if _Switch.flipped:
            kwargs["check_vma"] = not written
        return original(f, **kwargs) if f is not None else original(**kwargs)

    shard_map.__doc__ = original.__doc__
    jax.shard_map = shard_map


def flip(on: bool) -> None:
    """From now on, run every shard_map with check_vma flipped (on) or as
    written; traces made the other way are dropped."""
    import jax

    _Switch.flipped = on
    jax.clear_caches()


def written() -> List[bool]:
    """check_vma of each shard_map call so far, as written."""
    return list(_Switch.written)

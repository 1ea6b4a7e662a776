"""The case language's communication calls as JAX writes them inside
shard_map (axis 'i'), each JAX's own collective, so its transpose is JAX's;
the run names what it used (a matrix cell's "via"):

    all_reduce      sum: psum, avg: pmean, max: pmax, min: pmin,
                    prod: all_gather then a product (lax has no product reduction)
    all_gather      all_gather(tiled); to='invarying' with the case's `jax all_gather=invarying`
    reduce_scatter  psum_scatter(tiled) (avg: / W; max, min, prod: the reduction, then the own block)
    broadcast       pbroadcast where the platform lowers it, else its documented
                    equivalent: psum of the root's block, zeros elsewhere
    reduce          as all_reduce, kept on the root (zeros elsewhere, as the language defines it)
    gather          all_gather(tiled), kept on the root
    scatter         psum_scatter of the root's block, zeros elsewhere
    all_to_all      all_to_all(split 0, concat 0, tiled)
    send / recv     ppermute, where the sends form a permutation

What JAX has no word for is Unsupported, with the reason: ragged blocks
(every device's block one shape), explicit splits, process groups, and
sends that are not a permutation received in one call."""

from typing import Any

import jax
import jax.numpy as jnp

from collgrad_core.ir import Node

from .values import Tensor, Unsupported, derived

AXIS = "i"
_REDUCE = {"sum": jax.lax.psum, "avg": jax.lax.pmean, "max": jax.lax.pmax, "min": jax.lax.pmin}


def _op(p: Any, e: Node, row: Any) -> str:
    nodes, kw = e["args"], e["kwargs"]
    node = nodes[row.op] if len(nodes) > row.op else kw.get("op")
    name = node["name"] if node is not None else "sum"
    if name not in _REDUCE and name != "prod":
        raise p.fail(e, f"expected a reduction op, got '{name}'")
    return name


def _reduce(p: Any, x: Any, op: str) -> Any:
    if op == "prod":  # lax has psum, pmean, pmax, pmin: the product of the gathered blocks differentiates
        p.note("all_gather+prod")
        return jnp.prod(jax.lax.all_gather(x, AXIS), axis=0)
    p.note(_REDUCE[op].__name__)
    return _REDUCE[op](x, AXIS)


def _root_block(p: Any, x: Any, root: int) -> Any:
    """The root's x, zeros on the others: what a psum or psum_scatter sends from the root alone."""
    return jnp.where(p.idx == root, x, jnp.zeros_like(x))


def _root(p: Any, e: Node, row: Any) -> int:
    nodes, kw = e["args"], e["kwargs"]
    node = nodes[row.root] if len(nodes) > row.root else kw.get("root")
    if node is None:
        return 0
    return p.static_int(p.eval(node), node, "the root rank")


def _even(p: Any, e: Node, seq: int) -> None:
    """Every device's block one shape, and no explicit splits: else ragged, which SPMD cannot say."""
    ev = p.case.event(seq, 0)
    if ev.splits is not None:
        raise Unsupported(f"explicit splits: JAX's collectives take one block shape for every device "
                          f"({e['name']})")
    if any(s != ev.shapes[0] for s in ev.shapes[1:]):
        shapes = ", ".join(map(str, ev.shapes))
        raise Unsupported(f"ragged blocks: {e['name']} of {shapes}: one SPMD program, one shape")


def _rows(x: Any) -> Any:
    return x.reshape(1) if x.ndim == 0 else x


def _even_rows(e: Node, x: Any, world: int) -> None:
    if x.shape[0] % world:
        raise Unsupported(f"ragged blocks: {e['name']} of {x.shape[0]} rows over {world} devices")


def _own_block(p: Any, e: Node, x: Any) -> Any:
    n = x.shape[0]
    if n % p.world:
        raise Unsupported(f"ragged blocks: {e['name']} of {n} rows over {p.world} devices")
    size = n // p.world
    return jax.lax.dynamic_slice_in_dim(x, p.idx * size, size, axis=0)


# ---- one function per kind: (program, call, x as the kind takes it, its row) -> y ------------

def _all_reduce(p: Any, e: Node, x: Any, row: Any) -> Any:
    return _reduce(p, x, _op(p, e, row))


def _all_gather(p: Any, e: Node, x: Any, row: Any) -> Any:
    to = p.spelling.all_gather_to
    p.note("all_gather" if to == "varying" else f"all_gather(to='{to}')")
    return jax.lax.all_gather(x, AXIS, tiled=True, to=to)


def _reduce_scatter(p: Any, e: Node, x: Any, row: Any) -> Any:
    op = _op(p, e, row)
    if op not in ("sum", "avg"):
        return _own_block(p, e, _reduce(p, x, op))
    _even_rows(e, x, p.world)
    p.note("psum_scatter" if op == "sum" else "psum_scatter/W")
    y = jax.lax.psum_scatter(x, AXIS, scatter_dimension=0, tiled=True)
    return y / p.world if op == "avg" else y


def _broadcast(p: Any, e: Node, x: Any, row: Any) -> Any:
    root = _root(p, e, row)
    if p.spelling.pbroadcast:
        p.note("pbroadcast")
        return jax.lax.pbroadcast(x, AXIS, root)
    p.note("psum(root's block)")  # pbroadcast's documented equivalent
    return jax.lax.psum(_root_block(p, x, root), AXIS)


def _scatter(p: Any, e: Node, x: Any, row: Any) -> Any:
    _even_rows(e, x, p.world)
    p.note("psum_scatter(root's block)")
    return jax.lax.psum_scatter(_root_block(p, x, _root(p, e, row)), AXIS, scatter_dimension=0, tiled=True)


def _all_to_all(p: Any, e: Node, x: Any, row: Any) -> Any:
    _even_rows(e, x, p.world)
    p.note("all_to_all")
    return jax.lax.all_to_all(x, AXIS, 0, 0, tiled=True)


# kind -> (whether it works on rows, so a 0-d input is one row; its function). reduce and
# gather are all_reduce and all_gather kept on the root (communicate, by the row's root_only_output).
KINDS = {
    "all_reduce": (False, _all_reduce),
    "reduce": (False, _all_reduce),
    "all_gather": (True, _all_gather),
    "gather": (True, _all_gather),
    "reduce_scatter": (True, _reduce_scatter),
    "broadcast": (False, _broadcast),
    "scatter": (True, _scatter),
    "all_to_all": (True, _all_to_all),
}


def communicate(p: Any, e: Node) -> Tensor:
    kind, seq = e["name"], int(e["seq"])
    if kind == "recv":
        return _recv(p, e)
    row = p.case.collectives[kind]
    t = p.tensor(p.eval(e["args"][0]))
    for a in e["args"][1:] + list(e["kwargs"].values()):
        if a["kind"] == "name" and a["name"] not in p.env:   # a process group's name
            raise Unsupported(f"process groups (group(), mesh()): not expressed in the 1-D mesh yet ({kind})")
    if kind not in KINDS:
        raise Unsupported(f"{kind}: no JAX collective here")
    _even(p, e, seq)
    by_rows, fn = KINDS[kind]
    y = fn(p, e, _rows(t.x) if by_rows else t.x, row)
    if row.root_only_output:  # JAX has no reduce or gather: the root keeps the all-reduced or gathered value
        root = _root(p, e, row)
        p.note("where(root)")
        y = jnp.where(p.idx == root, y, jnp.zeros_like(y))
        out = derived(y, t)
        out.root_only = root
        return out
    return derived(y, t)


def _recv(p: Any, e: Node) -> Tensor:
    """recv(src): the oldest pending send, as a ppermute, when every device
    receives from the device that sends to it."""
    src = p.number_of(p.eval(e["args"][0]), e["args"][0], "a source rank")
    if not p.pending:
        raise p.fail(e, "expected a send before this recv, got none")
    dest, t = p.pending.pop(0)
    perm = [(d, int(to)) for d, to in enumerate(dest.values)]
    if sorted(to for _, to in perm) != list(range(p.world)) or any(
            int(src.values[to]) != d for d, to in perm):
        raise Unsupported("send/recv that is not one permutation of the devices received in one call (ppermute)")
    p.note("ppermute")
    return derived(jax.lax.ppermute(t.x, AXIS, perm), t)



"""How a case program is written in JAX where JAX has more than one way to
write it: the case's `jax` line (docs/case-language.md) picks between
spellings whose gradients JAX 0.10 computes differently, and the platform
decides whether lax.pbroadcast can run at all (jax 0.10.2 has no CPU
lowering for it: "MLIR translation rule for primitive 'pbroadcast' not
found for platform cpu").

    all_gather=invarying   jax.lax.all_gather(..., to='invarying')
    loss=replicated        the backward roots returned under out_specs=P()
    backward=in_body       each backward() a jax.vjp inside the shard_map body
"""

import functools
from dataclasses import dataclass
from typing import Any, Dict, List

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, PartitionSpec as P

AXIS = "i"


@dataclass(frozen=True)
class Spelling:
    all_gather_to: str = "varying"   # or "invarying"
    loss: str = "varying"            # or "replicated": out_specs=P() for the roots
    backward: str = "outside"        # or "in_body" (its roots stay per device: loss= does not apply)
    pbroadcast: bool = False         # this platform lowers lax.pbroadcast

    def notes(self) -> List[str]:
        """What the case's `jax` line changed, as a cell names it."""
        out = []
        if self.loss == "replicated" and self.backward == "outside":
            out.append("out_specs=P()")
        if self.backward == "in_body":
            out.append("jax.vjp in the body")
        return out


def is_varying(x: Any) -> bool:
    """Whether check_vma types x as varying over the devices (a psum's
    result is not). jax 0.10 keeps it in the type's manual_axis_type,
    earlier releases in its vma; without either, varying."""
    aval = jax.typeof(x)
    manual = getattr(aval, "manual_axis_type", None)
    if manual is not None:
        return bool(manual.varying)
    return bool(getattr(aval, "vma", True))


@functools.lru_cache(maxsize=None)
def pbroadcast_lowers(mesh: Mesh) -> bool:
    """Whether lax.pbroadcast compiles on this mesh's platform (a one-time probe)."""
    f = jax.shard_map(lambda x: jax.lax.pbroadcast(x, AXIS, 0), mesh=mesh, in_specs=P(AXIS), out_specs=P(AXIS),
                      check_vma=False)
    try:
        jax.jit(f).lower(jnp.zeros((mesh.size,))).compile()
        return True
    except Exception:   # NotImplementedError (no lowering) or what the backend raises instead
        return False


def of_case(words: Dict[str, str], mesh: Mesh) -> Spelling:
    return Spelling(all_gather_to=words.get("all_gather", "varying"), loss=words.get("loss", "varying"),
                    backward=words.get("backward", "outside"), pbroadcast=pbroadcast_lowers(mesh))

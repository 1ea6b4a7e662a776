"""Megatron-core's parameter attributes: its own contract for what a
parameter is (DESIGN section 16's rule: a framework's contract decides).

megatron.core.tensor_parallel.layers marks every parameter of its layers:
`tensor_model_parallel` True for this rank's partition of a weight split
along `partition_dim` (set_tensor_model_parallel_attributes), False for the
rest (set_defaults_if_not_set_tensor_model_parallel_attributes): a whole
tensor, one copy on every rank of the tensor-parallel group, as
RowParallelLinear's bias and a LayerNorm's weights under sequence
parallelism (`sequence_parallel` True) are. So a parameter whose
tensor_model_parallel is False is one logical tensor held by the ranks of
Megatron's tensor-parallel group (parallel_state, or the whole world where
it is not initialized); a partition, or a parameter without the attribute,
is left to the other declarations (inputs.py).
"""

from typing import Any, List, Optional


def holders(param: Any) -> Optional[List[int]]:
    """The ranks holding one copy of param by Megatron's attributes, or None."""
    if getattr(param, "tensor_model_parallel", None) is not False:
        return None
    return _tensor_parallel_ranks()


def _tensor_parallel_ranks() -> List[int]:
    import torch.distributed as dist

    try:
        from megatron.core import parallel_state  # type: ignore[import-not-found]
    except ImportError:
        return list(range(dist.get_world_size()))
    ranks_of = getattr(dist, "get_process_group_ranks", None)   # torch 2.0 on
    if not parallel_state.model_parallel_is_initialized() or ranks_of is None:
        return list(range(dist.get_world_size()))
    return list(ranks_of(parallel_state.get_tensor_model_parallel_group()))

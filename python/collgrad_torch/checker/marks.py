"""What frameworks say about their own parameters and losses: their marks
(design.md section 18: a framework's own contract decides what its objects are).

Two questions, asked of every module input:
- which ranks hold one copy of a parameter (holders): a whole tensor that
  every rank of a tensor-parallel group keeps, whose copies the truth
  perturbs together;
- whether the module is tensor-parallel by a framework's contract
  (contract): then a loss that every rank computes alike is one logical
  loss, each rank's a copy of it, and `semantics="auto"` judges it under
  replicated semantics (judge.py). Data parallelism (DDP, FSDP) makes no
  such claim: its ranks' losses are addends even when their values agree.

The contracts:
- Megatron-core (megatron.core.tensor_parallel.layers) marks the
  parameters of its layers: `tensor_model_parallel` True for this rank's
  partition of a weight split along `partition_dim`; False, or no mark, for
  a whole tensor held by every rank of the tensor-parallel group
  (RowParallelLinear's bias, a LayerNorm's weights); its losses are
  computed alike on the group's ranks (reduce_from_tensor_model_parallel_region
  has an identity backward for that reason).
- Hugging Face transformers (5.x, from_pretrained(..., distributed_config=
  DistributedConfig(tp_size=N))) marks the model with `_tp_size` and keeps its
  mesh in `_mesh_manager`: the parameters its TP plan names become DTensors,
  the others (the norms) are plain tensors every rank of the "tp" mesh keeps
  whole (its "replicate" style).
- DTensor parameters of torch's tensor-parallel plans (parallelize_module):
  their placements say what they are (placements.dtensor_holders); the module is
  tensor-parallel unless fully_shard made it an FSDP module, or where a
  parameter is placed over a mesh dimension named "tp" of more than one rank
  (torchtitan's FSDP wraps its TP model, on a one-rank "fsdp" dimension at TP=W).
"""

from typing import Any, List, Optional


class Marks:
    """One module input's marks, read once: its contract and its parameters' holders."""

    def __init__(self, module: Any) -> None:
        import torch

        self.module = module
        params = list(module.parameters()) if isinstance(module, torch.nn.Module) else []
        self.megatron = any(hasattr(p, "tensor_model_parallel") for p in params)
        self.hf_tp = _hf_tp_size(module) > 1
        if self.megatron:
            self.contract = "Megatron-core's tensor-parallel layers (tensor_model_parallel attributes)"
        elif self.hf_tp:
            self.contract = "transformers' tensor-parallel plan (distributed_config tp_size > 1)"
        elif any(_is_dtensor(p) for p in params) and not _fully_sharded(module) or any(map(_over_tp, params)):
            self.contract = "DTensor parameters of a tensor-parallel plan"
        else:
            self.contract = ""

    def holders(self, param: Any) -> Optional[List[int]]:
        """The ranks holding one copy of `param` by the framework's marks, or
        None where none speaks. Megatron counts a parameter without the
        attribute as a duplicate on every rank of the tensor-parallel group,
        as one marked False (param_is_not_tensor_parallel_duplicate):
        RowParallelLinear's bias carries none."""
        if self.megatron and getattr(param, "tensor_model_parallel", False) is not True:
            return _megatron_tensor_parallel_ranks()
        if getattr(param, "tensor_model_parallel", None) is False:
            return _megatron_tensor_parallel_ranks()
        if self.hf_tp and not _is_dtensor(param):
            return _hf_tensor_parallel_ranks(self.module)
        return None


def finalized(param: Any, grad: Any, notes: List[str], name: str) -> Any:
    """param's gradient as Megatron's finalize_model_grads leaves it after
    backward, for a check that runs backward itself (fn): a parameter marked
    `sequence_parallel` (RowParallelLinear's bias, a norm's weights under
    sequence parallelism) sees only this rank's rows, so its gradient is a
    partial sum over the tensor-parallel group, summed there;
    `average_gradients_across_tp_domain` averaged. A step runs
    finalize_model_grads itself. Collective over that group."""
    average = getattr(param, "average_gradients_across_tp_domain", False) is True
    if grad is None or not (average or getattr(param, "sequence_parallel", False) is True):
        return grad
    import torch.distributed as dist
    from megatron.core import parallel_state  # type: ignore[import-not-found]

    group = parallel_state.get_tensor_model_parallel_group() if parallel_state.model_parallel_is_initialized() \
        else None
    grad = grad.detach().clone()
    dist.all_reduce(grad, group=group)
    if average:
        grad /= dist.get_world_size(group)
    notes.append(f"{name}: Megatron's {'average_gradients_across_tp_domain' if average else 'sequence_parallel'} "
                 f"parameter: its gradient {'averaged' if average else 'summed'} over the tensor-parallel group, "
                 "as finalize_model_grads does after backward")
    return grad


def _is_dtensor(t: Any) -> bool:
    from .placements import is_dtensor

    return is_dtensor(t)


def _over_tp(param: Any) -> bool:
    """A DTensor placed over a mesh dimension named "tp" of more than one rank
    (torchtitan's and transformers' name for it): tensor-parallel, whatever
    FSDP does over the other dimensions."""
    if not _is_dtensor(param):
        return False
    mesh = param.device_mesh
    return any(n == "tp" and size > 1 for n, size in zip(mesh.mesh_dim_names or (), mesh.shape))


def _fully_sharded(module: Any) -> bool:
    from .placements import fsdp_module_type

    fsdp = fsdp_module_type()
    return fsdp is not None and any(isinstance(m, fsdp) for m in module.modules())


def _hf_tp_size(module: Any) -> int:
    size = getattr(module, "_tp_size", None)
    return size if isinstance(size, int) and getattr(module, "_mesh_manager", None) is not None else 1


def _group_ranks(group: Any) -> List[int]:
    import torch.distributed as dist

    return sorted(int(k) for k in dist.get_process_group_ranks(group))


def _hf_tensor_parallel_ranks(module: Any) -> List[int]:
    mesh = module._mesh_manager.get_mesh("tp")
    return _group_ranks(mesh.get_group())


def _megatron_tensor_parallel_ranks() -> List[int]:
    import torch.distributed as dist

    try:
        from megatron.core import parallel_state  # type: ignore[import-not-found]
    except ImportError:
        return list(range(dist.get_world_size()))
    if not parallel_state.model_parallel_is_initialized() or getattr(dist, "get_process_group_ranks", None) is None:
        return list(range(dist.get_world_size()))   # torch 1.13 has no get_process_group_ranks
    return _group_ranks(parallel_state.get_tensor_model_parallel_group())

"""Megatron-core's tensor-parallel layers, checked as they ship (issue 61; megatron-core 0.16,
torch 2.x, CPU ranks under gloo with cpu_for_cuda=True: Megatron's layers allocate on
torch.cuda.current_device()).

Megatron keeps its process groups in parallel_state: setup and teardown (check()'s hooks) make
and destroy them around each check, so checks in one warm world (the pytest plugin, several
functions in one command) give what cold ones give.

The weights are full logical matrices (full_weights) whose slices each rank copies in, as a
checkpoint loader does; the test's single-process reference uses the full ones. Megatron's
own marks say what each parameter is: ColumnParallelLinear's weight and bias and
RowParallelLinear's weight are partitions (tensor_model_parallel), RowParallelLinear's bias a
whole tensor every rank keeps (no mark: a tensor-parallel duplicate), marked sequence_parallel
under sequence parallelism (its gradient summed over the group by finalize_model_grads).

- mlp (make_inputs): ColumnParallelLinear -> GELU -> RowParallelLinear on the activation x that
  every rank holds (cg.replicated), loss sum(y^2) computed alike on every rank: one logical loss
  by Megatron's contract. Correct.
- mlp (make_inputs_delayed_reduce): fc1 built with disable_grad_reduce=True (NeMo's LoRA adapters
  do, to fuse the reduction later) and the later reduction never made: the copy-to-tensor-parallel-
  region backward skips its all-reduce, so each rank's x.grad is its partition's addend: "partial"
  on x, every weight right.
- sp_mlp (make_sp_inputs): sequence parallel: each rank holds its rows of the sequence (x_r),
  fc1 all-gathers them, fc2 reduce-scatters, a LayerNorm on each rank's rows marked
  sequence_parallel as Megatron's own norms are; the loss is this rank's rows' (per-rank
  semantics: the global loss is the sum). Correct.
- sp_mlp (make_sp_inputs_unmarked_norm): the same LayerNorm without the mark (a norm added by
  hand): finalize_model_grads leaves its gradient a partial sum on each rank: its copies diverge,
  summing to the truth ("partial").
- vocab_loss (make_vocab_inputs): a head ColumnParallelLinear over the vocabulary and
  vocab_parallel_cross_entropy, mean over tokens: one logical loss. Correct.
"""

import torch

import collgrad_torch as cg

HIDDEN, FFN, TOKENS, VOCAB = 4, 8, 4, 8   # FFN, TOKENS and VOCAB divisible by W = 2 and 4


def full_weights() -> dict:
    """The logical parameters (float32, as Megatron builds them)."""
    g = torch.Generator().manual_seed(0)
    return {"fc1.weight": torch.randn(FFN, HIDDEN, generator=g) / 2, "fc1.bias": torch.randn(FFN, generator=g) / 4,
            "fc2.weight": torch.randn(HIDDEN, FFN, generator=g) / 3, "fc2.bias": torch.randn(HIDDEN, generator=g) / 4,
            "norm.weight": 1 + torch.randn(HIDDEN, generator=g) / 4, "norm.bias": torch.randn(HIDDEN, generator=g) / 4,
            "head.weight": torch.randn(VOCAB, HIDDEN, generator=g) / 2}


def activations() -> torch.Tensor:
    """The layer's input [sequence, batch 1, hidden], the whole sequence."""
    return torch.randn(TOKENS, 1, HIDDEN, generator=torch.Generator().manual_seed(1))


def targets() -> torch.Tensor:
    return torch.randint(0, VOCAB, (TOKENS, 1), generator=torch.Generator().manual_seed(2))


def setup(rank: int, world: int) -> None:
    from megatron.core import parallel_state

    parallel_state.initialize_model_parallel(tensor_model_parallel_size=world)


def teardown(rank: int, world: int) -> None:
    from megatron.core import parallel_state

    parallel_state.destroy_model_parallel()


def layers(world: int, names: tuple, *, sequence_parallel: bool = False, **fc1: bool) -> torch.nn.ModuleDict:
    from megatron.core import parallel_state
    from megatron.core.model_parallel_config import ModelParallelConfig
    from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear

    config = ModelParallelConfig(tensor_model_parallel_size=world, sequence_parallel=sequence_parallel,
                                 use_cpu_initialization=True)
    init = torch.nn.init.zeros_   # overwritten below with this rank's slices
    made = {"fc1": lambda: ColumnParallelLinear(HIDDEN, FFN, config=config, init_method=init, bias=True,
                                                gather_output=False, **fc1),
            "fc2": lambda: RowParallelLinear(FFN, HIDDEN, config=config, init_method=init, bias=True,
                                             input_is_parallel=True, skip_bias_add=False),
            "head": lambda: ColumnParallelLinear(HIDDEN, VOCAB, config=config, init_method=init, bias=False,
                                                 gather_output=False),
            "norm": lambda: torch.nn.LayerNorm(HIDDEN)}
    model = torch.nn.ModuleDict({n: made[n]() for n in names})
    rank = parallel_state.get_tensor_model_parallel_rank()
    with torch.no_grad():
        for name, p in model.named_parameters():
            full = full_weights()[name]
            dim = getattr(p, "partition_dim", 0) if getattr(p, "tensor_model_parallel", False) else None
            p.copy_(full if dim is None else full.chunk(world, dim)[rank])
    return model


def make_inputs(rank: int, world: int) -> dict:
    return {"model": layers(world, ("fc1", "fc2")), "x": cg.replicated(activations().requires_grad_())}


def make_inputs_delayed_reduce(rank: int, world: int) -> dict:
    return {"model": layers(world, ("fc1", "fc2"), disable_grad_reduce=True), "x": cg.replicated(activations().requires_grad_())}


def mlp(rank: int, world: int, model, x: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def]
    h, _ = model["fc1"](x)
    y, _ = model["fc2"](torch.nn.functional.gelu(h))
    return (y ** 2).sum()


def make_sp_inputs(rank: int, world: int) -> dict:
    model = layers(world, ("fc1", "fc2", "norm"), sequence_parallel=True)
    for p in model["norm"].parameters():
        setattr(p, "sequence_parallel", True)   # as Megatron's own norms mark theirs
    return {"model": model, "x": activations().chunk(world, 0)[rank].clone().requires_grad_()}


def make_sp_inputs_unmarked_norm(rank: int, world: int) -> dict:
    model = layers(world, ("fc1", "fc2", "norm"), sequence_parallel=True)
    return {"model": model, "x": activations().chunk(world, 0)[rank].clone().requires_grad_()}


def sp_mlp(rank: int, world: int, model, x: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def]
    h, _ = model["fc1"](x)                      # all-gathers the sequence
    y, _ = model["fc2"](torch.nn.functional.gelu(h))   # reduce-scatters it back: this rank's rows
    return (model["norm"](y) ** 2).sum()


def make_vocab_inputs(rank: int, world: int) -> dict:
    return {"model": layers(world, ("head",)), "x": cg.replicated(activations().requires_grad_())}


def vocab_loss(rank: int, world: int, model, x: torch.Tensor) -> torch.Tensor:  # type: ignore[no-untyped-def]
    from megatron.core.tensor_parallel import vocab_parallel_cross_entropy

    logits, _ = model["head"](x)                # this rank's slice of the vocabulary
    return vocab_parallel_cross_entropy(logits, targets()).mean()

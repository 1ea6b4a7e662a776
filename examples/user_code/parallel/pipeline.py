"""Pipeline parallelism with torch.distributed.pipelining (issue 51, torch >= 2.6): a model
of four tanh layers cut into W stages (rank r holds layers 4r/W .. 4(r+1)/W - 1), run
by ScheduleGPipe over 4 microbatches with an MSE loss (a mean per microbatch). The last
stage's losses are the only loss: the step returns their mean (the full batch's MSE, the
microbatches being equal) there and 0 on the other stages, so the global loss is the
batch's MSE and each stage's parameters have the gradient one process computes for
them on the whole model (python/tests/usercode_parallel.py).

- step: correct (the schedule's scale_grads divides the accumulated gradients by the
  microbatch count, as the mean over the batch wants).
- step, inputs make_inputs_unscaled: the schedule made with scale_grads=False: each
  microbatch's mean loss adds its whole gradient, 4 (the microbatch count) times the
  truth: "x 4: a constant factor".
"""

import torch
import torch.nn.functional as F

D, BATCH, LAYERS, MICROBATCHES = 3, 8, 4, 4


def model() -> torch.nn.Sequential:
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(D, D), torch.nn.Tanh()]
    return torch.nn.Sequential(*layers).double()


def data() -> torch.Tensor:
    return torch.randn(BATCH, D, dtype=torch.float64, generator=torch.Generator().manual_seed(8))


def target() -> torch.Tensor:
    return torch.randn(BATCH, D, dtype=torch.float64, generator=torch.Generator().manual_seed(9))


def stage_layers(rank: int, world: int) -> range:
    per = LAYERS // world
    return range(rank * per, (rank + 1) * per)


def _inputs(rank: int, world: int, scale_grads: bool) -> dict:
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

    full = model()
    mine = torch.nn.Sequential(*[full[2 * i + j] for i in stage_layers(rank, world) for j in (0, 1)])
    stage = PipelineStage(mine, rank, world, torch.device("cpu"))
    schedule = ScheduleGPipe(stage, MICROBATCHES, loss_fn=F.mse_loss, scale_grads=scale_grads)
    return {"stage": mine, "schedule": schedule, "x": data(), "y": target()}


def make_inputs(rank: int, world: int) -> dict:
    return _inputs(rank, world, scale_grads=True)


def make_inputs_unscaled(rank: int, world: int) -> dict:
    return _inputs(rank, world, scale_grads=False)


def step(rank: int, world: int, stage: torch.nn.Module, schedule: object, x: torch.Tensor,
         y: torch.Tensor) -> torch.Tensor:
    losses: list = []
    if rank == 0:
        schedule.step(x)  # type: ignore[attr-defined]
    elif rank == world - 1:
        schedule.step(target=y, losses=losses)  # type: ignore[attr-defined]
    else:
        schedule.step()  # type: ignore[attr-defined]
    return torch.stack(losses).mean() if losses else torch.zeros((), dtype=torch.float64)

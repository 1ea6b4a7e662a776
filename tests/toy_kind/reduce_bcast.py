"""reduce_bcast on real PyTorch ranks: the toy kind of tests/toy_kind
(reduce_bcast.c says what it is), carried out as the API's own reduce to rank
0 and broadcast from it, so each API's autograd decides its gradient.
tests/e2e/toy_kind.sh names this file in COLLGRAD_KINDS."""

from collgrad_torch.runner.kinds import step

NAME = "reduce_bcast"
USES = ("reduce", "broadcast")


def run(api, call, x):
    y = api.reduce(step(call, "reduce"), x)
    return api.broadcast(step(call, "broadcast"), y)

"""User code that raises, for usercode_findings (issue 60 item 1): each kind
of error a Python body meets, raised by fn, by make_inputs or by a step. The
functions are made per kind below: fn_TypeError, inputs_TypeError,
step_TypeError, ..."""

from typing import Any, Callable, Dict

import torch


def _type_error(x: torch.Tensor) -> Any:
    return (x + None).sum()  # type: ignore[operator]


def _attribute_error(x: torch.Tensor) -> Any:
    return x.no_such_attribute  # type: ignore[attr-defined]


def _key_error(x: torch.Tensor) -> Any:
    return {"w": x}["weight"]


def _index_error(x: torch.Tensor) -> Any:
    return [x][3]


def _assertion_error(x: torch.Tensor) -> Any:
    assert x.numel() == 0, "the user's own assertion"
    return x


def _not_implemented_error(x: torch.Tensor) -> Any:
    raise NotImplementedError("this layer has no backward for sequence parallelism")


def _shape_error(x: torch.Tensor) -> Any:
    return (x + torch.ones(5, dtype=x.dtype)).sum()  # torch's RuntimeError: sizes 3 and 5


RAISERS: Dict[str, Callable[[torch.Tensor], Any]] = {
    "TypeError": _type_error, "AttributeError": _attribute_error, "KeyError": _key_error,
    "IndexError": _index_error, "AssertionError": _assertion_error,
    "NotImplementedError": _not_implemented_error, "RuntimeError": _shape_error}


def make_inputs(rank: int, world: int) -> dict:
    return {"x": (torch.arange(3, dtype=torch.float64) + rank).requires_grad_()}


def _made(kind: str, raiser: Callable[[torch.Tensor], Any]) -> None:
    def fn(rank: int, world: int, x: torch.Tensor) -> Any:
        return raiser(x)

    def inputs(rank: int, world: int) -> dict:
        x = torch.arange(3, dtype=torch.float64).requires_grad_()
        return {"x": raiser(x)}

    def step(rank: int, world: int, x: torch.Tensor) -> Any:
        loss = (x * x).sum()
        loss.backward()
        return raiser(x)

    for what, f in (("fn", fn), ("inputs", inputs), ("step", step)):
        f.__name__ = f.__qualname__ = f"{what}_{kind}"
        globals()[f.__name__] = f


for _kind, _raiser in RAISERS.items():
    _made(_kind, _raiser)


# the signature mistakes a newcomer makes (TypeError inside the check's own call of them)
def no_rank_world(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum()


def square(rank: int, world: int, x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum()


def make_other_name(rank: int, world: int) -> dict:
    return {"y": torch.ones(3, dtype=torch.float64, requires_grad=True)}


def make_one_argument(world: int) -> dict:
    return {"x": torch.ones(3, dtype=torch.float64, requires_grad=True)}

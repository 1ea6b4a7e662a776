"""The APIs a run can use, by name (pytorch:NAME on the command line)."""

from typing import Dict, Type

from . import comm
from .api_c10d import C10dApi
from .api_diffdist import DiffdistApi
from .api_funcol import FuncolApi
from .api_gatherlayer import GatherLayerApi
from .api_listassign import ListAssignApi
from .api_nn import NnApi
from .api_rpc import RpcApi

APIS: Dict[str, Type[comm.Api]] = {"nn": NnApi, "c10d": C10dApi, "funcol": FuncolApi,
                                   "gatherlayer": GatherLayerApi, "diffdist": DiffdistApi,
                                   "rpc": RpcApi, "listassign": ListAssignApi}


def make(name: str, group, backend: str) -> comm.Api:
    """The API `name` over `group`; Unavailable when this torch lacks it,
    KeyError for a name that is none of APIS."""
    return APIS[name](group, backend)

"""Which exceptions are the transport's (exit class 3, infrastructure) and
which the user's code's (2): told by type, never by words in a message."""


def raised_by_transport(e: BaseException) -> bool:
    """An error of the process group's own transport (a peer that went away,
    a collective or the store that timed out), not of the code that called
    it, told by its type, never by words in its message: torch 2.x raises
    DistError and its kinds (DistBackendError, DistNetworkError,
    DistStoreError); torch 1.13's gloo, c10d store and NCCL raise a plain
    RuntimeError whose message opens with the C++ source location that threw
    it, under gloo/transport/, c10d/ or the NCCL backend."""
    import torch.distributed as dist

    dist_error = getattr(dist, "DistError", None)
    if dist_error is not None and isinstance(e, dist_error):
        return True
    if type(e) is not RuntimeError:
        return False
    text = str(e)
    origin = text[1:text.find("]")] if text.startswith("[") and "]" in text else ""
    origin = origin.replace("enforce fail at ", "")
    return any(place in origin for place in _TRANSPORT_SOURCES)


# where torch 1.13's transport errors are thrown (the location that opens the message)
_TRANSPORT_SOURCES = ("gloo/transport/", "distributed/c10d/TCPStore", "distributed/c10d/FileStore",
                      "distributed/c10d/ProcessGroupNCCL", "distributed/c10d/NCCLUtils")

"""Where a hung process waits, from the Python stacks faulthandler dumped
(both checks send SIGUSR1 to a process that stopped moving): the library call
its main thread waits in and the user's line that made it. No torch here:
the JAX check uses it too."""

from typing import Sequence, Tuple


def waiting_call(stack: str, main: str = "collgrad_torch/checker/worker.py",
                 library: str = "torch/distributed",
                 own: Sequence[str] = ("/torch/", "collgrad_torch/")) -> str:
    """From one process's faulthandler dump: the call under `library` its main
    thread (the thread whose stack passes through `main`) waits in, and the
    first frame outside the libraries and the check (`own`): the user's line."""
    blocks = stack.split("\n\n")
    thread = next((b for b in blocks if main in b), stack)
    lib_call, user = _frames(thread, library, own)
    if not user:  # the main thread waits in the library: a thread of the user's (a host callback) may be why
        others = [_frames(b, library, own)[1] for b in blocks if b is not thread]
        elsewhere = next((u for u in others if u), "")
        if elsewhere:
            return (f"waits in {lib_call}; " if lib_call else "") + f"another thread is at {elsewhere}"
    if lib_call and user:
        return f"waits in {lib_call}, called from {user}"
    if user:
        return f"is at {user}"
    return f"waits in {lib_call}, outside the user's code" if lib_call else "is outside the user's code"


def _frames(thread: str, library: str, own: Sequence[str]) -> Tuple[str, str]:
    """(the most recent call under library, the most recent frame outside own) of one thread's dump."""
    frames = [ln.strip() for ln in thread.splitlines() if ln.strip().startswith("File ")]
    lib_call = user = ""
    for fr in frames:  # most recent first
        try:
            path = fr.split('"')[1]
            line = fr.split("line ")[1].split()[0]
            func = fr.rsplit(" in ", 1)[1]
        except IndexError:
            continue
        if not lib_call and library in path:
            lib_call = func
        if not user and not any(o in path for o in own):
            user = f"{path}:{line} ({func})"
    return lib_call, user

"""A signal that ends a run of checks: SIGTERM (what a CI runner sends on a
timeout or a cancel) and SIGINT (Ctrl-C).

Inside `raising()`, either raises Interrupted in the main thread, wherever it
is (watching the ranks, judging, writing): the `finally` blocks on its way up
end every process the check started (World.run, WarmWorld.run, the Warm
context, the JAX device process) and remove their directories; the command
line then writes its reports, the check that was running an error
"interrupted by signal N (NAME) ...", the ones not started "not run:
interrupted by ...", and exits 3, as the C tool does on a signal. No torch
here: the JAX check's command line uses it too.
"""

import contextlib
import signal
from types import FrameType
from typing import Any, Dict, Iterator, Optional

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(BaseException):
    """A BaseException, as KeyboardInterrupt is: no `except Exception` in the
    user's code or ours swallows it on its way out."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    def words(self) -> str:
        try:
            name = signal.Signals(self.signum).name
        except ValueError:
            name = "?"
        return f"interrupted by signal {self.signum} ({name})"


def _raise(signum: int, frame: Optional[FrameType]) -> None:
    for s in SIGNALS:  # a second signal must not cut the clean-up the first one started
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(signum)


@contextlib.contextmanager
def raising() -> Iterator[None]:
    """SIGTERM and SIGINT raise Interrupted while inside; the handlers that
    were there before come back on the way out."""
    before: Dict[int, Any] = {}
    try:
        for s in SIGNALS:
            before[s] = signal.signal(s, _raise)
    except ValueError:  # not the main thread: signals cannot be caught here
        pass
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)

"""How a run ended, as its exit status says: one class for the C tool, the IR
runner and the user-code check alike (the C tool's cg_exit, lang/exit_class.h).

PASS: every gradient right. FAIL: a check found a wrong gradient. USAGE: the
arguments, the case or the user's code are at fault (the user can fix it).
INFRA: not the user's: a process that could not start, a peer gone, a timeout
of the machine, a library missing."""

from enum import IntEnum


class ExitClass(IntEnum):
    PASS = 0
    FAIL = 1
    USAGE = 2
    INFRA = 3

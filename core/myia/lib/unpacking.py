"""`f(*args)`: a call whose positional arguments come from a tuple (or a list, or an
array's rows), as the parser writes it (myia.parser.calls).

The IR's calls have a fixed number of inputs, and the length of `args` is known only
once inference has typed it; so `call_unpacked` picks, at compile time, the
function below that makes a call of that many arguments (a tuple of functions
indexed by a constant, which specialization resolves to a direct call).  Defaults of
`f` are filled by inference as for any call.
"""

from ..errors import MyiaTypeError
from ..prim import compile_time
from ..prim import ops as P
from .builtins import tuple_concat

#: the most arguments a call may take from a starred tuple
MAX_UNPACKED = 16


@compile_time
def _arity(n):
    if n > MAX_UNPACKED:
        raise MyiaTypeError(f"a call with {n} unpacked arguments: Myia unpacks at most "
                            f"{MAX_UNPACKED}", hint="pass some of the arguments one by one")
    return n


def _call_0(f, a):
    return f()


def _call_1(f, a):
    return f(a[0])


def _call_2(f, a):
    return f(a[0], a[1])


def _call_3(f, a):
    return f(a[0], a[1], a[2])


def _call_4(f, a):
    return f(a[0], a[1], a[2], a[3])


def _call_5(f, a):
    return f(a[0], a[1], a[2], a[3], a[4])


def _call_6(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5])


def _call_7(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6])


def _call_8(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])


def _call_9(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])


def _call_10(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])


def _call_11(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10])


def _call_12(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11])


def _call_13(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
             a[12])


def _call_14(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
             a[12], a[13])


def _call_15(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
             a[12], a[13], a[14])


def _call_16(f, a):
    return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
             a[12], a[13], a[14], a[15])


def call_unpacked(f, args):
    """f(*args), for `args` a tuple made by the parser (`f(a, *rest)`: (a, *rest))."""
    return (_call_0, _call_1, _call_2, _call_3, _call_4, _call_5, _call_6,
            _call_7, _call_8, _call_9, _call_10, _call_11, _call_12, _call_13,
            _call_14, _call_15, _call_16)[
        _arity(P.len_(args))](f, args)


def call_into_rest(f, args, named):
    """f(*args) for `def f(a, b, *rest)` (`named` = 2): rest is args[named:]."""
    return call_unpacked(f, tuple_concat(args[:named], (args[named:],)))

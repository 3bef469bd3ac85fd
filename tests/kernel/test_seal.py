"""Escape attempts (issue 20): what a user types in an ordinary cell (not `%%python`) to
reach the machine, each refused with a located, user-facing error; then the locked
kernel, where every route to `%%python` gives the one LOCKED_MESSAGE.

Each attempt is its own test.  A marker directory holds `secret.txt` (its text must never
appear in any output) and the path `pwned` that a payload would create (it must not
exist afterwards); after each refusal a later cell still computes.  The bulk runs
through one in-process Session (on "vm": the seal is the parser's and the session's,
before any backend); a sample runs through the real kernel, started in a folder of
planted modules (`resource.py`, `runpy.py`, `difflib.py`, ...) that must never run.

Argument objects.  A `%%python` cell can make objects whose methods (`__float__`,
`__index__`, `__array__`, `__hash__`, `__eq__`, `__myia_graph__`, a metaclass's
`__getattr__`...) are the user's Python code, and subclasses of float, int, str, tuple,
dict or ndarray that override their operators.  Named in an ordinary cell (an argument
of a compiled function, a global of a def, a magic's argument, an argument of jvp), such
an object is refused by its class before the compiler hashes, compares, converts or
reads it: "cannot compile `e`: an object of class `Evil`; ...".  Every method of those
classes appends its name to a log file: the log must stay absent.

Annotations are ignored, never evaluated (the def works and the payload does not run);
default values, magic arguments and expressions that call jvp, vjp, hessian or jet are
read by seal.SafeEval, which runs no Python code of the cell.
"""

import os
import re

import pytest

from myia_kernel.magics import LOCKED_MESSAGE
from myia_kernel.session import Session

from .kernel_env import collect_iopub, execute

SECRET_TEXT = "s3cr3t-7781-do-not-show"


# ---- the markers and the session ---------------------------------------------------------


class Markers:
    def __init__(self, root):
        self.root = root
        self.secret = root / "secret.txt"
        self.secret.write_text(SECRET_TEXT)
        self.pwned = root / "pwned"
        self.hits = root / "hits.log"  # what the argument objects' methods write

    def fill(self, code):
        return code.replace("SECRET", repr(str(self.secret))).replace(
            "PWN", repr(str(self.pwned))).replace("HITS", repr(str(self.hits)))

    def check_untouched(self, outputs=()):
        assert not self.pwned.exists(), "a payload ran"
        assert not self.hits.exists(), "a method of an argument object ran: " + \
            self.hits.read_text()
        assert SECRET_TEXT not in repr(outputs), "the secret reached an output"


#: the %%python cell that makes the argument objects (each method logs its name)
OBJECTS = '''%%python
import numpy as _np
def _hit(what):
    with open(HITS, "a") as fh:
        fh.write(what + "\\n")
class Evil:
    def __float__(self): _hit("float"); return 1.0
    def __index__(self): _hit("index"); return 1
    def __array__(self, *a, **k): _hit("array"); return _np.ones(2)
    def __myia_graph__(self): _hit("myia_graph")
    def __myia_graph_for__(self, signature): _hit("myia_graph_for")
    def __myia_header__(self): _hit("myia_header")
    def __hash__(self): _hit("hash"); return 1
    def __eq__(self, other): _hit("eq"); return False
    def __getattr__(self, name): _hit("getattr " + name); raise AttributeError(name)
    def __call__(self, *a): _hit("call"); return 1.0
    def __repr__(self): _hit("repr"); return "Evil()"
    def __dir__(self): _hit("dir"); return ["x"]
    def __array_function__(self, *a, **k): _hit("array_function"); return 1.0
class EF(float):
    def __mul__(self, o): _hit("EF.mul"); return 7.0
    def __float__(self): _hit("EF.float"); return 7.0
    def __hash__(self): _hit("EF.hash"); return 1
class EI(int):
    def __index__(self): _hit("EI.index"); return 3
class EA(_np.ndarray):
    def __array_ufunc__(self, *a, **k): _hit("EA.ufunc"); return 1.0
class TupE(tuple):
    def __iter__(self): _hit("TupE.iter"); return iter([1.0])
class DictE(dict):
    def items(self): _hit("DictE.items"); return [("a", 1.0)]
class StrE(str):
    def __hash__(self): _hit("StrE.hash"); return 1
class Meta(type):
    def __getattr__(cls, name): _hit("Meta.getattr " + name); raise AttributeError(name)
class WithMeta(metaclass=Meta):
    pass
class Fake:  # claims to be Myia's GradFunction
    def __myia_graph__(self): _hit("Fake.myia_graph")
    def __myia_graph_for__(self, signature): _hit("Fake.myia_graph_for")
Fake.__module__, Fake.__name__, Fake.__qualname__ = "myia.api", "GradFunction", "GradFunction"
e, ef, ei, te, de, se, wm, fake = Evil(), EF(1.0), EI(2), TupE((1.0,)), DictE(a=1.0), \\
    StrE("a"), WithMeta(), Fake()
ea = _np.ones(2).view(EA)
objects = _np.array([1.0, ef], dtype=object)
pair = (1.0, ef)
ge = grad(e)  # a transform of a user's callable
import types as _types
um = _types.ModuleType("um")  # a module whose `__getattr__` is the user's code
um.__getattr__ = lambda name: _hit("module getattr " + name)
def uses_default(x, k=ef):
    return x * k
'''

SETUP = [
    "def probe(x):\n    return x * x",
    "def f(x):\n    return x * 2.0",
    "import myia",
    "x = np.ones(2)",
    "h = hessian(f)",
    "df = grad(f)",
]


@pytest.fixture(scope="module")
def markers(tmp_path_factory):
    return Markers(tmp_path_factory.mktemp("seal"))


@pytest.fixture(scope="module")
def session(markers):
    s = Session(backend="vm")
    for code in SETUP + [markers.fill(OBJECTS)]:
        r = s.execute(code)
        assert r.status == "ok", r.error
    if markers.hits.exists():
        markers.hits.unlink()  # (making the objects called __array_finalize__ and such)
    return s


@pytest.fixture(autouse=True)
def _clean_markers(request):
    if "markers" in request.fixturenames:
        m = request.getfixturevalue("markers")
        for p in (m.pwned, m.hits):
            if p.exists():
                p.unlink()


_LOCATION = re.compile(r"^  (Cell \[\d+\], line \d+, column \d+|In the magic's argument, "
                       r"column \d+)$")


def assert_user_facing(err, kind, fragment):
    """A refusal of kind `kind` whose message holds `fragment`, located (the cell or the
    magic's argument, the line, a caret), with no internal traceback."""
    tb = err["traceback"]
    text = "\n".join(tb)
    assert err["ename"] == kind, text
    assert fragment in err["evalue"], text
    assert "internal error" not in text and "Traceback (most recent" not in text, text
    assert not re.search(r'File "/|\.py", line', text), text
    if kind not in ("UsageError", "MyiaBackendError"):  # (about the magic, not a place)
        assert any(_LOCATION.match(line) for line in tb), text
        assert any(re.fullmatch(r"\s+\^+", line) for line in tb), text


def assert_session_works(s):
    r = s.execute("probe(3.0) + f(1.0)")
    assert r.status == "ok" and r.value == 11.0, r.error


# ---- the attempts ------------------------------------------------------------------------


def A(family, name, code, kind, fragment):
    return pytest.param(code, kind, fragment, id=f"{family}-{name}")


SYN, SRC, NAME, TYPE, VALUE, USAGE = ("MyiaSyntaxError", "MyiaSourceError", "MyiaNameError",
                                      "MyiaTypeError", "MyiaValueError", "UsageError")
NOT_SUBSET = "Myia has no equivalent"
IMPORT_ONLY = "a cell imports only numpy, math, scipy.special and myia"
NOT_HERE = "is not available in a Myia cell"
OPEN_UNDEFINED = "name `open` is not defined"
PAYLOAD = "__import__('os').system('touch ' + PWN)"

ATTEMPTS = [
    # files
    A("files", "open", "open(SECRET)", SRC, "cannot compile `open`"),
    A("files", "open-read", "open(SECRET).read()", SYN, "attribute `.read` is not supported"),
    A("files", "open-in-def", "def r(p):\n    return open(p)\nr(SECRET)", SRC,
      "cannot compile `open`"),
    A("files", "pathlib", "import pathlib", SYN, "`import pathlib` " + NOT_HERE),
    A("files", "io", "import io", SYN, "`import io` " + NOT_HERE),
    A("files", "np.load", "np.load(SECRET)", SRC, NOT_SUBSET),
    A("files", "np.save", "np.save(PWN, np.ones(2))", SRC, NOT_SUBSET),
    A("files", "np.loadtxt", "np.loadtxt(SECRET)", SRC, NOT_SUBSET),
    A("files", "np.savetxt", "np.savetxt(PWN, np.ones(2))", SRC, NOT_SUBSET),
    A("files", "np.fromfile", "np.fromfile(SECRET)", SRC, NOT_SUBSET),
    A("files", "np.memmap", "np.memmap(SECRET)", SRC, NOT_SUBSET),
    A("files", "np.genfromtxt", "np.genfromtxt(SECRET)", SRC, NOT_SUBSET),
    A("files", "np.fromregex", "np.fromregex(SECRET, 's', float)", SRC, NOT_SUBSET),
    A("files", "np.lib.format", "np.lib.format.open_memmap(PWN)", SRC, NOT_SUBSET),
    A("files", "np.DataSource", "np.DataSource().open(SECRET)", SYN, "`.open` is not supported"),
    A("files", "np.rec.fromfile", "np.rec.fromfile(SECRET)", SRC, NOT_SUBSET),
    A("files", "tofile", "np.ones(2).tofile(PWN)", SYN, "`.tofile` is not supported"),
    A("files", "tofile-in-def", "def t(a):\n    return a.tofile(PWN)\nt(x)", SYN,
      "`.tofile` is not supported"),
    A("files", "print", "print(SECRET)", SRC, "cannot compile `print`"),
    A("files", "with", "with open(SECRET) as fh:\n    pass", SYN, "top-level `with`"),
    # processes
    A("processes", "import-os", "import os", SYN, IMPORT_ONLY),
    A("processes", "subprocess", "import subprocess", SYN, IMPORT_ONLY),
    A("processes", "from-os-system", "from os import system", SYN, IMPORT_ONLY),
    A("processes", "__import__", PAYLOAD, SYN, "`__import__` " + NOT_HERE),
    A("processes", "os.system", "os.system('touch ' + PWN)", SYN, "`os` " + NOT_HERE),
    A("processes", "pty", "import pty", SYN, IMPORT_ONLY),
    A("processes", "multiprocessing", "import multiprocessing", SYN, IMPORT_ONLY),
    A("processes", "exec", 'exec("open(PWN)")', SRC, "cannot compile `exec`"),
    A("processes", "eval", "eval('1')", SRC, "cannot compile `eval`"),
    A("processes", "compile", "compile('1', 'a', 'eval')", SRC, "cannot compile `compile`"),
    A("processes", "breakpoint", "breakpoint()", SRC, "cannot compile `breakpoint`"),
    A("processes", "input", "input()", SRC, "cannot compile `input`"),
    A("processes", "myia.api.os", "myia.api.os.system('touch ' + PWN)", SRC, NOT_SUBSET),
    A("processes", "np.f2py.os", "np.f2py.os.system('touch ' + PWN)", SRC, NOT_SUBSET),
    A("processes", "raise", "raise SystemExit", SYN, "top-level `raise`"),
    # imports
    A("imports", "from-os-path", "from os import path", SYN, IMPORT_ONLY),
    A("imports", "importlib", "import importlib", SYN, IMPORT_ONLY),
    A("imports", "import-ctypeslib", "import numpy.ctypeslib", SYN,
      "`import numpy.ctypeslib` " + NOT_HERE),
    A("imports", "from-numpy-f2py", "from numpy import f2py", SYN,
      "`import numpy.f2py` " + NOT_HERE),
    A("imports", "from-numpy-ctypeslib-as", "from numpy import ctypeslib as c", SYN,
      "`import numpy.ctypeslib` " + NOT_HERE),
    A("imports", "import-ctypeslib-as", "import numpy.ctypeslib as nc", SYN, IMPORT_ONLY),
    A("imports", "from-numpy-testing", "from numpy import testing", SYN, IMPORT_ONLY),
    A("imports", "numpy.random", "import numpy.random", SYN, IMPORT_ONLY),
    A("imports", "planted", "import planted_module", SYN, IMPORT_ONLY),
    A("imports", "this", "import this", SYN, IMPORT_ONLY),
    A("imports", "relative", "from . import planted_module", SYN, IMPORT_ONLY),
    A("imports", "star", "from math import *", SYN, "`import *` " + NOT_HERE),
    A("imports", "myia.api", "from myia import api", SYN, "`import myia.api` " + NOT_HERE),
    A("imports", "builtins", "import builtins", SYN, IMPORT_ONLY),
    A("imports", "in-def", "def i(a):\n    import os\n    return a\ni(1.0)", SYN, "import"),
    A("imports", "scipy.io", "import scipy.io", SYN, IMPORT_ONLY),
    A("imports", "from-scipy-io", "from scipy import io", SYN, "`import scipy.io` " + NOT_HERE),
    A("imports", "from-scipy-io-loadmat", "from scipy.io import loadmat", SYN, IMPORT_ONLY),
    A("imports", "scipy.io-attribute", "import scipy\nscipy.io.loadmat(SECRET)", SRC,
      NOT_SUBSET),
    # introspection
    A("introspection", "getattr", "getattr(np, 'load')(SECRET)", SRC, "`getattr`"),
    A("introspection", "globals", "globals()", SRC, "cannot compile `globals`"),
    A("introspection", "locals", "locals()", SRC, "cannot compile `locals`"),
    A("introspection", "vars", "vars()", SRC, "cannot compile `vars`"),
    A("introspection", "dir", "dir()", SRC, "cannot compile `dir`"),
    A("introspection", "__class__", "(1.0).__class__", SYN, "dunder attributes"),
    A("introspection", "__subclasses__", "().__class__.__bases__[0].__subclasses__()", SYN,
      "dunder attributes"),
    A("introspection", "__globals__", "f.__globals__", SYN, "dunder attributes"),
    A("introspection", "__code__", "f.__code__", SYN, "dunder attributes"),
    A("introspection", "__builtins__", "__builtins__", SYN, "`__builtins__` " + NOT_HERE),
    A("introspection", "type", "type(1.0)", SRC, "cannot compile `type`"),
    A("introspection", "object", "object", SRC, "cannot compile `object`"),
    A("introspection", "generator", "def gen(a):\n    yield a", SYN, "generators"),
    A("introspection", "gi_frame", "def fr(a):\n    g = (b for b in range(3))\n"
      "    return g.gi_frame\nfr(1.0)", SYN, "`.gi_frame` is not supported"),
    A("introspection", "__self__", "np.sin.__self__", SYN, "dunder attributes"),
    A("introspection", "grad.__globals__", "grad.__globals__", SYN, "dunder attributes"),
    A("introspection", "transform-attribute", "df.fn", SYN, "`.fn` is not supported"),
    A("introspection", "setattr", "setattr(np, 'pi', 3.0)", SRC, "cannot compile `setattr`"),
    A("introspection", "help", "help(np)", TYPE, "cannot compile `help`"),
    A("introspection", "class", "class C:\n    pass", SYN, "top-level `class`"),
    # NumPy's I/O and escape hatches
    A("numpy", "ctypeslib", "np.ctypeslib.load_library('libc', '/lib')", SRC, NOT_SUBSET),
    A("numpy", "ctypeslib-value", "np.ctypeslib", SYN, "cannot be used as a value"),
    A("numpy", "f2py", "np.f2py.run_main([])", SRC, NOT_SUBSET),
    A("numpy", "distutils", "np.distutils", NAME, "has no attribute `distutils`"),
    A("numpy", "testing", "np.testing.assert_equal(1, 1)", SRC, NOT_SUBSET),
    A("numpy", "core", "np._core.multiarray", SYN, "cannot be used as a value"),
    A("numpy", "__config__", "np.__config__", SYN, "dunder attributes"),
    A("numpy", "show_config", "np.show_config()", SRC, NOT_SUBSET),
    A("numpy", "info", "np.info(np)", SRC, NOT_SUBSET),
    A("numpy", "as_strided", "np.lib.stride_tricks.as_strided(x, (10 ** 9,), (8,))", SRC,
      NOT_SUBSET),
    A("numpy", "frombuffer", "np.frombuffer(b'abcdefgh')", SRC, NOT_SUBSET),
    A("numpy", "version", "np.version.version", SYN, "is not part of the subset"),
    # ctypes
    A("ctypes", "import", "import ctypes", SYN, IMPORT_ONLY),
    A("ctypes", "CDLL", "np.ctypeslib.ctypes.CDLL(None)", SRC, NOT_SUBSET),
    A("ctypes", "array.ctypes", "def c(a):\n    return a.ctypes.data\nc(x)", SYN,
      "`.ctypes` is not supported"),
    A("ctypes", "__array_interface__", "x.__array_interface__", SYN, "dunder attributes"),
    # pickling
    A("pickling", "pickle", "import pickle", SYN, IMPORT_ONLY),
    A("pickling", "marshal", "import marshal", SYN, IMPORT_ONLY),
    A("pickling", "dumps", "np.ones(2).dumps()", SYN, "`.dumps` is not supported"),
    A("pickling", "dump", "x.dump(PWN)", SYN, "`.dump` is not supported"),
    A("pickling", "savez", "np.savez(PWN, np.ones(2))", SRC, NOT_SUBSET),
    A("pickling", "allow_pickle", "np.load(SECRET, allow_pickle=True)", SRC, NOT_SUBSET),
    A("pickling", "__reduce__", "x.__reduce__()", SYN, "dunder attributes"),
    # environment
    A("environment", "os.environ", "os.environ", SYN, "`os` " + NOT_HERE),
    A("environment", "sys.argv", "sys.argv", SYN, "`sys` " + NOT_HERE),
    A("environment", "sys.executable", "sys.executable", SYN, "`sys` " + NOT_HERE),
    A("environment", "sys.version", "sys.version", SYN, "`sys` " + NOT_HERE),
    A("environment", "os.name", "os.name", SYN, "`os` " + NOT_HERE),
    A("environment", "os.getcwd", "os.getcwd()", SYN, "`os` " + NOT_HERE),
    A("environment", "np.__path__", "np.__path__", SYN, "dunder attributes"),
    A("environment", "math.__file__", "math.__file__", SYN, "dunder attributes"),
    A("environment", "np.show_runtime", "np.show_runtime()", SRC, NOT_SUBSET),
    A("environment", "np.get_include", "np.get_include()", SRC, NOT_SUBSET),
    A("environment", "np.f2py.os.environ", "np.f2py.os.environ", SYN,
      "is not part of the subset"),
    A("environment", "myia.api.os.environ", "myia.api.os.environ", SYN,
      "is not part of the subset"),
    # default values (read by SafeEval; Python never evaluates them)
    A("defaults", "__import__", f"def d(a={PAYLOAD}):\n    return a", SYN, "`__import__`"),
    A("defaults", "open", "def d(a=open(SECRET).read()):\n    return a", NAME, OPEN_UNDEFINED),
    A("defaults", "keyword-only", "def d(*, k=open(SECRET).read()):\n    return k", NAME,
      OPEN_UNDEFINED),
    A("defaults", "print", "def d(a=print(SECRET)):\n    return a", NAME,
      "name `print` is not defined"),
    A("defaults", "lambda", "def d(a=(lambda: open(PWN, 'w'))()):\n    return a", SYN,
      "a lambda cannot be evaluated here"),
    A("defaults", "comprehension", "def d(a=[c for c in open(SECRET)]):\n    return a", SYN,
      "a comprehension cannot be evaluated here"),
    A("defaults", "getattr", "def d(a=getattr(np, 'load')):\n    return a", NAME,
      "name `getattr` is not defined"),
    A("defaults", "nested", "def o(a):\n    def i(b=open(SECRET).read()):\n        return b\n"
      "    return i()\no(1.0)", SYN, "must be a constant expression"),
    A("defaults", "lambda-default", "la = lambda a=open(SECRET).read(): a", SYN,
      "must be a constant expression"),
    A("defaults", "decorator", "@open(PWN, 'w').write\ndef deco(a):\n    return a", SYN,
      "decorators are not supported"),
    A("defaults", "user-object", "def d(a=e):\n    return a", TYPE, "object of class `Evil`"),
    # magic arguments
    A("magics", "ir", "%ir " + PAYLOAD, SYN, "`__import__` " + NOT_HERE),
    A("magics", "ir-stage-arg", "%ir f parsed " + PAYLOAD, SYN, "`__import__`"),
    A("magics", "ir-typed-open", "%ir f typed open(SECRET).read()", NAME, OPEN_UNDEFINED),
    A("magics", "ir-tofile", "%ir f typed np.ones(2).tofile(PWN)", SYN,
      "the attribute `tofile` cannot be read here"),
    A("magics", "ir-__globals__", "%ir f typed f.__globals__", SYN,
      "the attribute `__globals__` cannot be read here"),
    A("magics", "grad-argument", "%grad f 0 " + PAYLOAD, SYN, "`__import__`"),
    A("magics", "grad-function", "%grad " + PAYLOAD, SYN, "`__import__`"),
    A("magics", "grad-lambda", "%grad f 0 (lambda: open(PWN, 'w'))()", SYN,
      "a lambda cannot be evaluated here"),
    A("magics", "grad-huge-power", "%grad f 0 10**10**10", "MyiaOverflowError",
      "integer overflow: 10 ** 10000000000"),
    A("magics", "grad-python-error", "%grad f 0 int('9' * 5000)", VALUE,
      "ValueError: Exceeds the limit"),
    A("magics", "plot-bound", "%plot f 0 " + PAYLOAD, SYN, "`__import__`"),
    A("magics", "plot-open", "%plot f -1 open(SECRET).read()", NAME, OPEN_UNDEFINED),
    A("magics", "plot-function", "%plot open -1 1", NAME, OPEN_UNDEFINED),
    A("magics", "plot-derivatives", "%plot f --derivatives 2 -1 [c for c in open(SECRET)]",
      SYN, "a comprehension cannot be evaluated here"),
    A("magics", "time", "%time " + PAYLOAD, SYN, "`.system` is not supported"),
    A("magics", "time-open", "%time open(SECRET).read()", SYN, "`.read` is not supported"),
    A("magics", "time-huge-power", "%time 10 ** 10 ** 10", "MyiaOverflowError",
      "integer overflow"),
    A("magics", "timeit", "%timeit " + PAYLOAD, SYN, "`.system` is not supported"),
    A("magics", "timeit-vjp", "%timeit -n 1 -r 1 (vjp, open(SECRET).read())[1]", NAME,
      OPEN_UNDEFINED),
    A("magics", "type", "%type open(SECRET).read()", SYN, "`.read` is not supported"),
    A("magics", "type-jvp", "%type (jvp, open(SECRET).read())[1]", NAME, OPEN_UNDEFINED),
    A("magics", "jvp", "%jvp f open(SECRET)", USAGE, "Line magic function `%jvp` not found"),
    A("magics", "backend", "%backend " + PAYLOAD, "MyiaBackendError", "there is no backend"),
    A("magics", "help", "%help " + PAYLOAD, USAGE, "there is no magic"),
    # expressions that call jvp, vjp, hessian, jet (read by SafeEval)
    A("transforms", "jvp-open", "(jvp, open(SECRET).read())[1]", NAME, OPEN_UNDEFINED),
    A("transforms", "vjp-system", f"(vjp, {PAYLOAD})", SYN, "`__import__`"),
    A("transforms", "hessian-open", "(hessian, open(SECRET).read())[1]", NAME, OPEN_UNDEFINED),
    A("transforms", "jet-open", "(jet, open(SECRET).read())[1]", NAME, OPEN_UNDEFINED),
    A("transforms", "hessian-value", "(h, open(SECRET).read())[1]", NAME, OPEN_UNDEFINED),
    # a lambda given to a transform is made (never called by Python) and compiled
    A("transforms", "jvp-lambda", "jvp(lambda a: open(SECRET), (1.0,), (1.0,))", SRC,
      "cannot compile `open`"),
    A("transforms", "jvp-lambda-default", "jvp(lambda a, k=open(SECRET).read(): a, (1.0,),"
      " (1.0,))", SYN, "a lambda's default values must be constants here"),
    A("transforms", "jvp-lambda-object", "jvp(lambda a: e(a), (1.0,), (1.0,))", TYPE,
      "object of class `Evil`"),
    A("transforms", "hessian-lambda-load", "hessian(lambda a: np.load(SECRET))(1.0)", SRC,
      "cannot compile `np.load`"),
    A("transforms", "jacfwd-open", "(jacfwd, open(SECRET).read())[1]", NAME, OPEN_UNDEFINED),
    A("transforms", "jacrev-lambda-load", "jacrev(lambda a: np.load(SECRET))(1.0)", SRC,
      "cannot compile `np.load`"),
    # anywhere else Python could call it (a key of max): refused
    A("transforms", "max-key-lambda", "(jvp, max([1.0, 2.0], key=lambda a: open(PWN, 'w')))",
      SYN, "a lambda cannot be evaluated here"),
    A("transforms", "jvp-second-lambda", "jvp(f, (lambda: open(PWN, 'w'))(), (1.0,))", SYN,
      "a lambda cannot be evaluated here"),
    A("transforms", "jvp-np.load", "jvp(np.load, (SECRET,), (1.0,))", SYN,
      "`np.load` is not part of the subset"),
    A("transforms", "vjp-backpropagator", "vjp(f, 1.0)[1](open(SECRET).read())", NAME,
      OPEN_UNDEFINED),
    A("transforms", "hessian-getattr", "hessian(f)(getattr(np, 'load'))", NAME,
      "name `getattr` is not defined"),
    A("transforms", "jet-open-call", "jet(f, order=2)(open(SECRET))", NAME, OPEN_UNDEFINED),
    A("transforms", "jvp-__class__", "jvp(f, (1.0,), (1.0,))[0].__class__", SYN,
      "the attribute `__class__` cannot be read here"),
    A("transforms", "jvp-attribute", "h.fn", SYN, "the attribute `fn` cannot be read here"),
    A("transforms", "jvp-f-string", 'jvp(f, (f"{open(SECRET).read()}",), (1.0,))', SYN,
      "an f-string cannot be evaluated here"),
    A("transforms", "jvp-walrus", "jvp(f, ((y := open(SECRET)),), (1.0,))", SYN,
      "`:=` cannot be evaluated here"),
    A("transforms", "jvp-tofile", "jvp(f, (x.tofile(PWN),), (1.0,))", SYN,
      "the attribute `tofile` cannot be read here"),
    A("transforms", "jvp-ctypes", "jvp(f, (x.ctypes,), (1.0,))", SYN,
      "the attribute `ctypes` cannot be read here"),
    A("transforms", "jvp-testing", "jvp(np.testing.assert_equal, (1.0,), (1.0,))", SYN,
      "module `numpy.testing` is not part of the subset"),
    A("transforms", "jvp-huge-power", "jvp(f, (10 ** 10 ** 10,), (1.0,))",
      "MyiaOverflowError", "integer overflow"),
    A("transforms", "jvp-huge-range", "jvp(f, (sum(range(10 ** 12)),), (1.0,))", VALUE,
      "is too long to use here"),
    A("transforms", "jvp-huge-string", "jvp(f, ('a' * 10 ** 12,), (1.0,))", VALUE,
      "too large to build here"),
    A("transforms", "jvp-bad-keyword", "jvp(f, **{'a': 1.0})", TYPE,
      "unexpected keyword argument"),
    # argument objects (made by the %%python cell OBJECTS): refused before any use
    A("objects", "call", "f(e)", TYPE, "cannot compile `e`: an object of class `Evil`"),
    A("objects", "float-subclass", "f(ef)", TYPE, "object of class `EF`"),
    A("objects", "int-subclass", "f(ei)", TYPE, "object of class `EI`"),
    A("objects", "ndarray-subclass", "f(ea)", TYPE, "object of class `EA`"),
    A("objects", "object-array", "f(objects)", TYPE, "an array of Python objects"),
    A("objects", "in-a-tuple", "f(pair)", TYPE, "`pair`: it holds an object of class `EF`"),
    A("objects", "tuple-subclass", "f(te)", TYPE, "object of class `TupE`"),
    A("objects", "dict-subclass", "f(de)", TYPE, "object of class `DictE`"),
    A("objects", "str-subclass", "f(se)", TYPE, "object of class `StrE`"),
    A("objects", "metaclass", "f(wm)", TYPE, "object of class `WithMeta`"),
    A("objects", "fake-myia-class", "fake(1.0)", TYPE, "object of class `GradFunction`"),
    A("objects", "grad", "grad(f)(ef)", TYPE, "object of class `EF`"),
    A("objects", "global-of-def", "def g1(a):\n    return a + e\ng1(1.0)", TYPE,
      "object of class `Evil`"),
    A("objects", "float-of-global", "def g2(a):\n    return float(ef) + a\ng2(1.0)", TYPE,
      "object of class `EF`"),
    A("objects", "range-of-global", "def g3(a):\n    s = a\n    for i in range(ei):\n"
      "        s = s + a\n    return s\ng3(1.0)", TYPE, "object of class `EI`"),
    A("objects", "assign", "y = ea + 1.0", TYPE, "object of class `EA`"),
    A("objects", "attribute", "e.x", TYPE, "object of class `Evil`"),
    A("objects", "grad-magic", "%grad f 0 ef", TYPE, "object of class `EF`"),
    A("objects", "ir-magic", "%ir f typed e", TYPE, "object of class `Evil`"),
    A("objects", "ir-magic-function", "%ir fake", TYPE, "object of class `GradFunction`"),
    A("objects", "plot-bound", "%plot f -1 ef", TYPE, "object of class `EF`"),
    A("objects", "jvp", "jvp(f, (ef,), (1.0,))", TYPE, "object of class `EF`"),
    A("objects", "jvp-function", "jvp(e, (1.0,), (1.0,))", TYPE, "object of class `Evil`"),
    A("objects", "transform-of-object", "ge(1.0)", TYPE, "object of class `Evil`"),
    A("objects", "python-default", "uses_default(1.0)", TYPE, "object of class `EF`"),
    A("objects", "module-__getattr__", "def g4(a):\n    return um.value + a\ng4(1.0)", NAME,
      "module `um` has no attribute `value`"),
    # binding forbidden names
    A("names", "os", "os = 1.0", SYN, "a cell cannot assign `os`"),
    A("names", "__builtins__", "__builtins__ = 1.0", SYN,
      "a cell cannot assign `__builtins__`"),
    A("names", "np", "np = 3.0", SYN, "`np` is the session's own name"),
    A("names", "sys", "sys = np.ones(2)", SYN, "a cell cannot assign `sys`"),
    A("names", "def-os", "def os(a):\n    return a", SYN, "a cell cannot define `os`"),
    A("names", "import-as-sys", "import numpy as sys", SYN, "a cell cannot import `sys`"),
    A("names", "from-as-builtins", "from math import sin as builtins", SYN,
      "a cell cannot import `builtins`"),
    A("names", "unpacking", "[a, [b, subprocess]] = 1.0, (2.0, 3.0)", SYN,
      "a cell cannot assign `subprocess`"),
    A("names", "__name__", "__name__ = 'x'", SYN, "a cell cannot assign `__name__`"),
    A("names", "wrapper", "__cell_expr__ = 1.0", SYN, "a cell cannot assign `__cell_expr__`"),
    A("names", "walrus", "(__builtins__ := 1.0)", SYN, "`__builtins__` " + NOT_HERE),
    A("names", "local-os", "def sh(a):\n    os = a\n    return os\nsh(1.0)", SYN,
      "`os` " + NOT_HERE),
    A("names", "math", "math = 3.0", SYN, "`math` is the session's own name"),
    A("names", "jvp", "jvp = 1.0", SYN, "`jvp` is the session's own name"),
    A("names", "del", "del np", SYN, "top-level `delete`"),
    A("names", "global", "global np", SYN, "top-level `global`"),
    # NumPy's files and pickles bound by an import (issue 32), then called through a
    # Python function that SafeEval would have handed the cell's def
    A("pycalls", "from-numpy-savetxt", "from numpy import savetxt as T", SYN,
      "`numpy.savetxt` is not part of the subset"),
    A("pycalls", "from-numpy-load", "from numpy import load as LD", SYN,
      "`numpy.load` is not part of the subset"),
    A("pycalls", "from-numpy-loadtxt", "from numpy import loadtxt", SYN,
      "`numpy.loadtxt` is not part of the subset"),
    A("pycalls", "from-numpy-savez", "from numpy import savez", SYN,
      "`numpy.savez` is not part of the subset"),
    A("pycalls", "from-numpy-genfromtxt", "from numpy import genfromtxt", SYN,
      "`numpy.genfromtxt` is not part of the subset"),
    A("pycalls", "from-numpy-fromfile", "from numpy import fromfile", SYN,
      "`numpy.fromfile` is not part of the subset"),
    A("pycalls", "from-numpy-memmap", "from numpy import memmap", SYN,
      "`numpy.memmap` is not part of the subset"),
    A("pycalls", "from-numpy-fromregex", "from numpy import fromregex", SYN,
      "`numpy.fromregex` is not part of the subset"),
    A("pycalls", "from-npyio-DataSource", "from numpy.lib.npyio import DataSource", SYN,
      IMPORT_ONLY),
    A("pycalls", "from-numpy-lib", "from numpy import lib", SYN, IMPORT_ONLY),
    A("pycalls", "attribute-savetxt", "import numpy as n\n(jvp, n.savetxt(PWN, x))", SYN,
      "`n.savetxt` is not part of the subset"),
    A("pycalls", "max-key-def", "(jvp, max([1.0, 2.0], key=probe))", SYN,
      "a function cannot be passed to `max` here"),
    A("pycalls", "max-of-functions", "(jvp, max([(f, 1.0, 2.0)]))", SYN,
      "a function cannot be passed to `max` here"),
    A("pycalls", "min-key-transform", "(jvp, min(1.0, 2.0, key=df))", SYN,
      "a function cannot be passed to `min` here"),
    A("pycalls", "sorted-through-sum", "(jvp, sum([probe], 0.0))", SYN,
      "a function cannot be passed to `sum` here"),
]


def test_there_are_at_least_80_attempts():
    assert len({p.id for p in ATTEMPTS}) == len(ATTEMPTS) >= 80


@pytest.mark.parametrize("code, kind, fragment", ATTEMPTS)
def test_an_escape_attempt_is_refused(session, markers, code, kind, fragment):
    r = session.execute(markers.fill(code))
    assert r.status == "error", r.outputs
    assert_user_facing(r.error, kind, markers.fill(fragment))
    markers.check_untouched(r.outputs)
    assert_session_works(session)
    markers.check_untouched()


ANNOTATIONS = [
    pytest.param("def g(a: open(PWN, 'w').write('x')):\n    return a\ng(1.0)", 1.0,
                 id="argument"),
    pytest.param("def g(a) -> open(PWN, 'w'):\n    return a\ng(2.0)", 2.0, id="return"),
    pytest.param("def g(a):\n    b: open(PWN, 'w') = a\n    return b\ng(3.0)", 3.0,
                 id="local-variable"),
    pytest.param("z: open(PWN, 'w') = 4.0\nz", 4.0, id="cell-variable"),
    pytest.param("def g(*a: open(PWN, 'w')):\n    return 5.0\ng()", 5.0, id="varargs"),
    pytest.param("def g(a):\n    def i(b: open(PWN, 'w')) -> open(PWN, 'w'):\n"
                 "        return b\n    return i(a)\ng(6.0)", 6.0, id="nested-def"),
]


@pytest.mark.parametrize("code, value", ANNOTATIONS)
def test_annotations_are_never_evaluated(session, markers, code, value):
    r = session.execute(markers.fill(code))
    assert r.status == "ok" and r.value == value, r.error
    markers.check_untouched(r.outputs)


@pytest.mark.parametrize("code, value", [
    ("jvp(f, (1.0,), (1.0,))", (2.0, 2.0)),
    ("vjp(f, 2.0)[1](1.0)", (2.0,)),  # a tuple that holds a function can be indexed
    ("jvp(f, (2 ** 10,), (1.0,))", (2048.0, 2.0)),
    ("jvp(f, (float(len(range(4))),), (1.0,))", (8.0, 2.0)),
    ("jvp(lambda a: a * a, (3.0,), (1.0,))", (9.0, 6.0)),
    ("hessian(lambda a: a ** 3)(2.0)", 12.0),
    ("def dflt(a=np.ones(2) * 3.0):\n    return a\ndflt()[0]", 3.0),
    ("import scipy.special\nscipy.special.xlogy(0.0, 0.0)", 0.0),
    ("from scipy.special import expit\ndef ex(a):\n    return expit(a)\nex(0.0)", 0.5),
    ("from scipy import special\ngrad(special.expit)(0.0)", 0.25),
])
def test_what_the_seal_reads_still_works(session, code, value):
    r = session.execute(code)
    assert r.status == "ok" and r.value == value, r.error


# ---- help and completion: no way around the seal -----------------------------------------


@pytest.mark.parametrize("name", ["np.f2py", "np.ctypeslib", "np.f2py.sys.executable",
                                  "np.lib.format.os", "__builtins__", "sys", "os.environ",
                                  "np.__config__", "myia.api.os"])
def test_help_shows_nothing_outside_the_subset(session, name):
    assert session.inspect(name) is None
    r = session.execute(f"{name}?")
    assert r.status == "ok" and r.payload[0]["data"]["text/plain"] == \
        f"Object `{name}` not found."


@pytest.mark.parametrize("code", ["np.f2py.", "np.ctypeslib.", "np.testing.", "np.lib.",
                                  "__builtins__.", "sys.", "np.f2py.os.", "myia.api.", "e.",
                                  "ef."])
def test_completion_lists_nothing_outside_the_subset(session, markers, code):
    matches, _, _ = session.complete(code)
    assert matches == []
    markers.check_untouched()


def test_help_on_an_argument_object_runs_none_of_its_code(session, markers):
    text = session.inspect("e", detail=1)
    assert text.startswith("Type:      Evil (a Python object)")
    assert "compiled code does not take it" in text
    assert "ef: EF (a Python object)" in session.execute("%who").text()
    markers.check_untouched()


# ---- the real kernel ---------------------------------------------------------------------

#: a sample of the attempts above, through jupyter_client
KERNEL_SAMPLE = ["files-open-read", "files-np.load", "processes-__import__", "imports-this",
                 "imports-planted", "introspection-__subclasses__", "numpy-ctypeslib",
                 "environment-sys.executable", "defaults-open", "magics-ir",
                 "magics-time", "transforms-jvp-open", "transforms-vjp-system",
                 "names-__builtins__", "pycalls-from-numpy-savetxt", "pycalls-max-key-def"]
#: modules the kernel imports while it starts or later (lazily): planted in its folder
PLANTED = ["runpy", "resource", "difflib", "graphviz", "matplotlib", "scipy",
           "planted_module", "this"]


def _start(kernel_name, cwd):
    from jupyter_client.manager import start_new_kernel

    return start_new_kernel(kernel_name=kernel_name, startup_timeout=120,
                            env=dict(os.environ), cwd=str(cwd))


@pytest.fixture(scope="module")
def kernel_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("kernel-seal")
    markers = Markers(root)
    for name in PLANTED:  # each would leave a file named after it
        (root / f"{name}.py").write_text(f"open({str(root / ('ran-' + name))!r}, 'w')\n")
    return markers


def _planted_that_ran(root):
    return sorted(p.name for p in root.iterdir() if p.name.startswith("ran-"))


def test_a_sample_of_attempts_through_the_kernel(kernel_folder):
    m = kernel_folder
    by_id = {p.id: p.values for p in ATTEMPTS}
    km, kc = _start("myia", m.root)
    try:
        for code in SETUP:
            assert execute(kc, code)[0]["status"] == "ok"
        for attempt in KERNEL_SAMPLE:
            code, kind, fragment = by_id[attempt]
            reply, outputs = execute(kc, m.fill(code))
            assert reply["status"] == "error", attempt
            (err,) = [o["content"] for o in outputs if o["msg_type"] == "error"]
            assert_user_facing(err, kind, m.fill(fragment))
            assert reply["ename"] == kind and reply["evalue"] == err["evalue"]
            m.check_untouched(outputs)
        # user_expressions are Python in IPython: this kernel evaluates none
        msg_id = kc.execute("probe(2.0)",
                            user_expressions={"s": m.fill("open(SECRET).read()")})
        reply = kc.get_shell_msg(timeout=60)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["user_expressions"] == {}
        m.check_untouched(collect_iopub(kc, msg_id))
        # completion and inspection
        assert kc.complete("np.f2py.", reply=True, timeout=30)["content"]["matches"] == []
        assert not kc.inspect("np.ctypeslib", reply=True, timeout=30)["content"]["found"]
        # np.dot binds BLAS (scipy), %plot imports matplotlib, %ir graphviz, %time
        # resource, a name error difflib: the installed ones, not the planted ones
        for code in ["def mm(a):\n    return np.dot(a, a)\nmm(np.ones((2, 2)))",
                     "%plot probe -1 1", "%ir probe", "%time probe(1.0)"]:
            assert execute(kc, code)[0]["status"] == "ok", code
        assert execute(kc, "nope(1.0)")[0]["evalue"] == "name `nope` is not defined"
        # (not locked: %%python finds the folder's modules, after the installed ones)
        reply, outputs = execute(kc, "%%python\nimport os, sys\nsys.path[-1] == os.getcwd()")
        assert [o["content"]["data"]["text/plain"] for o in outputs
                if o["msg_type"] == "execute_result"] == ["True"]
        reply, outputs = execute(kc, "probe(3.0) + f(1.0)")
        assert reply["status"] == "ok"
        assert [o["content"]["data"]["text/plain"] for o in outputs
                if o["msg_type"] == "execute_result"] == ["11.0"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert _planted_that_ran(m.root) == []
    m.check_untouched()


# ---- the locked kernel -------------------------------------------------------------------

#: every way to ask for %%python; none runs its body
PYTHON_ROUTES = [
    pytest.param("%%python\nopen(PWN, 'w')", id="cell-magic"),
    pytest.param("%%python -q\nopen(PWN, 'w')", id="with-an-option"),
    pytest.param("%%python\n", id="empty-body"),
    pytest.param("\n\n%%python\nopen(PWN, 'w')", id="after-blank-lines"),
    pytest.param("  \n\t\n%%python\nopen(PWN, 'w')", id="after-whitespace-lines"),
    pytest.param("# prepare the data\n%%python\nopen(PWN, 'w')", id="after-a-comment"),
    pytest.param("y0 = 1.0\n%%python\nopen(PWN, 'w')", id="after-a-statement"),
    pytest.param("   %%python\nopen(PWN, 'w')", id="indented"),
    pytest.param("%%PYTHON\nopen(PWN, 'w')", id="upper-case"),
    pytest.param("%%Python\nopen(PWN, 'w')", id="mixed-case"),
    pytest.param("%% python\nopen(PWN, 'w')", id="space-after-percents"),
    pytest.param("%python open(PWN, 'w')", id="line-magic"),
    pytest.param("%time\n%%python\nopen(PWN, 'w')", id="below-time"),
    pytest.param("%%time\n%%python\nopen(PWN, 'w')", id="wrapped-in-time"),
]


@pytest.fixture(scope="module")
def locked(markers):
    s = Session(backend="vm", locked=True)
    assert s.execute("def probe(x):\n    return x * x\n\ndef f(x):\n    return x * 2.0"
                     ).status == "ok"
    return s


@pytest.mark.parametrize("code", PYTHON_ROUTES)
def test_the_locked_session_refuses_every_python_route(locked, markers, code):
    r = locked.execute(markers.fill(code))
    assert r.status == "error"
    assert r.error["ename"] == "UsageError" and r.error["evalue"] == LOCKED_MESSAGE
    markers.check_untouched(r.outputs)
    assert "y0" not in locked.namespace  # nothing of the cell ran
    assert_session_works(locked)


def test_help_on_the_python_magic_is_not_a_route(locked):
    r = locked.execute("%%python?")
    assert r.status == "ok" and "ordinary Python" in r.payload[0]["data"]["text/plain"]


def test_the_environment_variable_locks_a_session(monkeypatch, markers):
    monkeypatch.setenv("MYIA_LOCKED", "1")
    s = Session(backend="vm")
    r = s.execute(markers.fill("%%python\nopen(PWN, 'w')"))
    assert r.error["evalue"] == LOCKED_MESSAGE
    assert "This session is locked" in s.execute("%help").text()
    markers.check_untouched()


def test_unlocked_a_cell_magic_below_the_first_line_says_so(markers):
    s = Session(backend="vm")
    r = s.execute(markers.fill("# prepare\n%%python\nopen(PWN, 'w')"))
    assert r.error["ename"] == "UsageError"
    assert r.error["evalue"] == ("`%%python` is a cell magic: it must be the first line of "
                                 "the cell (line 2 here)")
    assert s.execute("\n  \n%%python\n1 + 1").value == 2  # after blank lines: it is first
    markers.check_untouched()


def test_the_locked_kernel_refuses_every_python_route(jupyter_env, kernel_folder):
    from myia_kernel.install import install

    install(prefix=str(jupyter_env), name="myia-locked-test", locked=True)
    m = kernel_folder
    km, kc = _start("myia-locked-test", m.root)
    try:
        info = kc.kernel_info(reply=True, timeout=60)["content"]
        assert "This kernel is locked" in info["banner"]
        reply, outputs = execute(kc, "%help")
        assert "This session is locked" in "".join(
            o["content"].get("text", "") for o in outputs)
        for param in PYTHON_ROUTES:
            (code,) = param.values
            reply, outputs = execute(kc, m.fill(code))
            assert reply["status"] == "error", param.id
            assert (reply["ename"], reply["evalue"]) == ("UsageError", LOCKED_MESSAGE)
            assert [o["msg_type"] for o in outputs] == ["error"]
            m.check_untouched(outputs)
        reply, outputs = execute(kc, "def probe(x):\n    return x * x\nprobe(4.0)")
        assert reply["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert _planted_that_ran(m.root) == []


#: the chain of issue 32 (a locked kernel with a memory limit), through jupyter_client:
#: each cell must be refused; none may write a file, read the secret or allocate
LOCKED_CHAIN = [
    ("from numpy import savetxt as T", "MyiaSyntaxError", "`numpy.savetxt` is not part"),
    ("from numpy import load as LD", "MyiaSyntaxError", "`numpy.load` is not part"),
    ("(jvp, max([(np.sin, PWN, x, '%s')], key=call3))", "MyiaSyntaxError",
     "a function cannot be passed to `max` here"),
    ("(jvp, max([1.0, 2.0], key=call3))", "MyiaSyntaxError",
     "a function cannot be passed to `max` here"),
    ("(jvp, np.ones(2**28))[1]", "MyiaMemoryError", "built before the program runs"),
    ("%grad probe 0 np.ones(3 * 10**9)", "MyiaMemoryError", "built before the program runs"),
    ("(jvp, sum([[1] * 3000] * 3000, []))[0]", "MyiaSyntaxError", "`sum` of sequences"),
    ("%%python\nopen(PWN, 'w')", "UsageError", LOCKED_MESSAGE),
]


def test_the_chain_of_issue_32_through_a_locked_kernel(tmp_path):
    from .kernel_env import setup_jupyter_env

    setup_jupyter_env()
    m = Markers(tmp_path)
    env = dict(os.environ, MYIA_LOCKED="1", MYIA_MEMORY_LIMIT="1GiB")
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="myia", startup_timeout=120, env=env,
                              cwd=str(tmp_path))
    try:
        for code in ["def probe(x):\n    return x * x", "x = np.ones(2)",
                     "def call3(p):\n    return p[0](p[1], p[2], p[3])"]:
            assert execute(kc, code)[0]["status"] == "ok", code
        for code, kind, fragment in LOCKED_CHAIN:
            reply, outputs = execute(kc, m.fill(code))
            assert reply["status"] == "error", code
            assert reply["ename"] == kind and fragment in reply["evalue"], (code, reply)
            m.check_untouched(outputs)
        reply, outputs = execute(kc, "probe(3.0)")
        assert [o["content"]["data"]["text/plain"] for o in outputs
                if o["msg_type"] == "execute_result"] == ["9.0"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    m.check_untouched()

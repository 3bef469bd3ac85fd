"""The public API: `compile`, `ir` (and, from myia.ad, the derivative functions).

Errors about the user's program leave here without the compiler's own traceback:
a `MyiaError` says what, where and what to do; the stack of the compiler would only
hide that.
"""

import collections
import functools
import os
import weakref

import numpy as np

from . import progress
from .abstract import AArray, AScalar, ATuple, abstract_of
from .ad import check_argnums, grad_graph, reverse, vjp_apply_graph
from .ad.forward import jvp_graph, uses_forward_mode
from .ad.reverse import not_J_readable
from .ad.taylor import jet_entry_graph
from .ad.transforms import derived_transform, is_data_signature
from .arguments import internal_value, structured_like
from .backend import BACKENDS
from .errors import MyiaError, MyiaGradError, MyiaTypeError, MyiaValueError
from .infer import tangent
from .ir import manage
from .ir.protocol import is_myia_class
from .opt.pass_manager import recursive_graphs
from .parser.programs import header, to_graph
from .pipeline import Pipeline, bind_keywords, optimized_for, specialized_for
from .prim import ops as P
from .static_args import StaticBound, split_static, static_positions


def user_facing(fn):
    """Re-raise MyiaErrors from `fn` without the compiler's internal frames."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MyiaError as e:
            e.__traceback__ = None
            raise e from None

    return wrapper


def default_backend():
    """The backend `compile` uses when none is given: $MYIA_BACKEND, else "llvm"."""
    return os.environ.get("MYIA_BACKEND", "llvm")


# os.environ's own dict (bytes on POSIX): a call of a compiled function reads
# $MYIA_BACKEND there without encoding the name (a tenth of a microsecond)
_ENVIRON = getattr(os.environ, "_data", None)
_BACKEND_KEY = b"MYIA_BACKEND"
_environ_get = _ENVIRON.get if _ENVIRON is not None else None  # (None: no fast path)
_Signal = None  # the class of the LLVM entry's MISMATCH and DEEP answers


def _backend_marker():
    """An object that changes when $MYIA_BACKEND does (its raw value, or None)."""
    if _ENVIRON is not None:
        return _ENVIRON.get(_BACKEND_KEY)
    return os.environ.get("MYIA_BACKEND")  # pragma: no cover  (not POSIX)


def _fast_entry(pipeline, fn, args):
    """The LLVM dispatcher of `fn`, once a call with all its arguments went through it,
    else None.  Later calls go straight to its last compiled entry, whose native code
    checks the arguments (their number and types) and answers MISMATCH when it cannot
    take them: those calls take the full path (defaults, checks, a new signature)."""
    global _Signal
    llvm = pipeline.llvm
    if llvm is None or _ENVIRON is None:  # (not POSIX: no fast path)
        return None
    if _Signal is None:
        _Signal = _signal_class()
    entry = llvm.entry(fn)
    if entry is None or len(args) != len(entry[1]) or entry[0].last is None:
        return None
    return entry[0]


def _signal_class():
    # import here: the llvm backend is loaded when a program first runs on it
    from .backend.llvm.wrapper import MISMATCH

    return type(MISMATCH)


class CompiledFunction:
    """What `myia.compile` returns: call it like the original function.

    Each is the one instance of a class of its own: once a call went through the LLVM
    backend, that class's `__call__` is the native entry of the last signature (a
    builtin: no Python frame between the caller and the compiled code), which hands
    any call it cannot take (other types, keywords, a deep recursion) to `_full_call`."""

    def __new__(cls, fn, backend=None, static=()):
        own = type(cls.__name__, (cls,), {"__module__": cls.__module__,
                                          "__qualname__": cls.__qualname__})
        return object.__new__(own)

    def __init__(self, fn, backend=None, static=()):
        backend = backend or default_backend()
        if backend not in BACKENDS:
            raise MyiaValueError(f"unknown backend {backend!r}",
                                 hint=f"choose one of {', '.join(BACKENDS)}")
        self.fn = fn
        self.backend = backend
        self.pipeline = Pipeline(backend)
        functools.update_wrapper(self, fn, updated=())
        if static:
            self.static = static  # the positions of the static parameters
            self._static_header = header(fn)  # (its parameters, read once)
            self._by_static = {}  # their values -> CompiledFunction of the others
            type(self).__call__ = type(self)._static_call

    def __call__(self, *args, **kwargs):
        try:
            r = self.pipeline.run(self.fn, args, kwargs)
        except MyiaError as e:  # without the compiler's internal frames
            e.__traceback__ = None
            raise e from None
        if not kwargs:
            d = _fast_entry(self.pipeline, self.fn, args)
            if d is not None:
                type(self).__call__ = d.last.entry_with_fallback(self._full_call)
        return r

    _full_call = __call__

    def _static_call(self, *args, **kwargs):
        """A call with static arguments: the program compiled for their values."""
        try:
            if kwargs:
                args = bind_keywords(self.fn, args, kwargs)
            fixed, rest = split_static(self._static_header, args, self.static)
        except MyiaError as e:
            e.__traceback__ = None
            raise e from None
        compiled = self._by_static.get(fixed)
        if compiled is None:
            compiled = self._by_static[fixed] = CompiledFunction(
                StaticBound(self.fn, fixed), self.backend)
        return compiled(*rest)

    def __repr__(self):
        name = getattr(self.fn, "__name__", repr(self.fn))
        static = f", static_argnums={self.static}" if getattr(self, "static", ()) else ""
        return f"<myia.compile({name}, backend={self.backend!r}{static})>"


@user_facing
def compile(fn, backend=None, static_argnums=None, static_argnames=None):
    """Compile `fn` (a function written in the subset, or a `myia.grad(...)` of one).

    The result specializes and caches per argument types.  `backend`: "vm", "llvm",
    "cupy", or None for the default ($MYIA_BACKEND, else "llvm").

    `static_argnums` (ints) and `static_argnames` (names), as in JAX's jit: those
    arguments are constants of the program, which is compiled once per distinct value
    (hashable: numbers, strings, None, tuples of those), so that a size or a flag
    among the arguments can decide shapes and branches (`np.arange(n)`).
    """
    static = () if static_argnums is None and static_argnames is None \
        else static_positions(fn, static_argnums, static_argnames)
    return CompiledFunction(fn, backend, static)


@user_facing
def ir(fn, *args, stage="parsed"):
    """The program `fn` at a stage of the pipeline: "parsed", "typed", "optimized" or
    "native" (myia.pipeline.STAGES; all but "parsed" need example arguments).

    The result prints as the text IR (`str`), counts its primitive applications
    (`op_count()`), and draws itself (`render()`); at the stage "native" it is the
    LLVM IR the llvm backend makes of the optimized program (`str`; `functions()`).
    """
    return Pipeline(default_backend()).stage(fn, args, stage)


# ---- derivatives ------------------------------------------------------------------


class _Transformed:
    """A function made by a transform (grad...): callable from Python (compiled on the
    default backend), compilable, printable with `myia.ir`, and usable inside subset
    code and by further transforms.

    Named in subset code (`dh = myia.grad(h)` at module level, then `dh(x)` in a
    function), each call builds its program for the call's types (`__myia_graph_for__`,
    as from Python), wherever the value went (see myia.ad.transforms)."""

    _kind_name = "transform"  # (its repr: <myia.jvp(f)>)

    def __init__(self, fn):
        self.fn = fn
        self._graph = None
        self._compiled = {}  # backend -> CompiledFunction
        functools.update_wrapper(self, fn, updated=())

    def __myia_graph__(self):
        if self._graph is None:
            self._graph = self._build(to_graph(self.fn))
        return self._graph

    def __myia_graph_for__(self, signature):
        """The program for arguments of the abstracts `signature`, or None for the
        generic program (what a transform that builds nothing per signature says)."""
        return None

    def _header_checking_argnums(self, prefix):
        """(prefix + fn's name, its parameter names, its defaults), made once, without
        building a graph; `self.argnums` is checked against them (`self._checked`: the
        positions, and whether several were asked for)."""
        h = self.__dict__.get("_header")
        if h is None:
            name, names, defaults = header(self.fn)
            try:
                self._checked = check_argnums(self.argnums, len(names), names)
            except MyiaGradError as e:
                if e.loc is None and not is_myia_class(type(self.fn)):
                    e.loc = to_graph(self.fn).loc  # (the def whose arguments are counted)
                raise
            h = self._header = (f"{prefix}{name}", names, defaults)
        return h

    def __myia_J__(self):
        return derived_transform(self, "J")

    def __myia_T__(self):
        return derived_transform(self, "T")

    @property
    def ir_name(self):
        """How the IR printer names the constant of this object (`grad(f, argnums=0)`)."""
        return _fn_text(self)

    # (the parser binds keyword arguments and fills defaults from these, as for a def)
    @property
    def param_names(self):
        header = getattr(self, "__myia_header__", None)
        if header is not None:
            return tuple(header()[1])
        return tuple(self.__myia_graph__().param_names)

    @property
    def defaults(self):
        header = getattr(self, "__myia_header__", None)
        if header is not None:
            return dict(header()[2])
        return dict(self.__myia_graph__().defaults)

    def __call__(self, *args, **kwargs):
        try:
            fast = self._fast
            # every call after the first: straight to the native entry of the last
            # signature, which checks the arguments' types itself (an int is not the
            # float it was compiled for: inference refuses it, see `differentiable`)
            # (and their number: fewer, with defaults to fill, is a MISMATCH too)
            if fast is not None and not kwargs and fast[0] is _environ_get(b"MYIA_BACKEND"):
                r = fast[1](*args)
                if r.__class__ is not _Signal:
                    return r
                # MISMATCH or DEEP: the dispatcher, below
            marker = _backend_marker()
            backend = default_backend()
            compiled = self._compiled.get(backend)
            if compiled is None:
                compiled = self._compiled[backend] = compile(self, backend)
            if kwargs:  # (bound to the parameters by name, as for a def; no fast path)
                return compiled.pipeline.run(self, args, kwargs)
            r = compiled.pipeline.run(self, args, {})
            d = _fast_entry(compiled.pipeline, self, args)
            self._fast = None if d is None else (marker, d.last.entry)
            return r
        except MyiaError as e:  # without the compiler's internal frames
            e.__traceback__ = None
            raise e from None

    #: (the $MYIA_BACKEND it was made under, the native entry of its last signature):
    #: see _fast_entry
    _fast = None

    def __repr__(self):
        return f"<myia.{self._kind_name}({_fn_text(self.fn)})>"


class GradFunction(_Transformed):
    """`grad(fn)` / `value_and_grad(fn)` (and the vjp program).

    For arguments of known types, `grad` differentiates the *optimized* program of
    `fn` for those types (`__myia_graph_for__`): for a gradient of a gradient, J meets a
    small typed program, not the plumbing of the inner derivative (its pairs,
    environments and backpropagators), so each order costs about what the program it
    differentiates costs.  The generic graph (J of the parsed `fn`, `__myia_graph__`) is
    what the "parsed" stage shows, and what takes a program J cannot read yet and a
    first derivative of a program that keeps a loop (`old_path_reason` says why, per
    signature)."""

    def __init__(self, fn, argnums=0, mode="grad"):
        super().__init__(fn)
        self.argnums = argnums
        self.mode = mode
        self._by_signature = {}  # signature -> graph, or None (the generic graph)
        #: signature -> why that signature differentiates the parsed program
        self.old_path_reason = {}

    def __myia_header__(self):
        """(name, parameter names, defaults) without building a graph: those of `fn`
        (the argnums are checked here)."""
        h = self._header_checking_argnums(f"{self.mode}_")
        self._nums, self._many = self._checked
        return h

    def _build(self, fn_graph):
        self.__myia_header__()
        return grad_graph(fn_graph, self._nums, self._many, self.mode)

    def __myia_graph_for__(self, signature):
        if signature in self._by_signature:
            return self._by_signature[signature]
        _, names, defaults = self.__myia_header__()
        graph = None
        if self.mode not in ("grad", "value_and_grad"):
            self.old_path_reason[signature] = f"{self.mode} keeps the parsed program"
        elif len(signature) != len(names):
            self.old_path_reason[signature] = "a call that leaves defaults to fill"
        else:
            inner, _ = optimized_for(self.fn, signature, finish=False)
            reason = not_J_readable(inner)
            if reason is None and not isinstance(self.fn, GradFunction) \
                    and not inner.flags.get("container_arith") \
                    and not _uses_forward_mode(self.fn):
                # a first derivative of a program that keeps a loop or a recursion:
                # inference peels a loop's first iteration by value, and J of the
                # parsed program is smaller (unless it concatenates or repeats lists,
                # which only the typed program spells as the tuples they make)
                reason = _kept_loop(inner)
            if reason is None:
                with progress.stage("differentiating", self.__myia_header__()[0]):
                    graph = grad_graph(inner, self._nums, self._many, self.mode)
                graph.defaults = dict(defaults)
            else:
                self.old_path_reason[signature] = reason
        self._by_signature[signature] = graph
        return graph


    def __repr__(self):
        return f"<myia.{self.mode}({_fn_text(self.fn)}, argnums={self.argnums})>"


def _fn_text(fn):
    """How a transform's repr names the function it transforms (`grad(f, argnums=0)`
    for a transform: nested transforms read as nested calls)."""
    if isinstance(fn, _Transformed):
        return repr(fn)[len("<myia."):-1]
    return getattr(fn, "__name__", repr(fn))


def _uses_forward_mode(fn):
    """Whether the program of `fn` writes jvp (J must take its typed program)."""
    return uses_forward_mode(to_graph(fn))


def _kept_loop(graph):
    """'a loop or a recursion (line N)' if the optimized program `graph` still has one
    (a loop the optimizer could not unroll), else None."""
    loops = recursive_graphs(manage(graph))
    if not loops:
        return None
    g = min(loops, key=lambda g: g.id)
    where = f" (line {g.loc.line})" if g.loc is not None else ""
    return f"a first derivative of a loop or a recursion that stays{where}"


#: grad(f) built twice from equal inputs is one object, whose graphs, programs and
#: machine code are made once: a fresh grad(grad(grad(f))) in a new cell is a look-up
_INTERNED = weakref.WeakValueDictionary()


def _interned(fn, argnums, mode):
    return _intern((fn, argnums, mode), lambda: GradFunction(fn, argnums, mode))


#: the transforms `myia.jvp`, `myia.vjp` and `myia.hessian(f)(x)` make for their callers,
#: who keep no reference to them: the last ones used stay alive, so that calling
#: again is a look-up and a native call, not a new compilation
_RECENT = collections.OrderedDict()
_RECENT_SIZE = 256


def _held(t):
    """`t`, kept alive among the most recently used transforms."""
    _RECENT[id(t)] = t
    _RECENT.move_to_end(id(t))
    if len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return t


def _intern(key, make):
    """The transform `make()` of `key`, shared by every caller with an equal key."""
    try:
        t = _INTERNED.get(key)
    except TypeError:  # an unhashable fn or argnums: not shared
        return make()
    if t is None:
        t = _INTERNED[key] = make()
    return t


def grad(fn, argnums=0):
    """The gradient of `fn` with respect to argument(s) `argnums` (JAX conventions:
    an int gives one gradient, a tuple of ints a tuple of them).  `fn` must return a
    float scalar.  Composable (`grad(grad(f))`) and usable inside subset code."""
    return _interned(fn, argnums, "grad")


def stop_gradient(x):
    """`x`, held constant by every derivative: grad, jvp, vjp, jet, the Jacobians and
    their nestings see a derivative of zero through it (JAX's `jax.lax.stop_gradient`),
    in subset code and from Python alike.  `x` may be a number, an array or a
    container of them.

        >>> myia.grad(lambda x: x * myia.stop_gradient(x))(3.0)
        3.0
    """
    return x


def value_and_grad(fn, argnums=0):
    """Like `grad`, returning `(fn(*args), gradient)`."""
    return _interned(fn, argnums, "value_and_grad")


def _compiled_once(t, backend):
    """The CompiledFunction of the transform object `t` on `backend`, made once (its
    pipeline caches the programs per signature: a second call is a look-up)."""
    compiled = t._compiled.get(backend)
    if compiled is None:
        compiled = t._compiled[backend] = compile(t.fn if isinstance(t, _PrimalOf) else t,
                                                  backend)
    return compiled


class _PrimalOf:
    """Holds the compiled primal of a function `myia.vjp` runs on a native backend."""

    def __init__(self, fn):
        self.fn = fn
        self._compiled = {}

    @staticmethod
    def of(fn):
        return _held(_intern(("primal", fn), lambda: _PrimalOf(fn)))


class _VJPFunction:
    """The `vjp_fn` that `myia.vjp` returns: cotangent in, one gradient per primal out
    (a list or a dict for a primal that is one)."""

    def __init__(self, pipeline, bprop, primals, fn, out):
        self.pipeline = pipeline
        self.bprop = bprop
        self.primals = primals
        self.fn = fn
        self.out_abstract = abstract_of(out)  # (what a cotangent must be like)

    @user_facing
    def __call__(self, cotangent):
        problem = _cotangent_mismatch(self.out_abstract, abstract_of(cotangent))
        if problem:
            raise _cotangent_error(self.fn, problem)
        d = self.pipeline.vm.call(self.bprop, [internal_value(cotangent)])
        return tuple(structured_like(g, p) for g, p in zip(d[1:], self.primals))

    def __repr__(self):
        return _vjp_fn_repr(self.primals)


def _vjp_fn_repr(primals):
    """How the vjp_fn of `myia.vjp` shows (in a kernel cell's result): what it is
    and how to call it, not an object's address."""
    return (f"<vjp_fn at {len(primals)} primal{'s' if len(primals) != 1 else ''}: "
            f"call it with a cotangent like the output>")


class _VJPApplyFunction(_Transformed):
    """The program `(primals..., ct) -> the cotangents of the primals`."""

    _kind_name = "vjp_apply"

    def __init__(self, fn, n):
        super().__init__(fn)
        self.n = n

    def _build(self, fn_graph):
        return vjp_apply_graph(fn_graph, self.n)

    def __myia_graph_for__(self, signature):
        """The generic program, once the cotangent is known to be like the output of
        `fn` at the primals (else the bprop broadcast it, or failed inside `fn`)."""
        n = self.n
        if len(signature) == n + 1:
            out = specialized_for(self.fn, signature[:n]).output.abstract
            problem = _cotangent_mismatch(out, signature[n])
            if problem:
                raise _cotangent_error(self.fn, problem)
        return None


class _NativeVJPFunction(functools.partial):
    """The `vjp_fn` of a backend whose compiled code cannot hand the backpropagator (a
    closure) to Python ("llvm"): `vjp_fn(ct)` runs one compiled program that
    computes the forward pass at the primals again and then the backward pass.

    The partial application of that program (the CompiledFunction of vjp_apply) to
    the primals: a call goes from C to its native entry, with no Python frame between
    (the CompiledFunction says its errors without the compiler's frames)."""

    __slots__ = ()

    @property
    def primals(self):
        return self.args

    def __repr__(self):
        return _vjp_fn_repr(self.primals)


def _float_data(x):
    """Whether `x` is a float or an array of floats (a primal vjp may take without
    typing the program again: an integer is refused, see `vjp`)."""
    return x.__class__ is float or x.__class__ is np.ndarray and x.dtype.kind == "f"


def vjp(fn, *primals):
    """`(fn(*primals), vjp_fn)`, where `vjp_fn(ct)` returns the cotangent of each
    primal (a tuple), as in JAX."""
    last_fn, n, marker, primal, apply = _last_vjp
    if last_fn is fn and n == len(primals) and marker is _environ_get(_BACKEND_KEY) \
            and (_float_data(primals[0]) if n == 1 else all(map(_float_data, primals))):
        # again with the last function, on a native backend: two compiled calls
        try:
            return primal(*primals), _NativeVJPFunction(apply, *primals)
        except MyiaError as e:  # (without the compiler's frames)
            e.__traceback__ = None
            raise e from None
    return _vjp(fn, primals)


@user_facing
def _vjp(fn, primals):
    global _last_vjp
    t = _held(_interned(fn, tuple(range(len(primals))) if primals else 0, "vjp"))
    compiled = _compiled_once(t, default_backend())
    if compiled.pipeline.llvm is not None or _uses_forward_mode(fn):
        # (on the VM too for a program that writes jvp: J of its typed program)
        t.__myia_header__()  # the same checks (argnums) as below
        marker = _backend_marker()
        primal = _compiled_once(_PrimalOf.of(fn), compiled.backend)
        apply = _compiled_once(
            _held(_intern(("vjp_apply", fn, len(primals)),
                          lambda: _VJPApplyFunction(fn, len(primals)))), compiled.backend)
        out = primal(*primals)
        # typed now, for a cotangent like the output: its errors (an integer primal)
        # come from vjp itself, as on the VM
        apply.pipeline.specialize(apply.fn, primals + (out,))
        if _environ_get is not None:
            _last_vjp = (fn, len(primals), marker, primal, apply)
        return out, _NativeVJPFunction(apply, *primals)
    out, bprop = compiled.pipeline.run(t, primals, {})
    return out, _VJPFunction(compiled.pipeline, bprop, primals, fn, out)


def _cotangent_mismatch(out, ct, path="the output"):
    """How the abstract `ct` differs in structure or shape from the abstract `out`
    (a number for a number, an array of the same shape, a tuple of as many), or None."""
    if isinstance(out, ATuple):
        if not isinstance(ct, ATuple) or len(ct.elements) != len(out.elements):
            return f"{path} is a tuple of {len(out.elements)}, the cotangent {_short(ct)}"
        for i, (a, b) in enumerate(zip(out.elements, ct.elements)):
            problem = _cotangent_mismatch(a, b, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(out, AArray) and not (isinstance(ct, AArray) and ct.shape == out.shape) \
            or isinstance(out, AScalar) and not isinstance(ct, AScalar):
        return f"{path} is {_short(out)}, the cotangent {_short(ct)}"
    return None


def _short(a):
    short = getattr(a, "short", None)
    return short() if callable(short) else str(a)


def _cotangent_error(fn, problem):
    return MyiaGradError(
        f"vjp_fn takes a cotangent like the output of {getattr(fn, '__name__', 'f')}: "
        f"{problem}", hint="give it a value of the output's structure and shape (for a "
        "float output, a float; for an array, an array of its shape), as in JAX")


#: (fn, number of primals, $MYIA_BACKEND, compiled primal, compiled vjp_apply) of the
#: last `myia.vjp` on a native backend
_last_vjp = (None, 0, None, None, None)


class JVPFunction(_Transformed):
    """The program `(primals..., tangents...) -> (out, tangent_out)` of `fn`: for
    arguments of data, the tangent transform of the optimized program of `fn` for the
    primals' types (made once per types: `myia.jvp` called again is a look-up and a
    native call)."""

    _kind_name = "jvp"

    def __init__(self, fn):
        super().__init__(fn)
        self._by_signature = {}

    def __myia_header__(self):
        # (without building the generic program, which T of a program that writes
        # grad refuses: its program per signature is T of the typed program)

        name, names, _ = header(self.fn)
        return f"jvp_{name}", tuple(names) + tuple(f"d{n}" for n in names), {}

    def _build(self, fn_graph):
        return jvp_graph(fn_graph)

    def __myia_graph_for__(self, signature):
        if signature not in self._by_signature:
            graph = None
            n = len(signature) // 2

            if len(signature) % 2 == 0 and is_data_signature(signature):
                if len(header(self.fn)[1]) == n:
                    inner, _ = optimized_for(self.fn, signature[:n], finish=False)
                    with progress.stage("forward mode", f"jvp_{inner.name}"):
                        graph = jvp_graph(inner)
            self._by_signature[signature] = graph
        return self._by_signature[signature]


def _check_tangents(primals, tangents):
    if len(primals) != len(tangents):
        raise MyiaGradError(
            f"jvp got {len(primals)} primals but {len(tangents)} tangents",
            hint="give one tangent per primal, of the same structure and shape")
    for i, (x, t) in enumerate(zip(primals, tangents)):
        problem = _structure_mismatch(x, t)
        if problem:
            raise MyiaGradError(f"the tangent of primal {i} does not match it: {problem}",
                                hint="give one tangent per primal, of the same structure and shape")


def _structure_mismatch(x, t, path=""):
    """A description of how `t` differs in structure or shape from `x`, or None."""
    if isinstance(x, dict):
        if not isinstance(t, dict) or list(t) != list(x):
            return (f"{path or 'the value'} is a dict with keys {list(x)}, its tangent is "
                    f"{t!r}")
        for k in x:
            problem = _structure_mismatch(x[k], t[k], f"{path}[{k!r}]")
            if problem:
                return problem
        return None
    if isinstance(x, (tuple, list)):
        what = "tuple" if isinstance(x, tuple) else "list"
        if type(t) is not type(x) and not (isinstance(x, tuple) and isinstance(t, tuple)) \
                or len(t) != len(x):
            return f"{path or 'the value'} is a {what} of {len(x)}, its tangent is {t!r}"
        for i, (a, b) in enumerate(zip(x, t)):
            problem = _structure_mismatch(a, b, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(t, (tuple, list, dict)):
        return f"{path or 'the value'} is not a container, its tangent is {t!r}"
    if np.shape(x) != np.shape(t):
        return f"{path or 'the value'} has shape {np.shape(x)}, its tangent {np.shape(t)}"
    return None


def jvp(fn, primals, tangents):
    """`(fn(*primals), J·tangents)`: forward mode, by the tangent transform (JAX's
    `jax.jvp` conventions: primals and tangents are tuples)."""
    last_fn, t = _last_jvp
    if last_fn is fn and len(primals) == len(tangents):
        fast = t._fast
        if fast is not None and fast[0] is _environ_get(_BACKEND_KEY):
            # again with the last function: straight to the native entry, which checks
            # the arguments' number, types and shapes (MISMATCH: the checks below)
            try:
                r = fast[1](*primals, *tangents)
            except MyiaError as e:  # (without the compiler's frames)
                e.__traceback__ = None
                raise e from None
            if r.__class__ is not _Signal:
                return r
    return _jvp(fn, primals, tangents)


@user_facing
def _jvp(fn, primals, tangents):
    global _last_jvp
    primals = tuple(primals)
    tangents = tuple(tangents)
    _check_tangents(primals, tangents)
    t = _jvp_function(fn)
    _last_jvp = (fn, t)
    return t(*primals, *tangents)


#: (fn, its JVPFunction) of the last `myia.jvp` (a loop of jvp calls skips the look-up)
_last_jvp = (None, None)


def _jvp_function(fn):
    """The one JVPFunction of `fn` (its programs and machine code are made once)."""
    return _held(_intern(("jvp", fn), lambda: JVPFunction(fn)))


class JetFunction(_Transformed):
    """`jet(fn, order)`: `fn(x)` and its first `order` derivatives in one forward pass of
    truncated Taylor arithmetic (`myia.ad.taylor`).  For arguments of known types it
    expands the optimized program of `fn` (straight-line code keeps its structural
    zeros); otherwise its parsed program."""

    def __init__(self, fn, order, argnums=0):
        super().__init__(fn)
        self.order = order
        self.argnums = argnums
        self._by_signature = {}

    def __myia_header__(self):
        return self._header_checking_argnums(f"jet{self.order}_")

    def _build(self, fn_graph):
        self.__myia_header__()
        return jet_entry_graph(fn_graph, self.order, self.argnums)

    def __myia_graph_for__(self, signature):
        if signature in self._by_signature:
            return self._by_signature[signature]
        _, names, defaults = self.__myia_header__()
        graph = None
        if len(signature) == len(names):
            inner, _ = optimized_for(self.fn, signature, finish=False)
            _check_jet_output(inner)
            if not_J_readable(inner) is None:
                with progress.stage("expanding Taylor series", self.__myia_header__()[0]):
                    graph = jet_entry_graph(inner, self.order, self.argnums)
                graph.defaults = dict(defaults)
        self._by_signature[signature] = graph
        return graph

    def __repr__(self):
        return f"<myia.jet({_fn_text(self.fn)}, order={self.order}, argnums={self.argnums})>"


def _check_jet_output(graph):
    ab = getattr(graph.output, "abstract", None)
    if ab is not None and (getattr(ab, "dtype", None) not in ("float64", "float32")):
        raise MyiaGradError(
            f"jet needs a function that returns a float or an array of floats; "
            f"{graph.name} returns {ab}", graph.loc,
            hint="take the jet of one float output at a time")


#: the highest order jet computes (170! is the largest factorial a float64 holds)
MAX_JET_ORDER = 170


def jet(fn, order, argnums=0):
    """Taylor mode (in the spirit of `jax.experimental.jet`): `jet(fn, order=K)(*args)`
    returns `(fn(*args), d/dt fn, ..., d^K/dt^K fn)` along `args[argnums] + t` (for an
    array, every element moves together: elementwise functions give elementwise
    derivatives), computed in one forward pass of truncated Taylor arithmetic."""
    global _last_jet
    last = _last_jet
    if last[0] is fn and last[1] == order and last[2] == argnums \
            and order.__class__ is int and argnums.__class__ is int:
        return last[3]  # (`myia.jet(f, order=k)(x)` in a loop: no checks, no look-up)
    if not isinstance(order, int) or isinstance(order, bool) or order < 0:
        raise MyiaGradError(f"jet needs an int order >= 0, not {order!r}",
                            hint="e.g. myia.jet(f, order=10)")
    if order > MAX_JET_ORDER:
        raise MyiaGradError(
            f"jet's order is at most {MAX_JET_ORDER}, not {order}: the k-th derivative is "
            f"k! times the k-th Taylor coefficient, and 171! is past float64's range",
            hint="ask for the Taylor coefficients of a lower order")
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise MyiaGradError("jet takes a single int argnums",
                            hint="the derivatives are along one argument")
    j = _held(_intern(("jet", fn, order, argnums), lambda: JetFunction(fn, order, argnums)))
    _last_jet = (fn, order, argnums, j)
    return j


#: (fn, order, argnums, its JetFunction) of the last `myia.jet`
_last_jet = (None, None, None, None)


def P_zeros_like(x):
    return P.zeros_like.impl(x)


def _zeros_like_value(x):
    """The zero tangent of a Python argument (a list or a dict of the same keys for a
    list or a dict)."""
    if isinstance(x, list):
        return [_zeros_like_value(e) for e in x]
    if isinstance(x, dict):
        return {k: _zeros_like_value(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_zeros_like_value(e) for e in x)
    return P_zeros_like(x)

"""Scalar primitives, and the elementwise operations that array kernels share.

Every elementwise operation is written once, over values that are either scalars or
vectors of `lanes` elements (`ew_unary`, `ew_binary`), and used both by the scalar
rules here and by the fused array loops of `ops_elementwise`.

Semantics follow the VM (`myia.prim.arith`): float operations are IEEE 754 (1.0 / 0.0
is inf; no fast-math: results match NumPy's up to the last bit, except where libm
and NumPy's own SIMD functions differ by an ulp); integer `//` and `%` follow Python
(rounding toward minus infinity) and are an error when dividing by zero (on arrays,
0, as NumPy gives); on scalars `max`/`min` are Python's (`x if x >= y else y`), on
arrays NumPy's (NaN propagates).  Integers are int64: on scalars, a result out of
range is a MyiaOverflowError (`checked_int`, the VM's message); int64 arrays wrap, as
NumPy's do.
"""

import llvmlite.ir as ir

from ...errors import MyiaOverflowError, MyiaValueError
from ...prim import all_primitives
from ...prim import ops as P
from ...prim.arith import NEGATIVE_POWER, OVERFLOW, ROUNDING
from ...prim.logic import BITWISE, TO_INT_NAN, TO_INT_RANGE
from ...prim.mathfn import LIBM
from .cg import i64
from .registry import backend_error, rule
from .ltypes import Array, Scalar, Static, Tuple
from .runtime import F32, F64, I1, I64, MVEC, declare

SCALAR_IR = {"bool": I1, "int64": I64, "float64": F64, "float32": F32}
FLOATS = ("float64", "float32")


def ir_type(dtype, lanes=1):
    t = SCALAR_IR[dtype]
    return t if lanes == 1 else ir.VectorType(t, lanes)


def splat(b, v, lanes):
    """A vector of `lanes` copies of scalar `v`."""
    if lanes == 1:
        return v
    vt = ir.VectorType(v.type, lanes)
    if isinstance(v, ir.Constant):
        return ir.Constant(vt, [v.constant] * lanes)
    undef = ir.Constant(vt, ir.Undefined)
    one = b.insert_element(undef, v, ir.Constant(ir.IntType(32), 0))
    return b.shuffle_vector(one, undef, ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes))


def const_like(dtype, value, lanes):
    t = SCALAR_IR[dtype]
    c = ir.Constant(t, int(value) if dtype in ("bool", "int64") else float(value))
    if lanes == 1:
        return c
    return ir.Constant(ir.VectorType(t, lanes), [c.constant] * lanes)


def lanes_of(v):
    return v.type.count if isinstance(v.type, ir.VectorType) else 1


def cast(b, v, src, dst):
    """Convert `v` (scalar or vector) from dtype `src` to dtype `dst` (Python's rules:
    float -> int truncates, x -> bool is x != 0)."""
    if src == dst:
        return v
    lanes = lanes_of(v)
    to = ir_type(dst, lanes)
    if dst == "bool":
        if src in FLOATS:
            return b.fcmp_unordered("!=", v, const_like(src, 0.0, lanes))
        return b.icmp_signed("!=", v, const_like(src, 0, lanes))
    if src == "bool":
        if dst == "int64":
            return b.zext(v, to)
        return b.uitofp(v, to)
    if src == "int64":
        return b.sitofp(v, to)  # dst is a float
    if dst == "int64":
        return b.fptosi(v, to)
    if src == "float32":
        return b.fpext(v, to)
    return b.fptrunc(v, to)


def intrinsic(b, name, v):
    """llvm.<name>.<type>(v) for a float scalar or vector."""
    t = v.type
    if isinstance(t, ir.VectorType):
        suffix = f"v{t.count}" + ("f64" if t.element == F64 else "f32")
    else:
        suffix = "f64" if t == F64 else "f32"
    fname = f"llvm.{name}.{suffix}"
    m = b.module
    try:
        f = m.get_global(fname)
    except KeyError:
        f = ir.Function(m, ir.FunctionType(t, [t] * _INTRINSIC_ARITY.get(name, 1)), fname)
    return f


_INTRINSIC_ARITY = {"maximum": 2, "minimum": 2, "maxnum": 2, "minnum": 2, "pow": 2,
                    "copysign": 2}


def call_intrinsic(b, name, *vs):
    return b.call(intrinsic(b, name, vs[0]), list(vs))


def call_libm(b, name, v, dtype, w=None):
    """A libm function on a scalar or vector (of one argument `v`, or two, `v` and `w`):
    libmvec where it has the function at this width, else one call per lane."""
    lanes = lanes_of(v)
    cname = name if dtype == "float64" else name + "f"
    args = [v] if w is None else [v, w]
    if lanes == 1:
        return b.call(declare(b.module, cname), args)
    mv = MVEC.get((name, dtype))
    if mv is not None and mv[1] == lanes:
        sym, _ = mv
        m = b.module
        try:
            f = m.get_global(sym)
        except KeyError:
            f = ir.Function(m, ir.FunctionType(v.type, [v.type] * len(args)), sym)
        return b.call(f, args)
    out = ir.Constant(v.type, ir.Undefined)
    fn = declare(b.module, cname)
    for k in range(lanes):
        idx = ir.Constant(ir.IntType(32), k)
        out = b.insert_element(
            out, b.call(fn, [b.extract_element(a, idx) for a in args]), idx)
    return out


# ---- elementwise operations ---------------------------------------------------------

#: unary operations: name -> emit(b, x, dtype, out_dtype, scalar) (x already of the
#: operand dtype the table below gives)
UNARY = {}
BINARY = {}


def _unary(*names):
    def deco(fn):
        for n in names:
            UNARY[n] = fn
        return fn
    return deco


def _binary(*names):
    def deco(fn):
        for n in names:
            BINARY[n] = fn
        return fn
    return deco


def operand_dtype(name, in_dtypes, out_dtype):
    """The dtype both operands are converted to before the operation."""
    if name in ("eq", "ne", "lt", "le", "gt", "ge"):
        if any(d in FLOATS for d in in_dtypes):
            return "float64" if "float64" in in_dtypes or "int64" in in_dtypes else "float32"
        if all(d == "bool" for d in in_dtypes):
            return "bool"
        return "int64"
    if name in ("not", "truth"):
        return in_dtypes[0]
    if name in BITWISE_NAMES:  # bools stay bools, integers are int64
        return "bool" if all(d == "bool" for d in in_dtypes) else "int64"
    if name in LIBM_NAMES:
        return out_dtype if out_dtype in FLOATS else "float64"
    if name in ROUNDING_NAMES and in_dtypes[0] in FLOATS:
        return in_dtypes[0]
    if name in ("to_int", "to_float", "astype") or name in ROUNDING_NAMES:
        return in_dtypes[0]
    if name == "sign":
        return in_dtypes[0] if in_dtypes[0] != "bool" else "int64"
    if name in ("abs", "neg") and in_dtypes[0] == "bool":
        return "int64"
    if out_dtype == "bool" and name not in ("where",):
        return out_dtype
    return out_dtype


@_binary("add", "gadd")
def _add(b, x, y, dt, scalar):
    if dt == "bool":  # NumPy: True + True is True (a logical or)
        return b.or_(x, y)
    return b.fadd(x, y) if dt in FLOATS else b.add(x, y)


def _bitwise_emitter(instruction, arity):
    if arity == 1:
        def emit(b, x, dt, out, scalar):
            return getattr(b, instruction)(x)
    else:
        def emit(b, x, y, dt, scalar):
            return getattr(b, instruction)(x, y)
    return emit


for _p, _instruction in BITWISE.items():
    (UNARY if _p is P.invert else BINARY)[_p.name] = _bitwise_emitter(
        _instruction, 1 if _p is P.invert else 2)


@_binary("sub")
def _sub(b, x, y, dt, scalar):
    return b.fsub(x, y) if dt in FLOATS else b.sub(x, y)


@_binary("mul")
def _mul(b, x, y, dt, scalar):
    if dt == "bool":
        return b.and_(x, y)
    return b.fmul(x, y) if dt in FLOATS else b.mul(x, y)


@_binary("truediv")
def _truediv(b, x, y, dt, scalar):
    return b.fdiv(x, y)


def float_floordiv(b, x, y, dt):
    """Python's float floor division (CPython's float_floor_div); x / y when y == 0
    (inf or nan, as NumPy's floor_divide)."""
    lanes = lanes_of(x)
    zero = const_like(dt, 0.0, lanes)
    mod = b.frem(x, y)
    div = b.fdiv(b.fsub(x, mod), y)
    mod_nz = b.fcmp_unordered("!=", mod, zero)
    adjust = b.and_(mod_nz, b.xor(b.fcmp_ordered("<", y, zero), b.fcmp_ordered("<", mod, zero)))
    div = b.select(adjust, b.fsub(div, const_like(dt, 1.0, lanes)), div)
    fl = call_intrinsic(b, "floor", div)
    fl = b.select(b.fcmp_ordered(">", b.fsub(div, fl), const_like(dt, 0.5, lanes)),
                  b.fadd(fl, const_like(dt, 1.0, lanes)), fl)
    div_zero = b.fcmp_ordered("==", div, zero)
    signed_zero = call_intrinsic(b, "copysign", zero, b.fdiv(x, y))
    out = b.select(div_zero, signed_zero, fl)
    return b.select(b.fcmp_ordered("==", y, zero), b.fdiv(x, y), out)


def float_mod(b, x, y, dt):
    """Python's float modulo (CPython's float_rem); nan when y == 0."""
    lanes = lanes_of(x)
    zero = const_like(dt, 0.0, lanes)
    mod = b.frem(x, y)
    mod_nz = b.fcmp_unordered("!=", mod, zero)
    adjust = b.and_(mod_nz, b.xor(b.fcmp_ordered("<", y, zero), b.fcmp_ordered("<", mod, zero)))
    mod = b.select(adjust, b.fadd(mod, y), mod)
    return b.select(mod_nz, mod, call_intrinsic(b, "copysign", zero, y))


def int_floordiv(b, x, y):
    """Python's integer floor division, for y != 0 (y == -1 wraps instead of trapping)."""
    lanes = lanes_of(x)
    one = const_like("int64", 1, lanes)
    minus1 = const_like("int64", -1, lanes)
    zero = const_like("int64", 0, lanes)
    safe_y = b.select(b.icmp_signed("==", y, zero), one, y)
    is_m1 = b.icmp_signed("==", safe_y, minus1)
    safe_y = b.select(is_m1, one, safe_y)
    q = b.sdiv(x, safe_y)
    r = b.srem(x, safe_y)
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", safe_y, zero)))
    q = b.select(adjust, b.sub(q, one), q)
    q = b.select(is_m1, b.sub(zero, x), q)
    return b.select(b.icmp_signed("==", y, zero), zero, q)


def int_mod(b, x, y):
    """Python's integer modulo, for y != 0 (0 when y == 0, as NumPy)."""
    lanes = lanes_of(x)
    one = const_like("int64", 1, lanes)
    zero = const_like("int64", 0, lanes)
    bad = b.or_(b.icmp_signed("==", y, zero), b.icmp_signed("==", y, const_like("int64", -1, lanes)))
    safe_y = b.select(bad, one, y)
    r = b.srem(x, safe_y)
    adjust = b.and_(b.icmp_signed("!=", r, zero),
                    b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", safe_y, zero)))
    r = b.select(adjust, b.add(r, safe_y), r)
    return b.select(bad, zero, r)


@_binary("floordiv")
def _floordiv(b, x, y, dt, scalar):
    if dt in FLOATS:
        return float_floordiv(b, x, y, dt)
    return int_floordiv(b, x, y)


@_binary("mod")
def _mod(b, x, y, dt, scalar):
    if dt in FLOATS:
        return float_mod(b, x, y, dt)
    return int_mod(b, x, y)


@_binary("pow")
def _pow(b, x, y, dt, scalar):
    if dt in FLOATS:
        return call_libm(b, "pow", x, dt, y)
    return int_pow(b, x, y)


def checked_int_pow(b, x, y):
    """(x ** y, overflowed) for int64 scalars, y >= 0 (the caller checks): by squaring;
    overflowed says whether a product the result needs left int64's range."""
    one, zero = i64(1), i64(0)
    fn = b.function
    pre = b.block
    loop = fn.append_basic_block("ipow.loop")
    done = fn.append_basic_block("ipow.done")
    b.branch(loop)
    b.position_at_end(loop)
    acc = b.phi(I64)
    base = b.phi(I64)
    e = b.phi(I64)
    bad = b.phi(I1)
    acc.add_incoming(one, pre)
    base.add_incoming(x, pre)
    e.add_incoming(y, pre)
    bad.add_incoming(ir.Constant(I1, 0), pre)
    odd = b.icmp_signed("!=", b.and_(e, one), zero)
    prod = b.smul_with_overflow(acc, base)
    acc2 = b.select(odd, b.extract_value(prod, 0), acc)
    sq = b.smul_with_overflow(base, base)
    e2 = b.ashr(e, one)
    cont = b.icmp_signed(">", e2, zero)
    # base * base matters only if a later step uses it
    bad2 = b.or_(bad, b.or_(b.and_(odd, b.extract_value(prod, 1)),
                            b.and_(cont, b.extract_value(sq, 1))))
    acc.add_incoming(acc2, b.block)
    base.add_incoming(b.extract_value(sq, 0), b.block)
    e.add_incoming(e2, b.block)
    bad.add_incoming(bad2, b.block)
    b.cbranch(cont, loop, done)
    b.position_at_end(done)
    res = b.phi(I64)
    res.add_incoming(acc2, loop)
    flag = b.phi(I1)
    flag.add_incoming(bad2, loop)
    return res, flag


def checked_int(fl, node, name, x, y=None):
    """Scalar int64 `name` (add, sub, mul, floordiv, pow, neg, abs) of x (and y), or a
    MyiaOverflowError, with the VM's message, where the result is out of range."""
    b = fl.b
    lo = i64(-(1 << 63))
    if name in ("add", "sub", "mul"):
        r = getattr(b, {"add": "sadd", "sub": "ssub", "mul": "smul"}[name] + "_with_overflow")(x, y)
        value, bad = b.extract_value(r, 0), b.extract_value(r, 1)
    elif name == "pow":
        value, bad = checked_int_pow(b, x, y)
    elif name == "floordiv":
        value = int_floordiv(b, x, y)
        bad = b.and_(b.icmp_signed("==", x, lo), b.icmp_signed("==", y, i64(-1)))
    elif name == "neg":
        value, bad = b.sub(i64(0), x), b.icmp_signed("==", x, lo)
    else:  # abs
        value = _abs(b, x, "int64", "int64", True)
        bad = b.icmp_signed("==", x, lo)
    fl.error_if(bad, node, MyiaOverflowError, OVERFLOW[name], x, y)
    return value


CHECKED_INT = ("add", "sub", "mul", "floordiv", "pow", "neg", "abs")


def int_pow(b, x, y):
    """x ** y for int64 (y >= 0; the caller checks), by squaring, branch-free in 64
    steps for vectors, with a loop for scalars."""
    lanes = lanes_of(x)
    one = const_like("int64", 1, lanes)
    zero = const_like("int64", 0, lanes)
    if lanes == 1:
        fn = b.function
        pre = b.block
        loop = fn.append_basic_block("ipow.loop")
        done = fn.append_basic_block("ipow.done")
        b.branch(loop)
        b.position_at_end(loop)
        acc = b.phi(I64)
        base = b.phi(I64)
        e = b.phi(I64)
        acc.add_incoming(one, pre)
        base.add_incoming(x, pre)
        e.add_incoming(y, pre)
        odd = b.icmp_signed("!=", b.and_(e, one), zero)
        acc2 = b.select(odd, b.mul(acc, base), acc)
        base2 = b.mul(base, base)
        e2 = b.ashr(e, one)
        cont = b.icmp_signed(">", e2, zero)
        acc.add_incoming(acc2, b.block)
        base.add_incoming(base2, b.block)
        e.add_incoming(e2, b.block)
        b.cbranch(cont, loop, done)
        b.position_at_end(done)
        res = b.phi(I64)
        res.add_incoming(acc2, loop)
        # y == 0 -> 1 (acc2 is already 1 then, as x ** 0 handled by odd=false)
        return res
    acc = one
    base = x
    e = y
    for _ in range(63):
        odd = b.icmp_signed("!=", b.and_(e, one), zero)
        acc = b.select(odd, b.mul(acc, base), acc)
        base = b.mul(base, base)
        e = b.ashr(e, one)
    return acc


def _max_min(b, x, y, dt, scalar, greater):
    # NumPy's, on scalars too (see myia.prim.arith): a NaN wins, True is the larger bool
    if dt in FLOATS:
        return call_intrinsic(b, "maximum" if greater else "minimum", x, y)
    if dt == "bool":
        return b.or_(x, y) if greater else b.and_(x, y)
    return b.select(b.icmp_signed(">" if greater else "<", x, y), x, y)


@_binary("maximum")
def _maximum(b, x, y, dt, scalar):
    return _max_min(b, x, y, dt, scalar, True)


@_binary("minimum")
def _minimum(b, x, y, dt, scalar):
    return _max_min(b, x, y, dt, scalar, False)


def _fmax_fmin(b, x, y, dt, scalar, greater):
    # llvm's maxnum and minnum are C's fmax and fmin: a NaN loses to a number
    if dt in FLOATS:
        return call_intrinsic(b, "maxnum" if greater else "minnum", x, y)
    return _max_min(b, x, y, dt, scalar, greater)


@_binary("fmax")
def _fmax(b, x, y, dt, scalar):
    return _fmax_fmin(b, x, y, dt, scalar, True)


@_binary("fmin")
def _fmin(b, x, y, dt, scalar):
    return _fmax_fmin(b, x, y, dt, scalar, False)


_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _cmp(op):
    def emit(b, x, y, dt, scalar):
        if dt in FLOATS:
            if op == "!=":
                return b.fcmp_unordered(op, x, y)
            return b.fcmp_ordered(op, x, y)
        if dt == "bool":
            return b.icmp_unsigned(op, x, y)
        return b.icmp_signed(op, x, y)
    return emit


for _n, _op in _CMP.items():
    BINARY[_n] = _cmp(_op)


@_unary("neg")
def _neg(b, x, dt, out, scalar):
    if dt in FLOATS:
        return b.fneg(x)
    return b.sub(const_like(dt, 0, lanes_of(x)), x)


def _libm_emitter(cname, arity):
    if arity == 1:
        def emit(b, x, dt, out, scalar):
            return call_libm(b, cname, x, dt)
    else:
        def emit(b, x, y, dt, scalar):
            return call_libm(b, cname, x, dt, y)
    return emit


#: the primitives that are functions of the C math library (myia.prim.mathfn), by name
LIBM_NAMES = {p.name: cname for p, (cname, _) in LIBM.items()}
for _p, (_cname, _arity) in LIBM.items():
    (UNARY if _arity == 1 else BINARY)[_p.name] = _libm_emitter(_cname, _arity)


@_unary("sqrt")
def _sqrt(b, x, dt, out, scalar):
    return call_intrinsic(b, "sqrt", x)


@_unary("abs")
def _abs(b, x, dt, out, scalar):
    if dt in FLOATS:
        return call_intrinsic(b, "fabs", x)
    zero = const_like(dt, 0, lanes_of(x))
    return b.select(b.icmp_signed("<", x, zero), b.sub(zero, x), x)


@_unary("sign")
def _sign(b, x, dt, out, scalar):
    lanes = lanes_of(x)
    zero = const_like(dt, 0, lanes)
    if dt in FLOATS:
        pos = b.fcmp_ordered(">", x, zero)
        neg = b.fcmp_ordered("<", x, zero)
        r = b.fsub(b.uitofp(pos, x.type), b.uitofp(neg, x.type))
        if not scalar:  # NumPy: sign(nan) is nan
            r = b.select(b.fcmp_unordered("uno", x, x), x, r)
        return r
    pos = b.icmp_signed(">", x, zero)
    neg = b.icmp_signed("<", x, zero)
    return b.sub(b.zext(pos, x.type), b.zext(neg, x.type))


ROUNDING_NAMES = {p.name for p in ROUNDING}
BITWISE_NAMES = {p.name for p in BITWISE}


def _rounding_emitter(name):
    def emit(b, x, dt, out, scalar):
        if dt in FLOATS:
            return cast(b, call_intrinsic(b, name, x), dt, out)
        return cast(b, x, dt, out)  # an integer is its own rounding
    return emit


for _p in ROUNDING:
    UNARY[_p.name] = _rounding_emitter(_p.name)


@_unary("not")
def _not(b, x, dt, out, scalar):
    return b.not_(cast(b, x, dt, "bool"))


@_unary("truth")
def _truth(b, x, dt, out, scalar):
    return cast(b, x, dt, "bool")


@_unary("to_float", "to_int", "astype")
def _convert(b, x, dt, out, scalar):
    return cast(b, x, dt, out)


def ew_unary(b, name, x, in_dtype, out_dtype, scalar):
    """Unary elementwise `name` on x (of in_dtype), giving out_dtype."""
    od = operand_dtype(name, [in_dtype], out_dtype)
    x = cast(b, x, in_dtype, od)
    r = UNARY[name](b, x, od, out_dtype, scalar)
    rdt = _result_dtype(name, od, out_dtype)
    return cast(b, r, rdt, out_dtype)


def ew_binary(b, name, x, y, dx, dy, out_dtype, scalar):
    od = operand_dtype(name, [dx, dy], out_dtype)
    x = cast(b, x, dx, od)
    y = cast(b, y, dy, od)
    r = BINARY[name](b, x, y, od, scalar)
    rdt = _result_dtype(name, od, out_dtype)
    return cast(b, r, rdt, out_dtype)


def _result_dtype(name, od, out):
    if name in _CMP or name in ("not", "truth"):
        return "bool"
    if name in ("to_int", "to_float", "astype") or name in ROUNDING_NAMES:
        return out
    return od


def ew_where(b, c, x, y, dc, dx, dy, out_dtype):
    c = cast(b, c, dc, "bool")
    return b.select(c, cast(b, x, dx, out_dtype), cast(b, y, dy, out_dtype))


# ---- rules ------------------------------------------------------------------------


def to_bool(fl, v, t, node):
    """The truth value of a condition (a bool, a number, a 1-element array)."""
    if isinstance(t, Scalar):
        return cast(fl.b, v, t.dtype, "bool")
    if isinstance(t, Array):
        # import here: ops_views imports this module
        from .ops_views import array_truth

        return array_truth(fl, v, t, node)
    if isinstance(t, Tuple):
        return ir.Constant(I1, int(len(t.elems) > 0))
    if isinstance(t, Static):
        return ir.Constant(I1, int(bool(t.value)))
    raise backend_error(f"the truth value of a {t}", node)


def _dtype_of(t):
    return t.dtype if isinstance(t, (Scalar, Array)) else None


def _any_array(types, out):
    return isinstance(out, Array) or any(isinstance(t, Array) for t in types)


def _materialize(fl, node):
    """An elementwise node on arrays: computed by the fused loops of ops_elementwise."""
    # import here: ops_elementwise imports this module
    from .ops_elementwise import materialize

    return materialize(fl, node)


def scalar_operands(fl, args, types, out, node):
    """A scalar result from 0-d array operands (NumPy: `1.0 * np.array(2.0)` is a
    float64 scalar): the operands' single elements, as scalars."""
    if not isinstance(out, Scalar) or not any(isinstance(t, Array) for t in types):
        return args, types
    # import here: arrays imports this module
    from .arrays import data_of, load_elem

    new_args, new_types = [], []
    for a, t in zip(args, types):
        if isinstance(t, Array):
            if t.ndim != 0:
                raise backend_error(f"a scalar result from an operand of type {t}", node)
            a, t = load_elem(fl.b, data_of(fl.b, a), i64(0), t.dtype), Scalar(t.dtype)
        new_args.append(a)
        new_types.append(t)
    return new_args, new_types


def _elementwise_rule(name):
    def lower(fl, node, args, types, out):
        args, types = scalar_operands(fl, args, types, out, node)
        if _any_array(types, out):
            return _materialize(fl, node)
        b = fl.b
        if not isinstance(out, Scalar) or any(not isinstance(t, Scalar) for t in types):
            if name in ("eq", "ne"):
                return _static_or_tuple_compare(fl, node, args, types, name)
            raise backend_error(f"{name} of {', '.join(map(str, types))}", node)
        if len(args) == 1:
            dx = types[0].dtype
            if name in ("neg", "abs") and operand_dtype(name, [dx], out.dtype) == "int64":
                return cast(b, checked_int(fl, node, name, cast(b, args[0], dx, "int64")),
                            "int64", out.dtype)
            return ew_unary(b, name, args[0], dx, out.dtype, True)
        x, y = args
        dx, dy = types[0].dtype, types[1].dtype
        od = operand_dtype(name, [dx, dy], out.dtype)
        if name in ("floordiv", "mod") and od == "int64":
            yv = cast(b, y, dy, "int64")
            what = "division" if name == "floordiv" else "modulo"
            fl.error_if(b.icmp_signed("==", yv, i64(0)), node, MyiaValueError,
                        f"integer {what} by zero")
        if name == "pow" and od == "int64":
            yv = cast(b, y, dy, "int64")
            fl.error_if(b.icmp_signed("<", yv, i64(0)), node, MyiaValueError,
                        NEGATIVE_POWER, yv)
        if name in CHECKED_INT and od == "int64" and out.dtype == "int64":
            return checked_int(fl, node, name, cast(b, x, dx, "int64"), cast(b, y, dy, "int64"))
        return ew_binary(b, name, x, y, dx, dy, out.dtype, True)
    return lower


def _static_or_tuple_compare(fl, node, args, types, name):
    """== and != on tuples of numbers and on compile-time values."""
    b = fl.b
    a, c = types
    if isinstance(a, Static) and isinstance(c, Static):
        r = a.value == c.value
        return ir.Constant(I1, int(r if name == "eq" else not r))
    if isinstance(a, Tuple) and isinstance(c, Tuple):
        if len(a.elems) != len(c.elems):
            return ir.Constant(I1, int(name == "ne"))
        acc = ir.Constant(I1, 1)
        for k, (ta, tc) in enumerate(zip(a.elems, c.elems)):
            ea = b.extract_value(args[0], k)
            ec = b.extract_value(args[1], k)
            if isinstance(ta, Scalar) and isinstance(tc, Scalar):
                e = ew_binary(b, "eq", ea, ec, ta.dtype, tc.dtype, "bool", True)
            else:
                e = _static_or_tuple_compare(fl, node, [ea, ec], [ta, tc], "eq")
            acc = b.and_(acc, e)
        return acc if name == "eq" else b.not_(acc)
    if type(a) is not type(c):
        return ir.Constant(I1, int(name == "ne"))
    raise backend_error(f"{name} of {a} and {c}", node)


# Every elementwise primitive (its `elementwise` trait) lowers through its emitter in
# UNARY or BINARY; the casts have their own rules below.
_CASTS = {P.to_float, P.to_int, P.astype}
for _p in all_primitives().values():
    if _p.elementwise in (1, 2) and _p not in _CASTS:
        rule(_p)(_elementwise_rule(_p.name))


@rule(P.to_float)
def lower_to_float(fl, node, args, types, out):
    if _any_array(types, out):
        return _materialize(fl, node)
    return cast(fl.b, args[0], types[0].dtype, out.dtype)


@rule(P.to_int)
def lower_to_int(fl, node, args, types, out):
    if _any_array(types, out):
        return _materialize(fl, node)
    b = fl.b
    (x,), (t,) = args, types
    if t.dtype in FLOATS:
        # int(nan), int(inf), or out of int64's range: an error (as on the VM)
        xd = cast(b, x, t.dtype, "float64")
        fl.error_if(b.fcmp_unordered("uno", xd, xd), node, MyiaValueError, TO_INT_NAN)
        ok = b.and_(b.fcmp_ordered("<", xd, ir.Constant(F64, 9.223372036854775807e18)),
                    b.fcmp_ordered(">=", xd, ir.Constant(F64, -9.223372036854775808e18)))
        fl.error_if(b.not_(ok), node, MyiaOverflowError, TO_INT_RANGE)
    return cast(b, x, t.dtype, "int64")


@rule(P.truth)
def lower_truth(fl, node, args, types, out):
    return to_bool(fl, args[0], types[0], node)


@rule(P.where)
def lower_where(fl, node, args, types, out):
    args, types = scalar_operands(fl, args, types, out, node)
    if _any_array(types, out):
        return _materialize(fl, node)
    c, x, y = args
    return ew_where(fl.b, c, x, y, types[0].dtype, types[1].dtype, types[2].dtype, out.dtype)


@rule(P.astype)
def lower_astype(fl, node, args, types, out):
    if _any_array(types, out):
        return _materialize(fl, node)
    return cast(fl.b, args[0], types[0].dtype, out.dtype)

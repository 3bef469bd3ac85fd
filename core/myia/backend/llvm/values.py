"""Native values between LTypes: the join of two types (the branches of a switch) and
the conversion of a value to a wider type (more functions in a closure type, more keys
in an environment); the values a closure record captured."""

import llvmlite.ir as ir

from . import chain
from .arrays import data_of, load_elem
from .cg import NULL, i64
from .chain import chain_layout
from .ltypes import ANY_ENV, CLOSURE_IR, AnyEnv, Array, Env, Func, Scalar, Static, Tuple, to_ir
from .ops_scalar import cast
from .registry import backend_error


def join(a, b, node=None):
    """The smallest type holding values of `a` and of `b` (for branches)."""
    if a == b:
        return a
    if isinstance(a, Func) and isinstance(b, Func):
        opts = list(a.options)
        for o in b.options:
            if o not in opts:
                opts.append(o)
        return Func(opts)
    if isinstance(a, Tuple) and isinstance(b, Tuple) and len(a.elems) == len(b.elems):
        return Tuple([join(x, y, node) for x, y in zip(a.elems, b.elems)])
    if isinstance(a, (Env, AnyEnv)) and isinstance(b, (Env, AnyEnv)) \
            and (isinstance(a, AnyEnv) or isinstance(b, AnyEnv)):
        return ANY_ENV
    if isinstance(a, Env) and isinstance(b, Env):
        entries = list(a.entries)
        keys = [k for k, _ in entries]
        for k, t in b.entries:
            if k in keys:
                i = keys.index(k)
                entries[i] = (k, join(entries[i][1], t, node))
            else:
                entries.append((k, t))
                keys.append(k)
        return Env(entries)
    if isinstance(a, Array) and isinstance(b, Array) and a.dtype == b.dtype and a.ndim == b.ndim:
        return Array(a.dtype, [x if x == y else None for x, y in zip(a.shape, b.shape)])
    raise backend_error(f"a value that may be {a} or {b}", node)


def coerce(fl, v, src, dst, node=None):
    """Convert native value `v` of type `src` to the representation of `dst` (a
    wider type: more functions in a closure type, more keys in an environment)."""
    if src == dst:
        return v
    b = fl.b
    if isinstance(src, Array) and isinstance(dst, Array) and src.ndim == dst.ndim:
        return v
    if isinstance(src, Tuple) and isinstance(dst, Tuple) and len(src.elems) == len(dst.elems):
        out = ir.Constant(to_ir(dst), ir.Undefined)
        for k, (s, d) in enumerate(zip(src.elems, dst.elems)):
            out = b.insert_value(out, coerce(fl, b.extract_value(v, k), s, d, node), k)
        return out
    if isinstance(src, Func) and isinstance(dst, Func):
        return coerce_func(fl, v, src, dst, node)
    if isinstance(src, Env) and isinstance(dst, AnyEnv):
        return fl.L.dynenv.from_known(fl, v, src)
    if isinstance(src, AnyEnv) and isinstance(dst, Env):
        return fl.L.dynenv.to_known(fl, v, dst)
    if isinstance(src, Env) and isinstance(dst, Env):
        out = ir.Constant(to_ir(dst), None)  # all absent
        for k, (key, t) in enumerate(dst.entries):
            i = src.index(key)
            if i is None:
                continue
            entry = b.extract_value(v, i)
            present = b.extract_value(entry, 0)
            value = coerce(fl, b.extract_value(entry, 1), src.entries[i][1], t, node)
            e = ir.Constant(to_ir(dst).elements[k], ir.Undefined)
            e = b.insert_value(e, present, 0)
            e = b.insert_value(e, value, 1)
            out = b.insert_value(out, e, k)
        return out
    if isinstance(src, Scalar) and isinstance(dst, Scalar):
        return cast(b, v, src.dtype, dst.dtype)
    if isinstance(src, Static) and isinstance(dst, Static):
        return v
    if isinstance(src, Array) and src.ndim == 0 and isinstance(dst, Scalar):
        # inference types a 0-d array joined with a number as the number
        return cast(b, load_elem(b, data_of(b, v), i64(0), src.dtype), src.dtype, dst.dtype)
    raise backend_error(f"a value of type {src} where {dst} is expected", node)


def coerce_func(fl, v, src, dst, node):
    """A function value of type `src` as one of type `dst`, whose options include
    src's: one option is {tag, captured values}, the tag being the position of the
    option in dst (several options: the tags are renumbered)."""
    b = fl.b
    if src.single and dst.single:
        if src.options[0] == dst.options[0]:
            return v
    elif src.single:
        k = _option_index(src.options[0], dst, node)
        env = v if src.options[0].n_captured else NULL
        rec = ir.Constant(CLOSURE_IR, [i64(k), NULL])
        return b.insert_value(rec, env, 1)
    elif not dst.single:
        tags = [_option_index(o, dst, node) for o in src.options]
        if tags == list(range(len(tags))):
            return v
        return b.insert_value(v, renumber_tag(b, b.extract_value(v, 0), tags), 0)
    raise backend_error(f"a function value of type {src} where {dst} is expected", node)


def renumber_tag(b, tag, tags):
    """The tag that option number `tag` of a function value gets: tags[tag]."""
    new = i64(tags[0])
    for i, t in enumerate(tags[1:], 1):
        new = b.select(b.icmp_signed("==", tag, i64(i)), i64(t), new)
    return new


def _option_index(option, ftype, node):
    for k, o in enumerate(ftype.options):
        if o == option:
            return k
    raise backend_error(f"the function {option!r}, which is not one of {ftype}", node)


def load_captured(b, L, option, env):
    """The values captured by function option `option`, read from record `env`."""
    if not option.n_captured:
        return []
    lay = chain_layout(L, option)
    if lay is not None:  # a record of a chain, without its link
        return chain.load(b, lay, env)
    rec = b.load(env, typ=L.captured_ir(option))
    return [b.extract_value(rec, k) for k in range(option.n_captured)]


def sizeof(fl, typ):
    return typ.get_abi_size(fl.L.engine.tm.target_data)

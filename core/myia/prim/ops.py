"""Every primitive under its Python name: `from myia.prim import ops as P; P.add`.

(Python names avoid keywords: `P.not_`, `P.len_`, `P.assert_`.)"""

from . import (arith, array, containers, cumulative, dynamic, grad_ops, linalg, logic, mathfn,
               rearrange, shape, special, structure)
from .primitive import Primitive

for _module in (grad_ops, structure, containers, logic, shape, arith, mathfn, array, cumulative,
                rearrange, linalg, dynamic, special):
    for _name, _value in vars(_module).items():
        if isinstance(_value, Primitive):
            globals()[_name] = _value
del _module, _name, _value

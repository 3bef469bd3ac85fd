"""A first look at Myia: compile a few functions, run them, print their IR and the
IR of their derivatives.  (`make demo` runs this.)"""

import math

import numpy as np

import myia


def poly(x):
    return x ** 3 + 2.0 * x * x - x / 3.0 + 7.0


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = (x + a / x) / 2.0
    return x


def mlp_loss(W, b, x, y):
    h = np.tanh(x @ W + b)
    return np.mean((h - y) ** 2)


def main():
    print("== running compiled functions ==")
    print("poly(2.0)         =", myia.compile(poly)(2.0))
    print("fact(10)          =", myia.compile(fact)(10))
    print("newton_sqrt(2.0)  =", myia.compile(newton_sqrt)(2.0), "math.sqrt:", math.sqrt(2.0))

    print("\n== derivatives ==")
    print("poly'(2.0)        =", myia.grad(poly)(2.0), "(by hand: 3x^2 + 4x - 1/3 =", 3 * 4 + 8 - 1 / 3, ")")
    print("poly''(2.0)       =", myia.grad(myia.grad(poly))(2.0), "(by hand: 6x + 4 =", 16.0, ")")
    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(4, 3)), np.zeros(3)
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    dW, db = myia.grad(mlp_loss, argnums=(0, 1))(W, b, x, y)
    print("MLP loss gradient shapes:", dW.shape, db.shape)

    print("\n== the IR of newton_sqrt (loops are tail-recursive graphs) ==")
    print(myia.ir(newton_sqrt))
    print("\n== the adjoint program of poly (a graph, no tape) ==")
    adjoint = myia.ir(myia.grad(poly), 2.0)
    optimized = myia.ir(myia.grad(poly), 2.0, stage="optimized")
    print(f"{adjoint.op_count()} primitive applications before optimization, "
          f"{optimized.op_count()} after:")
    print(optimized)


if __name__ == "__main__":
    main()

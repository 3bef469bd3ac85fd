"""The programs the benchmarks run: Myia subset code, and the competitors' versions.

Everything above "competitors" is written in the subset (myia parses it); below are
hand-written NumPy, numba and JAX versions of the same computations.
"""

import math

import numpy as np

# ---- Myia subset -----------------------------------------------------------------------


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    out = H @ W2 + b2
    return np.sum((out - Y) ** 2) / X.shape[0]


def sin_loop(x, n):
    i = 0
    while i < n:
        x = np.sin(x)
        i = i + 1
    return x


def fan_loop(x, n):
    i = 0
    while i < n:
        x = (x + x) / 2.0
        i = i + 1
    return x


def square(x):
    return x * x


def twice(x):
    """The derivative of `square`, by hand (what numba is timed on)."""
    return 2.0 * x


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def collatz_total(n):
    total = 0
    k = 1
    while k <= n:
        m = k
        while m != 1:
            if m % 2 == 0:
                m = m // 2
            else:
                m = 3 * m + 1
            total = total + 1
        k = k + 1
    return total


def power(x, n):
    if n == 0:
        return 1.0
    if n % 2 == 0:
        h = power(x, n // 2)
        return h * h
    return x * power(x, n - 1)


def sqrt_steps(x):
    # a recursion whose depth depends on the value of x
    if x < 2.0:
        return x * x
    return 1.0 + sqrt_steps(np.sqrt(x))


def newton(a):
    x = a
    while (x * x - a) ** 2 > 1e-20:
        x = 0.5 * (x + a / x)
    return x


def twenty_lines(x, y, n):
    """A 20-line function for the pipeline's timing (parse to optimized graph)."""
    a = x * y + 1.0
    b = a / (1.0 + y * y)
    c = np.sin(a) * np.cos(b)
    total = 0.0
    i = 0
    while i < n:
        if c > 0.0:
            total = total + c * i
        else:
            total = total - c
        c = c * 0.9 + 0.01
        i = i + 1
    d = np.exp(-total * 0.001)
    e = d * a - b
    f = e * e + math.pi
    g = f if f > 1.0 else -f
    h = g + a * b * c
    return h * d + e


def poly6(x):
    """The degree-6 polynomial of the higher-order benchmarks (issue 17)."""
    return 0.5 * x ** 6 - 2.0 * x ** 5 + x ** 4 / 3.0 + x ** 3 - 3.0 * x + 1.0


def sin_exp(x):
    return np.sin(x) * np.exp(x)


def while6(x):
    """A 6-step while loop."""
    i = 0
    while i < 6:
        x = np.sin(x) * 1.1 + 0.1 * x
        i = i + 1
    return x


def twenty_lines_of_x(x):
    """twenty_lines as a function of x alone (y = 0.5, n = 6): what grad^k takes."""
    return twenty_lines(x, 0.5, 6)


def cubic_plus(x):
    """x^3 + 2x: its third derivative is the constant 6."""
    return x * x * x + 2.0 * x


# ---- competitors ---------------------------------------------------------------------------


def jax_higher_order_programs():
    """The higher-order programs as a JAX user writes them: loops of static length
    unrolled by the trace, branches on traced values as jnp.where."""
    import jax.numpy as jnp

    def poly6_j(x):
        return 0.5 * x ** 6 - 2.0 * x ** 5 + x ** 4 / 3.0 + x ** 3 - 3.0 * x + 1.0

    def sin_exp_j(x):
        return jnp.sin(x) * jnp.exp(x)

    def while6_j(x):
        for _ in range(6):
            x = jnp.sin(x) * 1.1 + 0.1 * x
        return x

    def twenty_j(x, y=0.5, n=6):
        a = x * y + 1.0
        b = a / (1.0 + y * y)
        c = jnp.sin(a) * jnp.cos(b)
        total = 0.0
        for i in range(n):
            total = jnp.where(c > 0.0, total + c * i, total - c)
            c = c * 0.9 + 0.01
        d = jnp.exp(-total * 0.001)
        e = d * a - b
        f = e * e + math.pi
        g = jnp.where(f > 1.0, f, -f)
        h = g + a * b * c
        return h * d + e

    return {"poly6": poly6_j, "sin_exp": sin_exp_j, "while6": while6_j,
            "twenty_lines_of_x": twenty_j}


def numpy_mlp_value_and_grad(W1, b1, W2, b2, X, Y):
    A = X @ W1 + b1
    H = np.tanh(A)
    D = H @ W2 + b2 - Y
    n = X.shape[0]
    loss = np.sum(D * D) / n
    dout = (2.0 / n) * D
    dH = dout @ W2.T
    dA = dH * (1.0 - H * H)
    return loss, (X.T @ dA, dA.sum(axis=0), H.T @ dout, dout.sum(axis=0))


def python_sin_loop(x, n):
    for _ in range(n):
        x = math.sin(x)
    return x


def make_numba_sin_loop_grad():
    """The hand-written derivative of sin_loop, compiled by numba."""
    import numba

    @numba.njit(cache=False, fastmath=False)
    def grad(x, n):
        xs = np.empty(n)
        for i in range(n):
            xs[i] = x
            x = math.sin(x)
        d = 1.0
        for i in range(n - 1, -1, -1):
            d = d * math.cos(xs[i])
        return d

    return grad


def make_numba_mlp():
    import numba

    @numba.njit(cache=False)
    def vg(W1, b1, W2, b2, X, Y):
        A = X @ W1 + b1
        H = np.tanh(A)
        D = H @ W2 + b2 - Y
        n = X.shape[0]
        loss = np.sum(D * D) / n
        dout = (2.0 / n) * D
        dH = dout @ W2.T
        dA = dH * (1.0 - H * H)
        return loss, X.T @ dA, dA.sum(axis=0), H.T @ dout, dout.sum(axis=0)

    return vg


def jax_programs():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(W1, b1, W2, b2, X, Y):
        H = jnp.tanh(X @ W1 + b1)
        out = H @ W2 + b2
        return jnp.sum((out - Y) ** 2) / X.shape[0]

    def sin_loop_j(x, n):
        return jax.lax.fori_loop(0, n, lambda i, v: jnp.sin(v), x)

    return {
        "mlp_vg": jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3))),
        "sin_grad": jax.jit(jax.grad(sin_loop_j), static_argnums=1),
        "sin_fwd": jax.jit(sin_loop_j, static_argnums=1),
        "square_grad": jax.jit(jax.grad(lambda x: x * x)),
    }


def autograd_programs():
    import autograd
    import autograd.numpy as anp

    def loss(W1, b1, W2, b2, X, Y):
        H = anp.tanh(anp.dot(X, W1) + b1)
        out = anp.dot(H, W2) + b2
        return anp.sum((out - Y) ** 2) / X.shape[0]

    def sin_loop_a(x, n):
        for _ in range(n):
            x = anp.sin(x)
        return x

    def fan_loop_a(x, n):
        for _ in range(n):
            x = (x + x) / 2.0
        return x

    return {
        "mlp_vg": autograd.value_and_grad(loss, argnum=[0, 1, 2, 3]),
        "sin_grad": autograd.grad(sin_loop_a),
        "fan_grad": autograd.grad(fan_loop_a),
        "square_grad": autograd.grad(lambda x: x * x),
    }

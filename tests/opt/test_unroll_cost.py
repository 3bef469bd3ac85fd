"""What deciding to unroll a loop costs: the simulation of its trip count evaluates
each node of the loop's condition and next arguments once per iteration, however
often the body reads a value (before, a body that read each step's value twice cost
2^depth evaluations: the minimax of notebook 03 compiled in 41 s, 37 of them here)."""

import myia
from myia.opt import unroll


def int_chain(x):
    i = 0
    k = 1
    while i < 3:
        # each line reads the last k three times: 3^12 paths from the call's k to i
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        k = (k * k + k) % 1000
        i = i + 1
    return x * k


def float_steps(x):
    for i in range(2):
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
        x = x * x + x
    return x


def count_evaluations(monkeypatch):
    calls = [0]
    evaluate = unroll._evaluate

    def counted(*args, **kwargs):
        calls[0] += 1
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(unroll, "_evaluate", counted)
    return calls


def test_a_value_read_twice_is_evaluated_once(monkeypatch):
    calls = count_evaluations(monkeypatch)
    assert myia.compile(int_chain, backend="vm")(0.5) == int_chain(0.5)
    assert 0 < calls[0] < 2000  # 3^12 paths per iteration before


def test_float_values_are_not_simulated(monkeypatch):
    calls = count_evaluations(monkeypatch)
    x = 0.01
    expected = float_steps(x)
    assert abs(myia.compile(float_steps, backend="vm")(x) - expected) <= 1e-12 * abs(expected)
    assert 0 < calls[0] < 200

"""lstm: the average loss of a two-layer-per-step LSTM over a character sequence, and
its gradient with respect to main_params and extra_params (GradBench's
evals/lstm/README.md), written as GradBench's PyTorch tool writes it
(python/gradbench/gradbench/tools/pytorch/lstm_objective.py, from ADBench), in NumPy:
`s2 = np.copy(s)` for `s.clone().detach()`, `(s2[i], s2[i + 1]) = lstm(...)` as an
index assignment, the list of states grown with `append`, and Python's builtin
`sum(..., 2)` as there (ADBench's log(sum(exp(y)) + 2)).

Cost: the list of states grows at each step, so inference runs the time loop once
per step (unrolled): compiling takes about 2 s per step of the sequence, which puts
GradBench's default sizes (c = 1024 to 8192) out of reach; small sequences are served.
"""

import numpy as np
from myia import grad

from . import Function


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# The LSTM model
def lstm(weight, bias, hidden, cell, _input):
    gates = np.concatenate((_input, hidden, _input, hidden)) * weight + bias
    hsize = hidden.shape[0]
    forget = sigmoid(gates[0:hsize])
    ingate = sigmoid(gates[hsize:2 * hsize])
    outgate = sigmoid(gates[2 * hsize:3 * hsize])
    change = np.tanh(gates[3 * hsize:])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return (hidden, cell)


# Predict output given an input
def predict(w, w2, s, x):
    s2 = np.copy(s)
    x = x * w2[0]
    for i in range(0, len(s), 2):
        (s2[i], s2[i + 1]) = lstm(w[i], w[i + 1], s[i], s[i + 1], x)
        x = s2[i]
    return (x * w2[1] + w2[2], s2)


# Get the average loss for the LSTM across a sequence of inputs
def lstm_objective(main_params, extra_params, state, sequence):
    _range = range(0, len(sequence) - 1)
    total = 0.0
    count = 0
    _input = sequence[_range[0]]
    all_states = [state]
    for t in _range:
        ypred, new_state = predict(main_params, extra_params, all_states[t], _input)
        all_states.append(new_state)
        ynorm = ypred - np.log(sum(np.exp(ypred), 2))
        ygold = sequence[t + 1]
        total += sum(ygold * ynorm)
        count += ygold.shape[0]
        _input = ygold
    return -total / count


# ---- the protocol's side ------------------------------------------------------------


def arguments(input):
    return tuple(np.asarray(input[name], dtype=np.float64)
                 for name in ("main_params", "extra_params", "state", "sequence"))


def flattened(gradients):
    """The gradients of main_params and extra_params, each row after row, one list."""
    return np.concatenate([np.ravel(g) for g in gradients]).tolist()


FUNCTIONS = {
    "objective": Function(lstm_objective, prepare=arguments, post=float),
    "jacobian": Function(grad(lstm_objective, argnums=(0, 1)), prepare=arguments,
                         post=flattened),
}

"""A GradBench tool for Myia: `python -m benchmarks.gradbench [--backend vm|llvm]`.

GradBench (github.com/gradbench/gradbench) runs an *eval* that sends JSON messages to
a *tool* on stdin and reads one JSON response per message on stdout. protocol.py
answers them; runs.py times the evaluations; evals/ holds one module per eval, its
functions written in Myia's Python subset and differentiated with myia.grad / jvp.
"""

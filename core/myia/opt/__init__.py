"""The optimizer: rewrite rules to a fixed point (see `rules`), CSE, and the passes
that the pipeline runs (see `optimize`)."""

from .optimize import optimize
from .pass_manager import PassLog, Rule, count_ops, rule, run_pass

__all__ = ["optimize", "PassLog", "Rule", "count_ops", "rule", "run_pass"]

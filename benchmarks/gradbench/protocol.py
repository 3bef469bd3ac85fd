"""GradBench's protocol: one JSON message per line in, one JSON response per line out.

The eval drives: `start`, then `define` (a module), then `evaluate` (a function of
that module at an input) each followed by an `analysis` (the eval's verdict on the
output).  Every message is answered with its `id`; only define and evaluate say
whether they succeeded, and a failure carries the real reason in `error`, never a
made-up output (GradBench's CONTRIBUTING.md, section "Protocol").
"""

import json
import sys
import traceback

import myia
from myia.api import default_backend
from myia.errors import MyiaError

from .evals import UnknownName, load
from .runs import Runner, runs_requested

TOOL = "myia"


def error_text(exc):
    """What an `error` field says: a MyiaError is written for the user (stage, line,
    hint) and stands alone; anything else is a fault of the tool, so its traceback."""
    if isinstance(exc, (MyiaError, UnknownName)):
        return "".join(traceback.format_exception_only(exc)).rstrip()
    return "".join(traceback.format_exception(exc)).rstrip()


class Tool:
    """The tool's state across a session: defined modules, compiled functions, and
    the signatures already compiled (runs.Runner)."""

    def __init__(self, backend=None, log=sys.stderr):
        self.backend = backend or default_backend()
        self.log = log
        self.modules = {}  # module name -> {function name: evals.Function}
        self.compiled = {}  # (module, function) -> myia.compile(...) of its program
        self.runner = Runner()

    def answer(self, message):
        """The response to one message (without its id)."""
        kind = message.get("kind")
        if kind == "start":
            return {"tool": TOOL, "config": {"backend": self.backend}}
        if kind == "define":
            return self.define(message["module"])
        if kind == "evaluate":
            return self.evaluate(message["module"], message["function"], message["input"])
        if kind == "analysis" and not message.get("valid", True):
            # the eval found an output wrong: say so where a person running it looks
            print(f"gradbench: output of message {message.get('of')} judged invalid: "
                  f"{message.get('error')}", file=self.log, flush=True)
        return {}

    def define(self, module):
        try:
            self.functions(module)
        except Exception as e:  # an unknown module, or one whose code fails to import
            return {"success": False, "error": error_text(e)}
        return {"success": True}

    def functions(self, module):
        if module not in self.modules:
            self.modules[module] = load(module)
        return self.modules[module]

    def evaluate(self, module, function, input):
        try:
            spec = self.functions(module).get(function)
            if spec is None:
                known = ", ".join(sorted(self.functions(module)))
                raise UnknownName(f"module {module!r} has no function {function!r} "
                                  f"(it has: {known})")
            key = (module, function)
            if key not in self.compiled:
                self.compiled[key] = myia.compile(spec.program, backend=self.backend,
                                                  static_argnums=spec.static or None)
            min_runs, min_seconds = runs_requested(input)
            output, timings = self.runner.run(key, self.compiled[key], spec.prepare,
                                              input, min_runs, min_seconds)
            output = spec.post(output)
            # GradBench reads strict JSON: NaN or inf would break the eval, not fail it
            json.dumps(output, allow_nan=False)
        except Exception as e:
            return {"success": False, "error": error_text(e)}
        return {"success": True, "output": output, "timings": timings}


def serve(stdin, stdout, backend=None):
    """Answer messages from `stdin` on `stdout` until stdin closes.

    While it serves, Python's own sys.stdout is stderr: whatever else prints (a
    warning, a stray print in a library) must not land in the protocol stream."""
    tool = Tool(backend)
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        for line in iter(stdin.readline, ""):
            if not line.strip():
                continue
            message = json.loads(line)
            response = {"id": message["id"]} | tool.answer(message)
            stdout.write(json.dumps(response) + "\n")
            stdout.flush()
    except BrokenPipeError:  # the eval stopped reading: nothing left to answer
        pass
    finally:
        sys.stdout = saved

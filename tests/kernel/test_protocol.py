"""jupyter_kernel_test's protocol checks, with every sample that applies to Myia."""

import jupyter_kernel_test as jkt
import numpy as np

from .kernel_env import setup_jupyter_env


class MyiaKernelTests(jkt.KernelTests):
    kernel_name = "myia"
    language_name = "python"
    file_extension = ".py"

    @classmethod
    def setUpClass(cls):
        setup_jupyter_env()
        super().setUpClass()

    code_hello_world = "%%python\nprint('hello, world')"
    code_stderr = "%%python\nimport sys\nprint('an error', file=sys.stderr)"

    completion_samples = [
        {"text": "%gr", "matches": {"%grad"}},
        {"text": "%lsm", "matches": {"%lsmagic"}},
        {"text": "np.tan", "matches": {f"np.{n}" for n in dir(np) if n.startswith("tan")}},
        {"text": "value_and_g", "matches": {"value_and_grad"}},
    ]
    complete_code_samples = ["1 + 1", "def f(x):\n    return x\n\n", "%grad f",
                             "def f(x):\n    return x\n    ", "%%python\nx = 1\n\n"]
    incomplete_code_samples = ["def f(x):", "(1,", "def f(x):\n    return x",
                               "%%python\nx = 1"]
    invalid_code_samples = ["x = )", "def f(x) return x", "1 +"]

    code_generate_error = "undefined_name_xyz(1.0)"

    code_execute_result = [
        {"code": "1 + 2", "result": "3"},
        {"code": "2.0 * 3.0", "result": "6.0"},
        {"code": "grad(lambda x: x * x * x)(2.0)", "result": "12.0"},
        {"code": "(1.0, 2)", "result": "(1.0, 2)"},
    ]
    code_display_data = [
        {"code": "def sq(x):\n    return x * x\n%ir sq", "mime": "image/svg+xml"},
        {"code": "def sq(x):\n    return x * x\n%grad sq", "mime": "image/svg+xml"},
        {"code": "%plot np.sin -3 3", "mime": "image/png"},
    ]
    code_history_pattern = "1 + *"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "grad"
    code_page_something = "grad?"

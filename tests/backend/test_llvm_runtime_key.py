"""The engine's runtime module (the helpers compiled code calls by address) is found
in the object cache by a digest of what produces it, before its IR is built."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = textwrap.dedent("""
    import json
    import myia
    from myia.backend.llvm import runtime

    built = []
    real = runtime._runtime_module
    runtime._runtime_module = lambda e: built.append(1) or real(e)
    e = runtime.engine()
    def f(x):
        return x * x + 1.0

    value = myia.compile(f, backend="llvm")(3.0)
    print(json.dumps({"built": len(built), "key": runtime._runtime_key(e), "value": value}))
""")


def run(cache, **env):
    env = {**os.environ, "MYIA_CACHE_DIR": str(cache / "objects"), **env,
           "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "core"), ROOT])}
    script = cache / "child.py"
    script.write_text(CHILD)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_runtime_is_built_once_then_loaded_by_its_key(tmp_path):
    first = run(tmp_path)
    again = run(tmp_path)
    assert first["built"] == 1 and again["built"] == 0
    assert first["key"] == again["key"]
    assert first["value"] == again["value"] == 10.0


def test_a_setting_that_changes_the_code_changes_the_key(tmp_path):
    plain = run(tmp_path)
    other = run(tmp_path, MYIA_LLVM_TIERS="0")
    assert other["key"] != plain["key"] and other["built"] == 1


def test_a_damaged_runtime_entry_is_rebuilt(tmp_path):
    first = run(tmp_path)
    path = tmp_path / "objects" / (first["key"] + ".o")
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    again = run(tmp_path)
    assert again["built"] == 1 and again["value"] == 10.0

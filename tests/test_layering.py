"""The direction of imports, as DESIGN.md states it (docs/DESIGN.md, "Layers").

Every import of the compiler's modules is read from the source, those inside
functions included (an import hidden in a function is still a dependency), and each
must point down the list of layers below, or be one of the few exceptions listed with
their reasons.  The kernel and the REPL use the public API and `myia.introspect` only.
"""

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "core"
KERNEL = Path(__file__).resolve().parent.parent / "myia_kernel"

#: bottom to top: a module may import from its own layer and the layers below it
LAYERS = [
    ["errors", "gc_pause", "progress"],
    ["ir"],                 # graphs, the manager, the function protocol
    ["prim"],               # primitives, their traits and rules
    ["abstract"],           # the abstract values: types and shapes
    ["lib"],                # the NumPy and math surface, written in the subset
    ["parser"],             # Python source -> graphs
    ["ad"],                 # J, T, jet: derivatives as graph transforms
    ["infer"],              # inference and specialization
    ["opt"],                # the optimizer
    ["arguments"],          # values crossing between Python and programs
    ["backend"],            # vm, llvm, cupy
    ["viz"],                # pictures
    ["pipeline"],           # the stages, the backends' programs
    ["static_args"],        # static arguments (myia.compile's static_argnums)
    ["api", "api_custom", "api_jacobian", "api_vmap", "in_subset"],   # the public API (grad, jvp... also inside subset code)
    ["introspect", "__init__"],
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}

#: (importer, imported) -> why it points up; prefixes of dotted module names
EXCEPTIONS = {
    ("myia.prim.cumulative", "myia.parser"):
        "the Taylor rules of cumsum/cumprod apply helpers written in the subset, "
        "parsed once when a jet first needs them",
    ("myia.backend.cupy", "myia.pipeline"):
        "plan_for (an inspection helper, no GPU needed) asks the pipeline for the "
        "program whose fusion plan it shows",
    ("myia.backend.llvm", "myia.parser"):
        "LLVMBackend.run asks for a function's parameters (myia.parser.programs.header) "
        "to fill in defaults before a program exists",
}

#: what the kernel and the REPL may import from the compiler
KERNEL_MAY_IMPORT = {"myia", "myia.errors", "myia.backend", "myia.viz", "myia.viz.trace",
                     "myia.introspect"}


def _modules(root, package):
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        yield ".".join(p for p in parts if p != "__init__") or package, path


def _imports(module, path):
    """(imported module, line) for each import of a `myia` module in `path`, relative
    imports resolved."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            for a in node.names:  # `from myia import progress` imports a module
                sub = f"{name}.{a.name}"
                yield (sub if sub in MODULES else name), node.lineno


MODULES = {m for m, _ in _modules(CORE, "myia")}


def _layer(module):
    parts = module.split(".")
    return RANK.get(parts[1] if len(parts) > 1 else "__init__")


def _excused(src, dst):
    return any((src + ".").startswith(a + ".") and (dst + ".").startswith(b + ".")
               for a, b in EXCEPTIONS)


def test_every_module_has_a_layer():
    missing = sorted({m.split(".")[1] for m, _ in _modules(CORE, "myia") if "." in m
                      and _layer(m) is None})
    assert not missing, f"add these packages to LAYERS: {missing}"


def test_imports_point_down():
    up = set()
    for module, path in _modules(CORE, "myia"):
        for target, line in _imports(module, path):
            if not target.startswith("myia."):
                continue
            if _layer(target) > _layer(module) and not _excused(module, target):
                up.add(f"{path.relative_to(CORE)}:{line}: {module} imports {target}")
    assert not up, "imports that point up the layers:\n" + "\n".join(sorted(up))


def test_each_exception_is_still_needed():
    found = set()
    for module, path in _modules(CORE, "myia"):
        for target, _ in _imports(module, path):
            for a, b in EXCEPTIONS:
                if (module + ".").startswith(a + ".") and (target + ".").startswith(b + "."):
                    found.add((a, b))
    assert found == set(EXCEPTIONS), f"no longer needed: {set(EXCEPTIONS) - found}"


@pytest.mark.parametrize("module, path", list(_modules(KERNEL.parent, "myia_kernel")),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_the_kernel_uses_the_public_api(module, path):
    internal = [f"{path.name}:{line}: {target}" for target, line in _imports(module, path)
                if target.split(".")[0] == "myia" and target not in KERNEL_MAY_IMPORT]
    assert not internal, ("the kernel imports the compiler's internals; add what it needs "
                          "to myia.introspect:\n" + "\n".join(internal))


def _imports_inside_functions(path):
    """(line, text, reason) of each import statement inside a function of `path`; the
    reason is the comment that starts `# import here:` on the lines right above it (a
    comment block) or on the import's own line, else None."""
    lines = path.read_text().splitlines()
    for fn in ast.walk(ast.parse("\n".join(lines), str(path))):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            block = [lines[node.lineno - 1]]
            i = node.lineno - 2
            while i >= 0 and lines[i].strip().startswith("#"):
                block.append(lines[i])
                i -= 1
            reason = next((b.split("# import here:", 1)[1].strip() for b in block
                           if "# import here:" in b), None)
            yield node.lineno, lines[node.lineno - 1].strip(), reason


@pytest.mark.parametrize("root, package", [(CORE, "myia"), (KERNEL.parent, "myia_kernel")],
                         ids=["core", "kernel"])
def test_imports_inside_functions_say_why(root, package):
    # An import inside a function hides a dependency (often a cycle): each one that
    # stays says why, in a comment `# import here: <reason>` right above it.
    silent = [f"{path.relative_to(root)}:{line}: {text}"
              for _, path in _modules(root, package)
              for line, text, reason in _imports_inside_functions(path) if not reason]
    assert not silent, ("imports inside functions without a `# import here:` reason "
                        "(move them to the top, or say why they cannot be):\n"
                        + "\n".join(silent))

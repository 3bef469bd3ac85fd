"""python -m myia_kernel [install ... | repl ... | run NOTEBOOK ... | -f CONNECTION_FILE]

    install   install the `myia` kernelspec (see `install`)
    repl      the terminal REPL (see `repl`)
    run       run a notebook through the kernel, write it as HTML (see `run`)
    (else)    the kernel itself, as Jupyter launches it
"""

import sys


def main():
    args = sys.argv[1:]
    if args[:1] == ["install"]:
        from .install import main as install

        return install(args[1:])
    if args[:1] == ["run"]:
        from .run import main as run

        return run(args[1:])
    if args[:1] == ["repl"]:
        from .repl import main as repl

        return repl(args[1:])
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import MyiaKernel

    IPKernelApp.launch_instance(kernel_class=MyiaKernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
        # import here: each command loads only its own modules
        from .install import main as install

        return install(args[1:])
    if args[:1] == ["run"]:
        # import here: run loads jupyter_client's kernel manager, not needed by the others
        from .run import main as run

        return run(args[1:])
    if args[:1] == ["repl"]:
        # import here: the REPL loads the compiler (seconds): not for install or run
        from .repl import main as repl

        return repl(args[1:])
    # import here: ipykernel and the compiler load in seconds: only for the kernel itself
    from ipykernel.kernelapp import IPKernelApp

    # import here: the kernel loads the compiler (seconds), as above
    from .kernel import MyiaKernel

    IPKernelApp.launch_instance(kernel_class=MyiaKernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""LLVM IR text to object files: the pass pipelines and instruction selection, run in a
helper process.

Why a process.  llvmlite 0.50 never frees what a pass pipeline leaves behind: each
`PassBuilder` allocates a `PassInstrumentationCallbacks` that nothing deletes, and
each run of a module pass manager registers more callbacks in it.  That is about
56 KB for every module optimized at O3 (44 KB at O1), measured, whatever the
module's size, and no API of llvmlite releases it.  A kernel session that compiles
a function per redefinition and per cell would grow by that much per cell for as
long as it runs.  So, after its first `IN_PROCESS_FIRST` modules (a script that
compiles a few programs does not wait for a child to start: ~70 ms, measured), a
process runs the pipelines in a child process (`ObjectProcess`), which is replaced
by a fresh one after `RECYCLE_AFTER` modules: the leak dies with it.  The JIT
engines that load the objects stay in this process (loading leaks nothing).

A child that crashes (an LLVM abort on some module) costs the one compilation an
error, not the session; an interrupt while it works stops it at once.

`MYIA_LLVM_OBJECTS=inprocess` runs the pipelines in this process instead (what
`ObjectMaker` does in the child), for debugging with one process.

This file runs as the child's script: it imports nothing of Myia.
"""

import marshal
import os
import signal
import struct
import subprocess
import sys
import time

import llvmlite.binding as llvm

#: a child makes this many modules' objects, then a fresh one takes over (its leaked
#: callbacks, about 56 KB a module, go with it: at most ~15 MB)
RECYCLE_AFTER = 256
#: the modules a process optimizes itself before it starts a child (what they leak
#: stays: at most ~3.6 MB)
IN_PROCESS_FIRST = 64


class ObjectMaker:
    """Target machines for the host and the pipelines that `Engine.compile` runs on each
    part of a module (see `tiers`): "optimized" (the `level` pipeline), "straight"
    (at most O1), "kernels" (SROA only), "cold" (none); "cold" and "straight" parts
    get fast instruction selection."""

    def __init__(self, triple, cpu, features):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_triple(triple)
        self.triple = triple
        self.tm = target.create_target_machine(cpu=cpu, features=features, opt=3, jit=True)
        self.tm_cold = target.create_target_machine(cpu=cpu, features=features, opt=0,
                                                    jit=True)
        self.data_layout = str(self.tm.target_data)

    def make(self, parts, level, want_text=False):
        """Object files of `parts` ([(IR text, how)]); with `want_text`, the optimized IR
        of each part too.  Returns (objects, texts or None, parse seconds, optimize
        seconds)."""
        objs, texts = [], []
        t_parse = t_opt = 0.0
        for text, how in parts:
            ta = time.perf_counter()
            # a context per module: its types and constants go when it does
            context = llvm.create_context()
            mod = llvm.parse_assembly(text, context)
            mod.triple = self.triple
            mod.data_layout = self.data_layout
            mod.verify()
            tb = time.perf_counter()
            self.passes(mod, how, level)
            t_parse += tb - ta
            t_opt += time.perf_counter() - tb
            if want_text:
                texts.append(str(mod))
            tm = self.tm_cold if how in ("cold", "straight") else self.tm
            objs.append(tm.emit_object(mod))
            mod.close()
            context.close()
        return objs, (texts if want_text else None), t_parse, t_opt

    def passes(self, mod, how, level):
        if how == "optimized":
            self.optimize(mod, level)
        elif how == "straight":
            self.optimize(mod, min(level, 1))
        elif how == "kernels":
            self.sroa(mod)

    def optimize(self, mod, level=3):
        """The O3 pipeline, without loop unrolling (array kernels have static trip
        counts: unrolled fully, they multiply the code and the compile time by eight
        for no gain), without the loop vectorizer (the kernels are vectorized when
        they are emitted) and without the SLP vectorizer."""
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = False
        # nor the SLP vectorizer: on code over small arrays (GradBench saddle's
        # 2-vectors) it packed scalar loads into vectors and shuffled them back, 30-40%
        # slower per call; nothing else measured in `make bench` changed
        pto.slp_vectorization = False
        pto.loop_unrolling = False
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def sroa(self, mod):
        """Allocas to registers: all the kernels' IR needs (see `tiers`)."""
        pto = llvm.create_pipeline_tuning_options(speed_level=0)
        pb = llvm.create_pass_builder(self.tm, pto)
        pm = llvm.create_new_module_pass_manager()
        pm.add_sroa_pass()
        pm.run(mod, pb)


class ObjectProcessError(RuntimeError):
    """The child died while it made a module's objects (an LLVM crash)."""


class ObjectProcess:
    """`ObjectMaker.make` in a child process: one request at a time (the engine's lock
    is held), each a marshalled (parts, level, want_text) after its length on the
    child's stdin, answered likewise on its stdout.  The first `in_process_first`
    modules are made here, by `maker`."""

    def __init__(self, triple, cpu, features, in_process_first=0, maker=None):
        self.args = (triple, cpu, features)
        self.maker = maker
        self.local_left = in_process_first if maker is not None else 0
        self.child = None
        self.made = 0  # modules made by the current child
        self.started = 0  # children started, and modules made by all (for tests)
        self.total = 0
        self.last_exit = None

    def start(self):
        """Start a child unless one runs."""
        if self.child is None or self.child.poll() is not None:
            # a session of its own: an interrupt of the kernel's process group or a
            # terminal's Ctrl-C is this process's to handle (see `make`); the child
            # ends when its input does, this process's end included
            self.child = subprocess.Popen(
                [sys.executable, "-u", os.path.abspath(__file__), *self.args],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True,
                start_new_session=True)
            self.made = 0
            self.started += 1

    def make(self, parts, level, want_text=False):
        if self.local_left > 0:
            self.local_left -= 1
            self.total += 1
            return self.maker.make(parts, level, want_text)
        if self.made >= RECYCLE_AFTER:
            self.close()
        reply = self._ask((parts, level, want_text))
        if reply is None and self.made:
            # a child that had worked before died (killed while it waited?): a fresh
            # one tries once more
            reply = self._ask((parts, level, want_text))
        if reply is None:
            code = self.last_exit
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            raise ObjectProcessError(
                f"LLVM crashed while compiling this program (its process ended with "
                f"{how}); the session goes on, and other programs still compile")
        self.made += 1
        self.total += 1
        if reply[0] == "error":
            raise RuntimeError(reply[1])
        return reply[1:]

    def _ask(self, request):
        """The child's reply to `request`, or None if the child died first (then
        `last_exit` is its exit status)."""
        self.start()
        child = self.child
        try:
            _send(child.stdin, request)
            reply = _receive(child.stdout)
        except BrokenPipeError:
            reply = None
        except BaseException:  # an interrupt: the child's state is unknown
            self.close(kill=True)
            raise
        if reply is None:
            self.child = None
            self.last_exit = child.wait()
            child.stdout.close()
            try:
                child.stdin.close()
            except BrokenPipeError:
                pass
        return reply

    def close(self, kill=False):
        child, self.child = self.child, None
        if child is None:
            return
        if kill:
            child.kill()
        else:
            child.stdin.close()  # the child stops at the end of its input
        child.wait()
        child.stdout.close()
        if not child.stdin.closed:
            child.stdin.close()


def _send(stream, value):
    data = marshal.dumps(value)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    data = stream.read(n)
    return marshal.loads(data) if len(data) == n else None


def _serve(triple, cpu, features):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops this process
    maker = ObjectMaker(triple, cpu, features)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        request = _receive(stdin)
        if request is None:
            return
        parts, level, want_text = request
        try:
            reply = ("ok", *maker.make(parts, level, want_text))
        except Exception as err:  # a module LLVM rejects: the parent raises it
            reply = ("error", f"{type(err).__name__}: {err}")
        _send(stdout, reply)


if __name__ == "__main__":
    _serve(*sys.argv[1:4])

"""SSA construction over graphs: basic blocks, variables, phis (Braun et al. 2013).

Each basic block of a function is a `Graph`.  There are two kinds of block:

* a *branch* block has exactly one predecessor, which enters it through
  `switch(c, G1, G2)()` (an `if` branch, a loop body, a conditional expression).  It
  takes no parameters: it reads the variables of its predecessor directly, as free
  variables (nodes owned by the predecessor's graph).
* a *join* block (the block after an `if`, a loop header) is entered by *jumps*: a
  jump is a call of the block's graph constant in tail position, `after_if(x, y)`, and
  the arguments are the values of the block's phis, which are its parameters.

Braun's algorithm: reading a variable a block does not define looks in the
predecessors.  In a sealed join block (all its jumps are known) with one jump it reads
the predecessor; with several it makes a phi (a new parameter) and adds to every jump
the value the variable has in the jumping block.  A block that is not sealed yet (a loop
header before its back edges are parsed) always makes a phi; the jumps made later pass
an argument for every phi that exists when they are made, the ones made earlier get an
argument appended when a phi is created.  So every jump always carries one argument per
phi, in order, and sealing has nothing left to do but forbid new jumps.

After the whole function is parsed, `SSAState.finish` removes the trivial phis (those
whose arguments are all one same value, or the phi itself) and checks that no variable
is read where it may be undefined.
"""

from ..errors import MyiaNameError
from ..ir import Apply, Constant, Graph
from ..prim import ops as P
from .captures import stale_read_error


class Undefined:
    """The value of a variable read on a path where it was never assigned.

    It lives in a Constant only while parsing: `SSAState.finish` turns any Undefined
    still in use into a MyiaNameError at the location of the read.
    """

    __slots__ = ("name", "closure")

    def __init__(self, name, closure=False):
        self.name = name
        self.closure = closure

    def __repr__(self):
        return f"<undefined {self.name}>"


class Block:
    """A basic block: a graph, the current value of each variable in it, its phis.

    `pred`: the predecessor of a branch block (None for a join block or the entry).
    `jumps`: [(predecessor Block, jump Apply)] for a join block.
    `phis`: [(Parameter, variable name, loc, closure)], in the order of the jump
      arguments; loc and closure are those of the read that made the phi (for errors).
    """

    def __init__(self, ssa, graph, pred=None, join=False):
        self.ssa = ssa
        self.graph = graph
        self.pred = pred
        self.join = join
        self.sealed = not join
        self.jumps = []
        self.phis = []
        self.values = {}
        ssa.blocks.append(self)

    def __repr__(self):
        return f"<Block {self.graph.name}>"

    # ---- variables ---------------------------------------------------------------

    def write(self, name, node):
        self.values[name] = node

    def read(self, name, loc, closure=False):
        """The node holding variable `name` at the end of this block (so far).

        `loc` is the place of the read, for the error if the variable is undefined;
        `closure` says the read comes from a nested function (for that error message).
        """
        if name in self.values:
            return self.values[name]
        if self.pred is not None:
            node = self.pred.read(name, loc, closure)
        elif not self.join:
            # The entry block of the function: the variable was never assigned.
            node = Constant(Undefined(name, closure), loc)
        elif self.sealed and len(self.jumps) == 1:
            node = self.jumps[0][0].read(name, loc, closure)
        else:
            node = self._add_phi(name, loc, closure)
        self.values[name] = node
        return node

    def _add_phi(self, name, loc, closure):
        phi = self.graph.add_parameter(name, self.graph.loc)
        # Record the phi before reading its operands: a loop reads it back through the
        # back edge, and must find the phi itself (that is what ends the recursion).
        self.values[name] = phi
        self.phis.append((phi, name, loc, closure))
        self.ssa.phis.append((self, phi))
        for pred, jump in self.jumps:
            jump.inputs.append(pred.read(name, loc, closure))
        return phi

    # ---- control flow ------------------------------------------------------------

    def jump(self, target, loc):
        """End this block with a jump to the join block `target`."""
        assert target.join and not target.sealed, f"jump to sealed block {target}"
        node = Apply(self.graph, [Constant(target.graph, loc)], loc)
        self.ssa.nodes.append(node)
        # Reading the arguments may add phis to `target` (never for the variables of
        # its existing phis, but better safe): loop until every phi has its argument.
        while len(node.inputs) - 1 < len(target.phis):
            _, name, read_loc, closure = target.phis[len(node.inputs) - 1]
            node.inputs.append(self.read(name, read_loc, closure))
        target.jumps.append((self, node))
        self.graph.output = node
        return node

    def seal(self):
        self.sealed = True


class SSAState:
    """The blocks, phis and Apply nodes of one top-level function and all the
    functions nested in it (a nested function's reads create phis in its parents'
    blocks, so they are simplified together at the end)."""

    def __init__(self):
        self.blocks = []
        self.phis = []  # [(Block, Parameter)]
        self.nodes = []  # every Apply made by the parser
        self.seqs = []  # the `tuple_getitem(make_tuple(effects, value), 1)` nodes
        self.no_effects = set()  # the initial effects constant of each function
        self.hidden_names = set()
        #: [(node a closure captured, the variable's node where it is used, closure
        #: graph, variable name, loc of the use, (the phi read or None, what it must
        #: turn out to be for the check to apply))]: see myia.parser.captures
        self.stale_reads = []

    def apply(self, graph, fn, *args, loc=None, name=None):
        node = graph.apply(fn, *args, loc=loc, name=name)
        self.nodes.append(node)
        return node

    def seq(self, graph, effects, value, loc):
        """`value`, evaluated after `effects` (the asserts that came before)."""
        pair = self.apply(graph, P.make_tuple, effects, value, loc=loc)
        node = self.apply(graph, P.tuple_getitem, pair, 1, loc=loc)
        self.seqs.append(node)
        return node

    def hidden_name(self, base):
        """A variable name the user cannot write (it has a dot), unique in the function."""
        name = base
        k = 2
        while name in self.hidden_names:
            name = f"{base}{k}"
            k += 1
        self.hidden_names.add(name)
        return name

    def call(self, graph, fn, loc):
        """`fn()`: the call that ends a block with a switch on two branch graphs."""
        node = Apply(graph, [fn], loc)
        self.nodes.append(node)
        return node

    def finish(self):
        repl = self._trivial_phis()

        def find(node):
            while node in repl:
                node = repl[node]
            return node

        # `seq(effects, value)` where no assert can have run before it is just `value`
        # (see Parser.visit_Assert).  In creation order, so that chains collapse.
        for seq in self.seqs:
            effects, value = seq.inputs[1].inputs[1:]
            if find(effects) in self.no_effects:
                repl[seq] = find(value)
        for node in self.nodes:
            node.inputs = [find(i) for i in node.inputs]
        for block in self.blocks:
            if block.graph.output is not None:
                block.graph.output = find(block.graph.output)
        # Remove the replaced phis from their graphs and their arguments from the jumps.
        for block in self.blocks:
            keep = [k for k, (phi, *_) in enumerate(block.phis) if phi not in repl]
            if len(keep) == len(block.phis):
                continue
            block.graph.parameters = [block.phis[k][0] for k in keep]
            block.phis = [block.phis[k] for k in keep]
            for _, jump in block.jumps:
                args = jump.inputs[1:]
                jump.inputs = [jump.inputs[0]] + [args[k] for k in keep]
        self._check_undefined()
        for captured, current, graph, name, loc, (phi, target) in self.stale_reads:
            if phi is not None and find(phi) is not target \
                    and getattr(find(phi), "value", None) is not target:
                continue  # a phi that is not (only) this closure
            if find(captured) is not find(current):
                raise stale_read_error(graph, name, loc)

    def _trivial_phis(self):
        """{phi: value} for the phis that are all the same value (Braun's trivial phis),
        found again and again: removing one can make another trivial."""
        repl = {}

        def find(node):
            while node in repl:
                node = repl[node]
            return node

        changed = True
        while changed:
            changed = False
            for block, phi in self.phis:
                if phi in repl:
                    continue
                k, (_, name, loc, closure) = next(
                    (i, entry) for i, entry in enumerate(block.phis) if entry[0] is phi)
                operands = {find(jump.inputs[1 + k]) for _, jump in block.jumps}
                operands.discard(phi)
                if len(operands) == 1:
                    repl[phi] = operands.pop()
                    changed = True
                elif not operands:
                    repl[phi] = Constant(Undefined(name, closure), loc)
                    changed = True
        return repl

    def _check_undefined(self):
        for node in self.nodes:
            for i, inp in enumerate(node.inputs):
                if isinstance(inp, Constant) and isinstance(inp.value, Undefined):
                    raise _undefined_error(inp, is_jump=_is_jump(node))
        for block in self.blocks:
            out = block.graph.output
            if isinstance(out, Constant) and isinstance(out.value, Undefined):
                raise _undefined_error(out, is_jump=False)


def _is_jump(node):
    fn = node.inputs[0]
    return isinstance(fn, Constant) and isinstance(fn.value, Graph)


def _undefined_error(const, is_jump):
    u = const.value
    if u.closure:
        return MyiaNameError(
            f"closure reads variable `{u.name}` which is assigned after the function is "
            f"defined", const.loc,
            hint="a nested function captures the values variables have where it is "
            "defined: assign the variable before the `def` or `lambda`",
        )
    if is_jump:
        return MyiaNameError(
            f"variable `{u.name}` may be used before it is assigned: it is not assigned "
            f"on every path that reaches this point", const.loc,
            hint="assign it a value before the `if` or the loop",
        )
    return MyiaNameError(
        f"variable `{u.name}` is used before it is assigned", const.loc,
        hint="assign it before this line",
    )

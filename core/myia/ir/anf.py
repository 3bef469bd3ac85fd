"""The graph IR: `Graph`, and the three kinds of node `Apply`, `Parameter`, `Constant`.

A graph is a function: parameters in, one output node out.  Graphs are values: a
`Constant` may hold a `Graph`, and calling it is an `Apply` whose first input is that
constant.  A node owned by one graph and used by another is a *free variable* of the
user; evaluating the constant of a graph with free variables makes a closure.

Control flow is data: `switch(c, g1, g2)()` calls one of two graphs, and a loop is a
graph that calls itself in tail position.

Every node carries a `loc` (a `myia.errors.Location`, or None for synthesized
nodes), so that any later error or drawing can point back to the user's line.
"""

import itertools

_ids = itertools.count()


def id_mark():
    """An id below every node made from now on (nodes are numbered in creation order):
    `node.id > mark` tells a node made after the mark."""
    return next(_ids)


class Node:
    """Base of IR nodes.

    graph: the owner Graph (None for constants, which belong to no graph).
    loc: source Location or None.
    name: the user's variable name when the node was bound to one, for printing.
    abstract: the inferred type, once inference has run (None before).
    """

    __slots__ = ("graph", "loc", "name", "abstract", "primal", "adjoint", "id", "__weakref__")

    def __init__(self, graph, loc=None, name=None):
        self.graph = graph
        self.loc = loc
        self.name = name
        self.abstract = None
        # For a node made by a derivative transform, the node it is the image of
        # (environment keys follow it back to the user's node; see myia.ad).
        self.primal = None
        # For a node of a backpropagator, the primal node whose sensitivity it helps
        # compute (what a drawing of the transform groups it under: "◀ y = x * w").
        self.adjoint = None
        self.id = next(_ids)

    def is_apply(self, prim=None):
        return False

    def is_constant(self, cls=None):
        return False

    def is_parameter(self):
        return False

    def is_constant_graph(self):
        return False


class Apply(Node):
    """A call: `inputs[0]` is the function, `inputs[1:]` the arguments."""

    __slots__ = ("inputs",)

    def __init__(self, graph, inputs, loc=None, name=None):
        super().__init__(graph, loc, name)
        self.inputs = list(inputs)

    @property
    def fn(self):
        return self.inputs[0]

    @property
    def args(self):
        return self.inputs[1:]

    def is_apply(self, prim=None):
        """True if this is a call; with `prim`, only a call to that primitive."""
        if prim is None:
            return True
        fn = self.inputs[0]
        return isinstance(fn, Constant) and fn.value is prim

    def __repr__(self):
        return f"<Apply {self.name or self.id} in {self.graph}>"


class Parameter(Node):
    """An input of its graph."""

    __slots__ = ()

    def is_parameter(self):
        return True

    def __repr__(self):
        return f"<Parameter {self.name} of {self.graph}>"


class Constant(Node):
    """A literal value: a number, a tuple, a Graph, a Primitive, a Python object."""

    __slots__ = ("value",)

    def __init__(self, value, loc=None):
        super().__init__(None, loc)
        self.value = value

    def is_constant(self, cls=None):
        return cls is None or isinstance(self.value, cls)

    def is_constant_graph(self):
        return isinstance(self.value, Graph)

    def __repr__(self):
        return f"<Constant {self.value!r}>"


class Graph:
    """A function of the IR.

    parameters: list of Parameter; output: the Node it returns.
    defaults: {parameter name: default value} for parameters with defaults.
    flags: free-form annotations, e.g. {"kind": "bprop"} for drawing or
      {"core": True} for the library's own subset code.
    derived: {transform name: graph} the transforms of this very graph (J, T...),
      built once; not copied with the graph.  (A weak-key table would never free them:
      a derived graph refers back to this one.)
    """

    __slots__ = (
        "name", "parameters", "output", "loc", "defaults", "flags", "id", "derived",
        "__weakref__",
    )

    def __init__(self, name="graph", loc=None):
        self.name = name
        self.parameters = []
        self.output = None
        self.loc = loc
        self.defaults = {}
        self.flags = {}
        self.id = next(_ids)
        self.derived = {}

    def add_parameter(self, name=None, loc=None):
        p = Parameter(self, loc, name)
        self.parameters.append(p)
        return p

    def apply(self, fn, *args, loc=None, name=None):
        """Make an Apply in this graph; non-Node arguments become Constants."""
        inputs = [a if isinstance(a, Node) else Constant(a, loc) for a in (fn, *args)]
        return Apply(self, inputs, loc, name)

    def constant(self, value, loc=None):
        return Constant(value, loc)

    @property
    def param_names(self):
        return [p.name for p in self.parameters]

    def __str__(self):
        # import here: the printer reads this module's classes
        from .print import format_graph

        return format_graph(self)

    def __repr__(self):
        return f"<Graph {self.name}>"


class EnvKey:
    """The key of a free variable in an environment (see myia.prim.grad_ops): the
    node it denotes.  A compile-time constant; cloning maps it along with its node."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __eq__(self, other):
        return isinstance(other, EnvKey) and other.node is self.node

    def __hash__(self):
        return hash(id(self.node))

    def __repr__(self):
        return f"key({self.node.name or self.node.id})"

    @property
    def ir_name(self):
        return f"key:{self.node.name or self.node.id}"


def is_graph_constant(node):
    return isinstance(node, Constant) and isinstance(node.value, Graph)


def is_loop_graph(graph):
    """Whether the parser made `graph` for a loop, its header or its body
    (`f:while_header`, `f:for_body`: myia.parser.parse), or a transform made it of
    one (`▶f:while_header`): a chain of its calls is a loop's iterations."""
    return any(f":{loop}_{part}" in graph.name
               for loop in ("while", "for") for part in ("header", "body"))

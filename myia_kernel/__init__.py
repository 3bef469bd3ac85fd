"""The Myia Jupyter kernel and terminal REPL."""

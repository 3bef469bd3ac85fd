"""Shared pytest configuration.

Markers (`gpu`, `slow`) are declared in pyproject.toml. Keep this module free of
module-level `import myia`, so that collection works while the package is incomplete;
fixtures that need myia import it inside the fixture body.
"""

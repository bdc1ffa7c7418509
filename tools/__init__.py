"""Scripts run by hand, outside the production package: each says how to run it in its docstring."""

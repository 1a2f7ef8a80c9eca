"""Math answers read by a grammar, never executed: extraction, parsing, exact, numeric and
symbolic comparison for the ``answer_math`` kind.

Model text becomes a small tree of tuples (``_grammar``); nothing here calls ``eval``, sympy's
``parse_expr``/``sympify`` or latex2sympy on it. sympy and mpmath are imported only when a
comparison needs them, so ``import assay`` stays light.
"""

"""Canonicalization patterns of the ta, tl and pallas ops (`-p canonicalize` runs them).

Each op lists its patterns through a `HasCanonicalizationPatternsTrait`, which imports
them from here lazily (the model is xDSL's `transforms/canonicalization_patterns/`).
Every pattern keeps what the program computes.
"""

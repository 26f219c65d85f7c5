"""The suite writes the bytecode of obs and of its own modules (pytest's rewritten ones) even where
PYTHONDONTWRITEBYTECODE is set: otherwise every test worker rewrites every test module (about 6 s each), and
every obs process a test starts compiles obs again. This package is imported before anything of the suite."""

import sys

sys.dont_write_bytecode = False

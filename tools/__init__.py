"""What writes the files made from the program: completions, man pages, the docs' generated regions.

None of it runs for a user, so none of it ships in the wheel (``[tool.setuptools.packages.find]``
includes ``lancelot_cli*`` only); the files it writes do. Run it from a checkout:
``python -m tools.generate [--check]``; the tests import it from the repository root, and an
import-linter contract keeps `lancelot_cli` from importing it.
"""

"""The write side of storage: the only code that changes a table, used by `lancelot index` alone
(the server cannot import it: an import-linter contract and tests/test_read_only.py)."""

"""The version, in a module of its own so that importing it pulls in nothing else."""

__version__ = "0.1.0"

"""Process tuning for a long-running server: glibc malloc settings and the garbage collector paused
while the server starts. Entry points switch it on through ``lancelot_cli.startup``."""

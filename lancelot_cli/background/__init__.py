"""The background server: the CLI's read commands answered by a `lancelot serve --socket` kept running.

Two jobs, apart from the commands that use them: ``client`` (the MCP client over the socket: one
``tools/call``, its reply or None to run in-process) and ``daemon`` (where the server lives, starting
it, telling it to stop, what `status` says of it).

A CLI process spends most of its second in ``import lancedb``. With ``LANCELOT_WARM`` above 0 (minutes,
default 10) `search`, `query`, `show` and `status` send an MCP ``tools/call`` to a background
`lancelot serve --socket PATH --idle MINUTES` (server/transports/unix.py) and render the tool's reply; the
request's `_meta` asks for the engine's whole reply (server/app.py ``WHOLE_REPLY_KEY``), which is the
command's ``--json`` form, so output is the same as in-process. When no server answers, the command
runs in-process as always and ``daemon.start_pending`` (called once the output is written) starts one for
the next command, saying so on stderr the first time. Anything wrong on the way (no server, a
refused or unreadable reply, an argument the tool rejects, no reply in ``REPLY_TIMEOUT``) runs the
call in-process instead: never a worse answer than without it. This package is standard library
only: no SDK, no pydantic, no lancedb.

One server for every database, at most one alive. The server answers for whichever database a call
names (``DATABASE_KEY`` in the call's `_meta`; server/databases.py keeps three open); its socket is
named by a fingerprint of the version, the Python, every other setting's value, the variables that
choose a key or object-store credentials, and the working folder when the database path is relative.
A call names its database as location.py parses it (``~`` expanded by the command, a relative path
made absolute in the command's folder), never as typed: the server's home and folder may differ. The
server keeps the environment and folder it was started with; a command whose fingerprint differs
starts its own and the others are told to exit (their sockets removed), so no server answers with
another environment's settings or key and at most one holds memory. A command that failed starts
none (app.py ``main``): a mistyped `--db` would otherwise leave a server behind. Its files live in a
folder only this user may enter: 0700, owned by us, not a link (``$XDG_RUNTIME_DIR/lancelot``, else
``<temp dir>/lancelot-<uid>``); otherwise nothing is started. POSIX only.

Why one server for every database rather than one per database with at most one alive (issue 39):
100 searches alternating between three databases (the sample, the FastAPI docs: 1,396 chunks, and
these docs: 219) on a shared 2-core machine left, one server per database (before): 3 servers,
584 MiB, 0.16 s a search; one alive serving one database: 1 server of 207 MiB (30 searches), but each
search after a switch ran in-process and started a server (0.82 s median with three in a row per
database, 1.26 s alternating each time, 4 processes for a moment); one for every database: 1
server of 218 MiB, 0.17 s a search after a switch, 0.29 s the first time a database is opened.
"""

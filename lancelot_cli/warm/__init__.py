"""The warm process: lancedb kept loaded so `search`, `query`, `show` and `status` start fast (issue 13).

A CLI process spends most of its second in ``import lancedb``. With ``LANCELOT_WARM`` above 0 (minutes,
default 10) the first read command runs in-process as always and then starts a detached warm process
(`daemon`) that imports lancedb once and answers the next read commands' engine calls over a
private AF_UNIX socket; it exits after that many idle minutes. The CLI keeps parsing and rendering
(`client` hands it a stand-in with the Engine's methods), so output is the same by construction.

* ``runtime``: where the socket lives (a 0700 folder of ours), and the code fingerprint in its name.
* ``protocol``: framing, requests as JSON, replies as a pickle only our models may be read from.
* ``client``: the stand-in, with a fall back to the in-process engine on any problem, and the start.
* ``daemon``: the warm process itself; read-only (it never imports the indexer or a write path).
"""

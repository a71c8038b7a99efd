"""The server as transports carry it: stdio, Streamable HTTP (with its login, limits and worker
processes), a Unix socket for the CLI's background server, and AWS Lambda. Each turns bytes into MCP
messages for the one server of ``server/app.py``; none adds a tool or changes a reply."""

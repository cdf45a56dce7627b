"""``zcoder --acp``: zcoder as an Agent Client Protocol agent, for editors and scripts.

server: the protocol's methods and the process (run_acp); session: one zcoder session
behind an ACP session; updates: agent events as session updates, and a saved session
replayed; approvals: zcoder's approval questions as permission requests (permission:
the client method they call, which remote/ answers too); transport: the stdio framing
that answers malformed messages and keeps standard output the protocol's alone.
docs/editors.md says how editors start it.
"""

"""``zcoder --connect``: this machine's TUI, the agent on another, over OpenSSH and ACP.

target: ``[user@]host[:port][/path]`` and the ssh command line; connection: the ssh
subprocess and the SDK's client side over it; events: ACP session updates read back as
the agent events the TUI draws; agent: RemoteAgent, which the turn worker drives as it
drives a local Agent; app: the TUI with the remote host's parts. docs/remote.md says how
to set it up.
"""

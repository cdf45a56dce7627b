"""``python -m zcoder.relay``: a relay-only peer (see zcoder.relay.peer)."""

import signal
import sys

from zcoder.relay.peer import main

# SIGTERM and SIGHUP end the peer through the same clean stop as "quit".
for _signal in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(_signal, lambda *_: sys.exit(143))

raise SystemExit(main())

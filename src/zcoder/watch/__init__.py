"""``zcoder agents --watch``: a live view of every zcoder on this machine (zcoder.watch.app)."""

"""The user's log file for the interactive app: ``$ZCODER_HOME/zcoder.log``.

Textual owns the terminal, so a log record must never reach it. The app sends zcoder's
records to one private file instead (mode 0600, in a 0700 directory), size-bounded by
rotation (``zcoder.log``, ``.1``, ``.2``); every process writes its pid on each line.
The relay logs each refused request there at INFO (see docs/relay.md).

Imported only on the interactive path, so ``--help`` never pays for it.
"""

from __future__ import annotations

import fcntl
import io
import logging
import logging.handlers
import os
import stat
from pathlib import Path
from typing import Final

from zcoder.base.safefile import PRIVATE_FILE_MODE, ensure_private_dir

LOG_FILE_NAME: Final = "zcoder.log"
MAX_LOG_BYTES: Final = 1 << 20
LOG_BACKUPS: Final = 2
LOG_FORMAT: Final = "%(asctime)s zcoder[%(process)d] %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose every file is a private regular file, never a link."""

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        # Non-blocking only while opening: a FIFO put in its place must not hang the app.
        fd = os.open(self.baseFilename, flags | os.O_NONBLOCK, PRIVATE_FILE_MODE)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{self.baseFilename} is not a regular file")
            os.fchmod(fd, PRIVATE_FILE_MODE)  # made earlier, or by hand with another mode
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            return open(fd, "a", encoding=self.encoding, errors=self.errors)
        except BaseException:
            os.close(fd)
            raise

    def handleError(self, record: logging.LogRecord) -> None:
        """A record that cannot be written (disk full, file gone) is dropped, silently:
        logging's default prints a traceback to stderr, which is the app's screen."""


def setup_logging(home: Path) -> Path | None:
    """Send zcoder's log records to ``home/zcoder.log``, the relay's from INFO up.

    Returns the file's path, or None when it cannot be opened; then records are dropped
    (never printed to the terminal) and the app runs on.
    """
    logger = logging.getLogger("zcoder")
    path = home / LOG_FILE_NAME
    try:
        ensure_private_dir(home)
        handler: logging.Handler = PrivateRotatingFileHandler(
            path, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
    except OSError:
        logger.addHandler(logging.NullHandler())
        return None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger.addHandler(handler)
    logging.getLogger("zcoder.relay").setLevel(logging.INFO)
    return path

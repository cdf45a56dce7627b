"""Allow ``python -m zcoder``."""

from zcoder.cli import main

raise SystemExit(main())

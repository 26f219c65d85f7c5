"""`python -m sync.cli`: the same command line as the installed `obs`."""

import sys

from sync.cli.app import main

sys.exit(main())

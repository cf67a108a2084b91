"""``python -m simdplan``: the same as the ``simdplan`` command (see simdplan.cli)."""

import sys

from simdplan.cli import main

sys.exit(main())

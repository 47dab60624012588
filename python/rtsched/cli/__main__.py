"""``python -m rtsched.cli``, the same as ``python -m rtsched`` and the ``rtsched`` command."""

import sys

from . import main

sys.exit(main())

"""`python -m loadtest.consistency`: see loadtest/consistency/__init__.py."""

import sys

from loadtest.consistency.driver import main

sys.exit(main())

"""`python -m loadtest.faults`: see loadtest/faults/__init__.py."""

import sys

from loadtest.faults.suite import main

sys.exit(main())

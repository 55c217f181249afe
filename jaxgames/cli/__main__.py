"""``python -m jaxgames.cli <command> ...``."""

import sys

from jaxgames.cli import main

sys.exit(main())

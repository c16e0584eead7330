"""``python -m finegrain``: the same CLI as the ``finegrain`` script."""

import sys

from finegrain.cli.main import main

if __name__ == "__main__":
    sys.exit(main())

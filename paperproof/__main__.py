"""`python -m paperproof`: the command, with the working folder taken off the import path first.

`python -m` puts the working folder first on `sys.path`, and `paperproof verify .` runs in the checkout it
verifies: the checkout's `shutil.py` would be imported by the builder, on the host. The package is already
imported here, so its own modules are found through it; the standard library's then come from where they live.
"""

import os
import sys

sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]

from paperproof.cli import main  # noqa: E402 - after the path is cleaned

raise SystemExit(main())

"""Where the hostile samples aim. The test writes targets.json beside this file (a listener's port,
canary paths, a root-only secret); run by hand, the defaults below aim at nothing that exists."""

import json
import os

_DEFAULTS = {
    "tcp": [["127.0.0.1", 9]],
    "canary_tmp": "/tmp/paperproof-hostile-canary",
    "canary_shm": "/dev/shm/paperproof-hostile-canary",
    "canary_home": "/root/.paperproof-hostile-canary",
    "secret_file": "/etc/shadow",
    "marker": "paperproof-hostile-grandchild",
}


def _targets():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "targets.json")) as handle:
            return {**_DEFAULTS, **json.load(handle)}
    except OSError:
        return dict(_DEFAULTS)

"""Provider tests use the shared loopback-server fixtures of tests/servers."""

import sys

if "servers.fixtures" not in sys.modules:  # not yet loaded through tests/conftest.py's pytest_plugins
    from servers.fixtures import *  # noqa: F403

"""Their tests/mcp/conftest.py, added by scripts/test-python.sh: the pools
of the toolbridge FakeMCPServers a test made are dropped after it (their
servers stop)."""

import pytest
from agents_fake_server import forget_all


@pytest.fixture(autouse=True)
def _toolbridge_pools():
    yield
    forget_all()

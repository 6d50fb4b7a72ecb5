"""The exceptions toolbridge raises. Every message names the server, tool or
file concerned and says what to do."""

from __future__ import annotations

__all__ = ["ToolbridgeError", "ConfigError", "UsageError", "ServerError", "CallTimeout"]


class ToolbridgeError(Exception):
    """Base class of every toolbridge error."""


class ConfigError(ToolbridgeError, ValueError):
    """The config file or dict is wrong (the message says where)."""


class UsageError(ToolbridgeError, ValueError):
    """What was asked for does not exist or is not allowed: an unknown or
    disabled server, tool, prompt or resource, bad arguments, a response in
    another format."""


class ServerError(ToolbridgeError):
    """A server failed to start, closed, or refused the request."""


class CallTimeout(ToolbridgeError, TimeoutError):
    """A call, request or server start passed its time; a request in flight
    was cancelled on the server, whose connection stays usable."""

"""`python -m toolbridge example-server`: the built-in example MCP server on
stdin/stdout (what a pool without a config file runs)."""

from __future__ import annotations

import sys

from toolbridge import _native


def main(argv: list[str]) -> int:
    if argv == ["example-server"]:
        _native.serve_example_server()
        return 0
    print("usage: python -m toolbridge example-server", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

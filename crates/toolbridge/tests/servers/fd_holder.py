"""Holds the file descriptors sent to it until it is killed (for tests).

Usage: python3 fd_holder.py SOCKET_PATH
Listens on the Unix socket SOCKET_PATH, prints "ready", then keeps every
descriptor a client sends it (SCM_RIGHTS), answering "ok" to each. Started
by a test, not by a server, so no server's process group or process tree
ever holds it.
"""

import socket
import sys

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(4)
print("ready", flush=True)
held = []
while True:
    conn, _ = listener.accept()
    _, fds, _, _ = socket.recv_fds(conn, 16, 8)
    held.extend(fds)
    conn.sendall(b"ok")
    conn.close()

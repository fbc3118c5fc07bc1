"""Routes of pty_app: `original` at the root, `v2` under /api. The WebSockets are in routing.py."""
from agentserver.http.api import route
from pty_app.api import pty

original: list = [
    route("pty", pty.PtyCollectionView, "pty.list", "pty.create"),
    route("pty/shells", pty.PtyShellsView, "pty.shells"),
    route("pty/<str:ptyID>", pty.PtyItemView, "pty.get", "pty.update", "pty.remove"),
    route("pty/<str:ptyID>/connect", pty.PtyConnectView, "pty.connect"),
    route("pty/<str:ptyID>/connect-token", pty.PtyConnectTokenView, "pty.connectToken"),
]
v2: list = [
    route("pty", pty.V2PtyCollectionView, "pty.list", "pty.create"),
    route("pty/<str:ptyID>", pty.V2PtyItemView, "pty.get", "pty.update", "pty.delete"),
    route("pty/<str:ptyID>/connect", pty.PtyConnectView, "pty.connect"),
    route("pty/<str:ptyID>/connect-token", pty.V2PtyConnectTokenView, "pty.connectToken"),
]

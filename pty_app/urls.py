"""Routes of pty_app: `original` at the root, `v2` under /api. The WebSockets are in routing.py."""
from django.urls import path

from pty_app import views

original: list = [
    path("pty", views.PtyCollectionView.as_view(), name="pty.list"),
    path("pty/shells", views.PtyShellsView.as_view(), name="pty.shells"),
    path("pty/<str:ptyID>", views.PtyItemView.as_view(), name="pty.get"),
    path("pty/<str:ptyID>/connect", views.PtyConnectView.as_view(), name="pty.connect"),
    path("pty/<str:ptyID>/connect-token", views.PtyConnectTokenView.as_view(), name="pty.connectToken"),
]
v2: list = [
    path("pty", views.V2PtyCollectionView.as_view(), name="pty.list"),
    path("pty/<str:ptyID>", views.V2PtyItemView.as_view(), name="pty.get"),
    path("pty/<str:ptyID>/connect", views.PtyConnectView.as_view(), name="pty.connect"),
]

"""WebSocket routes (mounted in server/asgi.py behind the origin check and token auth)."""
from django.urls import path

from pty_app.api.socket import pty_socket

websocket_urlpatterns: list = [
    path("pty/<str:ptyID>/connect", pty_socket, name="pty.connect"),
    path("api/pty/<str:ptyID>/connect", pty_socket, name="v2:pty.connect"),
]

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "server.settings")
django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402  (after Django setup)

from agentserver.http.handler import PooledASGIHandler  # noqa: E402

django_asgi_app = PooledASGIHandler(threads=settings.HTTP_THREADS, running=settings.HTTP_RUNNING)

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402  (after Django setup)

from agentserver.sandbox import launcher as sandbox  # noqa: E402
from agentserver.workers import shutdown

sandbox.check_at_startup()

from auth_app.websocket import WebSocketAuthMiddleware, WebSocketOriginValidator  # noqa: E402
from pty_app.routing import websocket_urlpatterns  # noqa: E402
from pty_app.tickets import websocket_ticket_user  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "lifespan": shutdown.lifespan,
        "websocket": WebSocketOriginValidator(WebSocketAuthMiddleware(URLRouter(websocket_urlpatterns),
                                                                      ticket_user=websocket_ticket_user)),
    }
)

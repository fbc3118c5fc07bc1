"""The project package: settings, the root URL conf, the ASGI application, the command that serves it, and
the server-wide routes that belong to no app (health, the OpenAPI document, the event streams, client logs).
It sits above every app; nothing imports it."""

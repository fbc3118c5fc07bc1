from django.apps import AppConfig


class PtyAppConfig(AppConfig):
    name = "pty_app"
    label = "pty_app"

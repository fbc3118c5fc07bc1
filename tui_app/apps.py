from django.apps import AppConfig


class TuiAppConfig(AppConfig):
    name = "tui_app"
    label = "tui_app"

from django.apps import AppConfig


class WebAppConfig(AppConfig):
    name = "web_app"
    label = "web_app"

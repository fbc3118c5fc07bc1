from django.apps import AppConfig


class ProvidersAppConfig(AppConfig):
    name = "providers_app"
    label = "providers_app"

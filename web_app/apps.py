from django.apps import AppConfig


class WebAppConfig(AppConfig):
    name = "web_app"
    label = "web_app"

    def ready(self) -> None:
        from web_app import sign_in_records

        sign_in_records.connect()

from django.apps import AppConfig


class ProvidersAppConfig(AppConfig):
    name = "providers_app"
    label = "providers_app"

    def ready(self) -> None:
        from policy_app import known
        from providers_app import catalog

        # The admin of the managed policy flags provider and model names the catalog does not have.
        known.read_catalog_with(lambda: {provider_id: set(provider.get("models") or {})
                                         for provider_id, provider in catalog.catalog().items()})

"""Routes of providers_app: `original` at the root, `v2` under /api."""
from agentserver.http.api import route
from providers_app.api import console, integrations, mcp, providers

original: list = [
    route("provider", providers.ProviderListView, "provider.list"),
    route("provider/auth", providers.ProviderAuthView, "provider.auth"),
    route("provider/<str:providerID>/oauth/authorize", providers.OAuthAuthorizeView, "provider.oauth.authorize"),
    route("provider/<str:providerID>/oauth/callback", providers.OAuthCallbackView, "provider.oauth.callback"),
    route("config/providers", providers.ConfigProvidersView, "config.providers"),
    route("experimental/console", console.ConsoleView, "experimental.console.get"),
    route("experimental/console/orgs", console.ConsoleOrgsView, "experimental.console.listOrgs"),
    route("experimental/console/switch", console.ConsoleSwitchView, "experimental.console.switchOrg"),
    route("mcp", mcp.McpStatusView, "mcp.status", "mcp.add"),
    route("mcp/<str:name>/auth", mcp.McpAuthView, "mcp.auth.start", "mcp.auth.remove"),
    route("mcp/<str:name>/auth/callback", mcp.McpAuthCallbackView, "mcp.auth.callback"),
    route("mcp/<str:name>/auth/authenticate", mcp.McpAuthenticateView, "mcp.auth.authenticate"),
    route("mcp/<str:name>/connect", mcp.McpConnectView, "mcp.connect"),
    route("mcp/<str:name>/disconnect", mcp.McpDisconnectView, "mcp.disconnect"),
    route("experimental/resource", mcp.ResourceView, "experimental.resource.list"),
]
v2: list = [
    route("provider", providers.V2ProviderListView, "provider.list"),
    route("provider/<str:providerID>", providers.V2ProviderView, "provider.get"),
    route("model", providers.V2ModelListView, "model.list"),
    route("catalog/model", providers.CatalogModelListView, "catalog.model.list"),
    # Model ids may contain slashes (openrouter's "anthropic/claude-…").
    route("catalog/model/<str:providerID>/<path:modelID>", providers.CatalogModelView, "catalog.model.get"),
    route("integration", integrations.IntegrationView, "integration.list"),
    # Before integration/<integrationID>, which would take "attempt" for an id.
    route("integration/attempt/<str:attemptID>", integrations.AttemptView, "integration.attempt.status",
          "integration.attempt.cancel"),
    route("integration/attempt/<str:attemptID>/complete", integrations.AttemptCompleteView,
          "integration.attempt.complete"),
    route("integration/<str:integrationID>", integrations.IntegrationItemView, "integration.get"),
    route("integration/<str:integrationID>/connect/key", integrations.ConnectKeyView, "integration.connect.key"),
    route("integration/<str:integrationID>/connect/oauth", integrations.ConnectOAuthView,
          "integration.connect.oauth"),
    route("credential/<str:credentialID>", integrations.CredentialView, "credential.update", "credential.remove"),
    route("mcp/server", mcp.V2ServerView, "mcp.server.list", "mcp.server.create"),
    route("mcp/server/<str:name>/oauth", mcp.V2OAuthView, "mcp.server.oauth.start", "mcp.server.oauth.delete"),
    route("mcp/server/<str:name>/oauth/callback", mcp.V2OAuthCallbackView, "mcp.server.oauth.callback"),
    route("mcp/prompt", mcp.V2PromptListView, "mcp.prompt.list"),
    route("mcp/prompt/render", mcp.V2PromptRenderView, "mcp.prompt.render"),
    route("mcp/resource", mcp.V2ResourceListView, "mcp.resource.list"),
    route("mcp/resource/read", mcp.V2ResourceReadView, "mcp.resource.read"),
]

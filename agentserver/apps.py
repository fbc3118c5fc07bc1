from django.apps import AppConfig


class AgentServerConfig(AppConfig):
    name = "agentserver"
    label = "agentserver"

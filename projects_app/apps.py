from django.apps import AppConfig


class ProjectsAppConfig(AppConfig):
    name = "projects_app"
    label = "projects_app"

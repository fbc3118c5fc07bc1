from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from auth_app.tokens import token_create


class Command(BaseCommand):
    help = "Create an API token for USER and print it (last word of the output). It is shown only once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="cli")

    def handle(self, *args, username, name, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No such user: {username}")
        _, secret = token_create(user=user, name=name)
        self.stdout.write(f"API token for {username} (shown once): {secret}")

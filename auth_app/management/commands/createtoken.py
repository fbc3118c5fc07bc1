import datetime

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit_app.actors import Actor
from auth_app.tokens import token_create


def _days(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 3650:
        raise ValueError(value)
    return int(value)


class Command(BaseCommand):
    help = "Create an API token for USER and print it (last word of the output). It is shown only once."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="cli")
        parser.add_argument("--expires-in-days", type=_days, default=None, metavar="DAYS",
                            help="the token stops working after DAYS days (1 to 3650); default: never")

    def handle(self, *args, username, name, expires_in_days, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No such user: {username}")
        lifetime = datetime.timedelta(days=expires_in_days) if expires_in_days else None
        token, secret = token_create(user=user, name=name, lifetime=lifetime,
                                     actor=Actor.system("manage.py createtoken"))
        if token.expires is not None:
            self.stdout.write(f"It expires at {token.expires:%Y-%m-%d %H:%M} UTC.")
        self.stdout.write(f"API token for {username} (shown once): {secret}")

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from auth_app.roots import RootRefused, check_root
from auth_app.tokens import roots_add, roots_of, roots_remove


class Command(BaseCommand):
    help = "Show or edit the directories USER may work in. The first one is the user's default."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--add", action="append", default=[], metavar="DIR")
        parser.add_argument("--remove", action="append", default=[], metavar="DIR")

    def handle(self, *args, username, add, remove, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No such user: {username}")
        try:
            added = [check_root(directory) for directory in add]
        except RootRefused as error:
            raise CommandError(str(error)) from None
        for directory in added:
            roots_add(user=user, path=directory)
        for directory in remove:
            if not roots_remove(user=user, path=directory):
                raise CommandError(f"{username} has no root {directory}")
        for root in roots_of(user):
            self.stdout.write(root)

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit_app.actors import Actor
from auth_app.roots import RootRefused, check_root, default_roots
from auth_app.tokens import roots_add, token_create


class Command(BaseCommand):
    help = "On a fresh database: create the first admin, give it its default roots and print an API token once."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("AGENTSERVER_ADMIN_USER", "admin"))
        parser.add_argument("--root", action="append", default=[],
                            help="default: AGENTSERVER_DEFAULT_ROOTS, else your home directory (auth_app/roots.py)")

    def handle(self, *args, username, root, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        # Every root checked before the admin exists: a refusal must not leave a first admin without roots
        # (the next run would find a user and do nothing).
        try:
            directories = [check_root(directory) for directory in root or settings.DEFAULT_ROOTS or default_roots()]
        except RootRefused as error:
            raise CommandError(str(error)) from None
        password = secrets.token_urlsafe(12)
        user = User.objects.create_superuser(username=username, password=password, email="")
        for directory in directories:
            roots_add(user=user, path=directory)
        _, secret = token_create(user=user, name="bootstrap", actor=Actor.system("manage.py bootstrap"))
        self.stdout.write(
            "\nFirst start: created admin user "
            f"'{username}' (admin password: {password}).\n"
            f"Roots: {', '.join(r.path for r in user.roots.all())}\n"
            f"API token (shown once): {secret}\n"
        )

"""Re-encrypt every stored credential under the newest key of AGENTSERVER_FERNET_KEYS.

Rotation: put the new key first (`new,old`), run this command, then drop the old key."""
from django.core.management.base import BaseCommand, CommandError

from auth_app.accounts import rotate_all


class Command(BaseCommand):
    help = "Re-encrypt stored credentials (auth accounts) under the newest Fernet key."

    def handle(self, *args, **options):
        rotated, failed = rotate_all()
        self.stdout.write(f"Re-encrypted {rotated} credential(s) under the newest key.")
        if failed:
            raise CommandError(f"{failed} credential(s) could not be decrypted with the configured keys.")

import shutil
import subprocess
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from web_app.install import InstallError, install, opencode_binary


class Command(BaseCommand):
    help = ("Copy opencode's web app out of the pinned opencode binary into the directory agentserver serves "
            "it from (settings.WEB_APP_DIR).")

    def add_arguments(self, parser):
        parser.add_argument("--binary", help="the opencode binary (default: OPENCODE_BIN, else .tools/)")
        parser.add_argument("--target", help=f"default: {settings.WEB_APP_DIR}")
        parser.add_argument("--if-missing", action="store_true",
                            help="do nothing when the copy is there, or AGENTSERVER_WEB_APP names another")
        parser.add_argument("--npm", action="store_true",
                            help=f"without a binary, install opencode-ai@{settings.OPENCODE_NPM_VERSION} into .tools/")
        parser.add_argument("--any-version", action="store_true",
                            help=f"accept another app version than the pinned {settings.WEB_APP_VERSION}")

    def handle(self, *args, binary, target, if_missing, npm, any_version, **options):
        target = Path(target or settings.WEB_APP_DIR)
        if if_missing and ((target / "index.html").exists() or settings.WEB_APP != str(settings.WEB_APP_DIR)):
            return
        binary = Path(binary) if binary else opencode_binary()
        if binary is None and npm and shutil.which("npm"):
            # Server-owned: npm installs the pinned package into the checkout's .tools/.
            subprocess.run(["npm", "install", "--prefix", str(settings.BASE_DIR / ".tools"), "--no-audit",
                            "--no-fund", "--loglevel=error", f"opencode-ai@{settings.OPENCODE_NPM_VERSION}"],
                           check=False, stdout=subprocess.DEVNULL)
            binary = opencode_binary()
        if binary is None:
            raise CommandError("no opencode binary: `npm install --prefix .tools opencode-ai@"
                               f"{settings.OPENCODE_NPM_VERSION}` or set OPENCODE_BIN")
        try:
            info = install(binary=binary, target=target,
                           expect_version=None if any_version else settings.WEB_APP_VERSION)
        except InstallError as error:
            raise CommandError(str(error))
        self.stdout.write(f"web app {info['version']} ({info['files']} files) from {info['source']} → {target}")

"""The live servers' settings in the tests (tests/conftest.py start_server): the real settings, with the
tests' quick PBKDF2 (tests/hashers.py) in place of the stock one."""
from django.conf import global_settings

from server.settings import *  # noqa: F401,F403
from tests.hashers import with_hasher

PASSWORD_HASHERS = with_hasher("tests.hashers.QuickPBKDF2PasswordHasher", global_settings.PASSWORD_HASHERS)

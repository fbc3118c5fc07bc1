"""The test process's password hasher: Django's PBKDF2 (so a live server, with the stock hashers, checks the
passwords of the users a test made), with one salt and the hashes it computed remembered. Hashing a password
takes about 0.3 s of CPU (a million iterations): at one or two users per test, minutes of each CI pass."""
from functools import lru_cache

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class RepeatablePBKDF2PasswordHasher(PBKDF2PasswordHasher):
    def salt(self) -> str:
        return "agentservertests"

    def encode(self, password, salt, iterations=None):
        return _encoded(password, salt, iterations or self.iterations)


@lru_cache(maxsize=256)
def _encoded(password, salt, iterations) -> str:
    return PBKDF2PasswordHasher().encode(password, salt, iterations)

"""The tests' password hashing: Django's PBKDF2 (the same algorithm and format, `pbkdf2_sha256`) at 1,000
iterations instead of Django's million. Checking a password at a million took about 0.3 s of CPU: the live
servers spent a third of their CPU on the sign-ins, wrong passwords and password changes of the browser and
sign-in tests. The test process and its live servers (tests/server_settings.py) both use it; a server of the
real settings (the simulated hosts) checks these hashes as any other, and rehashes them at its own count."""
from functools import lru_cache

from django.contrib.auth.hashers import PBKDF2PasswordHasher

TEST_ITERATIONS = 1000


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = TEST_ITERATIONS


class RepeatablePBKDF2PasswordHasher(QuickPBKDF2PasswordHasher):
    """The test process's: one salt, and the hashes it computed remembered (one or two users a test)."""

    def salt(self) -> str:
        return "agentservertests"

    def encode(self, password, salt, iterations=None):
        return _encoded(password, salt, iterations or self.iterations)


@lru_cache(maxsize=256)
def _encoded(password, salt, iterations) -> str:
    return PBKDF2PasswordHasher().encode(password, salt, iterations)


def with_hasher(hasher: str, hashers: list[str]) -> list[str]:
    """`hashers` with `hasher` first, in place of the stock PBKDF2 one: hashers are looked up by algorithm,
    and the last of a name would win."""
    return [hasher, *(name for name in hashers if not name.endswith(".PBKDF2PasswordHasher"))]

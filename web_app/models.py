from django.conf import settings
from django.db import models


class SignInThrottle(models.Model):
    """Sign-in attempts counted against one key ("user:<name>" or "address:<ip>") in a fixed window."""

    key = models.CharField(max_length=300, unique=True)
    window_started = models.DateTimeField()
    attempts = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.key}: {self.attempts}"


class SingleSignOnIdentity(models.Model):
    """An identity verified by the OpenID Connect provider (issuer and subject), and the user it signs in."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_identity")]

    def __str__(self) -> str:
        return f"{self.issuer} {self.subject} → {self.user}"

"""One Policy row per scope: everyone (no group), or one Django group. Every field is optional: an empty list
or a null means the scope says nothing about it (policy_app/rules.py merges the scopes, the strictest wins)."""
from django.contrib.auth.models import Group
from django.db import models
from django.db.models.functions import Coalesce

from agentserver.db.json_column import JSONField

PERMISSION_ACTIONS = ("allow", "ask", "deny")


class Policy(models.Model):
    group = models.OneToOneField(Group, null=True, blank=True, on_delete=models.CASCADE, related_name="policy",
                                 help_text="Empty: the policy of everyone.")
    allowed_providers = JSONField(default=list, blank=True,
                                  help_text='Provider ids, e.g. ["anthropic", "openai"]. Empty: any provider.')
    allowed_models = JSONField(default=list, blank=True,
                               help_text='"provider/model" patterns, * matches anything, e.g. '
                                         '["anthropic/claude-*"]. Empty: any model.')
    restrict_mcp = models.BooleanField(default=False,
                                       help_text="Only MCP servers on the allowlists below may be added or run.")
    mcp_local_commands = JSONField(default=list, blank=True,
                                   help_text='Local servers: a command line must start with one of these, '
                                             'e.g. ["npx -y @modelcontextprotocol/server-filesystem", "uvx"].')
    mcp_remote_urls = JSONField(default=list, blank=True,
                                help_text='Remote servers: a URL must start with one of these, e.g. '
                                          '["https://mcp.example.com/"].')
    permission_ceilings = JSONField(default=dict, blank=True,
                                    help_text='Permission → the least strict action allowed (allow < ask < deny), '
                                              'e.g. {"bash": "ask", "webfetch": "deny"}.')
    sharing_allowed = models.BooleanField(null=True, blank=True,
                                          help_text="No: sessions may not be shared. Unknown: config decides.")
    default_model = models.CharField(max_length=300, blank=True,
                                     help_text='"provider/model", the model of everyone this applies to.')
    max_steps = models.PositiveIntegerField(null=True, blank=True,
                                            help_text="The most steps (model calls) one agent turn may take.")
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "policies"
        # One policy per scope: everyone's (no group) is scope 0, as NULLs would never collide.
        constraints = [models.UniqueConstraint(Coalesce(models.F("group"), models.Value(0)),
                                               name="policy_one_per_scope")]

    def __str__(self) -> str:
        return scope_name(self.group.name if self.group_id else None)


def scope_name(group_name: str | None) -> str:
    """How errors and the admin name a policy: "policy of everyone", "policy of group 'contractors'"."""
    return "policy of everyone" if group_name is None else f"policy of group '{group_name}'"

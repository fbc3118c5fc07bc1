"""Routes of audit_app: the audit log's one read route, under /api."""
from agentserver.http.api import route
from audit_app.api import audit

original: list = []
v2: list = [
    route("audit", audit.AuditListView, "audit.list"),
]

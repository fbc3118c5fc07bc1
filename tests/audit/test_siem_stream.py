"""With AGENTSERVER_AUDIT_LOG_FILE set, every committed audit record is also written to that file as one JSON
line (for a SIEM to tail), the same record the database holds."""
import json
import time

import httpx

from audit_app.models import AuditRecord


def test_each_record_is_streamed_as_one_json_line(server_factory, alice, tmp_path):
    log_file = tmp_path / "audit.jsonl"
    server = server_factory({"AGENTSERVER_AUDIT_LOG_FILE": str(log_file)})
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=30) as client:
        assert client.get("/session").status_code == 200
        assert client.get("/session").status_code == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (log_file.exists() and log_file.read_text().strip()):
        time.sleep(0.05)
    [line] = log_file.read_text().splitlines()
    streamed = json.loads(line)
    stored = AuditRecord.objects.get(id=streamed["id"])
    assert (streamed["action"], streamed["actor"]["name"], streamed["hash"]) == ("token.first_use", "alice",
                                                                                stored.hash)
    assert alice.token not in line

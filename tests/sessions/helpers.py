"""Helpers for session tests: create sessions through the API, and messages through our own services
(the store's public API has no model-free "create message" route; the runner's noReply prompt is used
where it exists)."""
from __future__ import annotations

from agentserver import ids
from projects_app.models import now_ms


def create_session(persona, directory=None, **body) -> dict:
    params = {"directory": str(directory or persona.repo)}
    response = persona.post("/session", params=params, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def add_message(session_id: str, *, role: str = "user", texts=("hello",), parent_id: str | None = None,
                **extra) -> dict:
    from sessions_app.models import Session
    from sessions_app.store.messages import message_save, part_save

    session = Session.objects.get(id=session_id)
    message_id = ids.ascending("msg")
    info = {"id": message_id, "sessionID": session_id, "role": role, "time": {"created": now_ms()}}
    if role == "user":
        info.update(agent="build", model={"providerID": "fake", "modelID": "fake-model"})
    else:
        info.update(parentID=parent_id, modelID="fake-model", providerID="fake", mode="build", agent="build",
                    path={"cwd": session.directory, "root": session.directory}, cost=0,
                    tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                    time={"created": now_ms(), "completed": now_ms()}, finish="stop")
    info.update(extra)
    message_save(session=session, info=info)
    parts = []
    for text in texts:
        part = {"id": ids.ascending("prt"), "sessionID": session_id, "messageID": message_id, "type": "text",
                "text": text}
        part_save(session=session, part=part)
        parts.append(part)
    return {"info": info, "parts": parts}


def add_turns(session_id: str, count: int) -> list[dict]:
    """`count` user/assistant pairs; returns the messages in creation order."""
    out = []
    for n in range(count):
        user = add_message(session_id, texts=(f"question {n}",))
        out.append(user)
        out.append(add_message(session_id, role="assistant", texts=(f"answer {n}",), parent_id=user["info"]["id"]))
    return out


def post_note(persona, session_id: str, *texts: str) -> dict:
    """A user message through the public API: `POST /session/{id}/message` with noReply (no model runs)."""
    response = persona.post(f"/session/{session_id}/message",
                            json={"noReply": True, "parts": [{"type": "text", "text": t} for t in texts]})
    assert response.status_code == 200, response.text
    return response.json()

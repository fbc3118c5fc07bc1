"""DELETE a message, PATCH/DELETE a part (session.deleteMessage, part.update, part.delete)."""
from rest_framework.response import Response

from agentserver.api import ApiView, id_param
from agentserver.errors import BadRequest
from sessions_app.api.original import session_from_path
from sessions_app.services import message_edit


class MessageDeleteView(ApiView):
    operation_ids = {"DELETE": "session.deleteMessage"}

    def delete(self, request, sessionID: str, messageID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        return Response(message_edit.message_delete(session=session, message_id=message_id))


class PartItemView(ApiView):
    operation_ids = {"PATCH": "part.update", "DELETE": "part.delete"}

    def patch(self, request, sessionID: str, messageID: str, partID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        part_id = id_param(partID, "prt", "part")
        if not isinstance(request.data, dict):
            raise BadRequest("Request body must be a JSON object (a Part)")
        return Response(message_edit.part_update(session=session, message_id=message_id, part_id=part_id,
                                                 part=request.data))

    def delete(self, request, sessionID: str, messageID: str, partID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        part_id = id_param(partID, "prt", "part")
        return Response(message_edit.part_delete(session=session, message_id=message_id, part_id=part_id))
